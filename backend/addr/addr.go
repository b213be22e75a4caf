// Package addr decides trust by the address Herald actually dials, not by
// a name: which hosts are loopback, how a typed address is read, which
// requests may go through a proxy, and a dialer that keeps a loopback name
// on loopback.
package addr

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// WithScheme is raw with "http://" in front when it names no scheme
// ("host:port", "[::1]:port", "127.0.0.1:8642"). Without it net/url reads
// "vm:18791" as scheme "vm" and refuses "127.0.0.1:8642".
func WithScheme(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw != "" && !strings.Contains(raw, "://") {
		return "http://" + raw
	}
	return raw
}

// credentialParams are query parameters that carry a credential: the
// dashboard's WebSocket token and ticket, and the usual spellings of a key
// or password.
var credentialParams = []string{"token", "ticket", "key", "api_key", "apikey", "password"}

// SecretInQuery names the query parameter of the typed address raw that
// holds a credential ("token" in ws://host:9119/api/ws?token=...), or ""
// when none does. Such an address must be refused before it is stored or
// shown: settings and every screen would then hold the secret.
func SecretInQuery(raw string) string {
	u, err := url.Parse(WithScheme(raw))
	if err != nil {
		return ""
	}
	q := u.Query()
	for _, p := range credentialParams {
		for k := range q {
			if strings.EqualFold(k, p) {
				return p
			}
		}
	}
	return ""
}

// Shown is the typed address raw as an error may quote it: cut before its
// query and fragment (a token may sit there), without the scheme Herald
// adds to a bare host:port.
func Shown(raw string) string {
	raw = strings.TrimSpace(raw)
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		return raw[:i] + "…"
	}
	return raw
}

// ErrSecretInQuery is the one-line refusal of an address that carries a
// credential in its query (SecretInQuery).
func ErrSecretInQuery(raw, param string) error {
	return fmt.Errorf("the address %q carries a %s in its ?query: give the address without it and the %s separately (Herald keeps secrets out of settings)", Shown(raw), param, param)
}

// IsLoopbackName reports whether host is "localhost" or a name under
// ".localhost" (RFC 6761). Herald never resolves these: Dial connects them
// to 127.0.0.1 or ::1 itself.
func IsLoopbackName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// IsLoopback reports whether a connection to host stays on this machine:
// a loopback IP literal, or a loopback name (which Dial keeps on
// loopback).
func IsLoopback(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return IsLoopbackName(host)
}

// Proxy is http.ProxyFromEnvironment, except that a loopback target is
// never proxied: a proxy would see its token, and Go's own rule exempts
// only "localhost" and loopback IPs, not "*.localhost".
func Proxy(req *http.Request) (*url.URL, error) {
	if IsLoopback(req.URL.Hostname()) {
		return nil, nil
	}
	return http.ProxyFromEnvironment(req)
}

// DialFunc is net.Dialer.DialContext's shape.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Dial wraps next (nil: a net.Dialer) so that a loopback name is connected
// to 127.0.0.1, then ::1, never looked up in DNS or /etc/hosts, and a
// connection to a loopback host whose peer is not a loopback address is
// closed and refused: what Herald trusts as local is decided by the
// address actually dialled.
func Dial(next DialFunc) DialFunc {
	if next == nil {
		next = (&net.Dialer{}).DialContext
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil || !IsLoopback(host) {
			return next(ctx, network, address)
		}
		targets := []string{address}
		if IsLoopbackName(host) {
			targets = []string{net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("::1", port)}
		}
		var firstErr error
		for _, t := range targets {
			c, err := next(ctx, network, t)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			if !peerIsLoopback(c) {
				c.Close()
				return nil, fmt.Errorf("%s is a loopback address, but the connection reached %s, which is not: refusing to send anything over it", host, c.RemoteAddr())
			}
			return c, nil
		}
		return nil, firstErr
	}
}

func peerIsLoopback(c net.Conn) bool {
	ra := c.RemoteAddr()
	if ra == nil {
		return false
	}
	if ra.Network() == "pipe" {
		return true // net.Pipe in tests: in-process
	}
	h, _, err := net.SplitHostPort(ra.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// DashboardBase turns a Hermes dashboard or gateway URL into the
// dashboard's http(s) base (a gateway and the dashboard's bridge share it): ws://h:p/api/ws?token=x gives http://h:p.
func DashboardBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%q is not a Hermes dashboard address: use http://HOST:PORT or the gateway's ws:// URL", raw)
	}
	switch u.Scheme {
	case "ws", "http":
		u.Scheme = "http"
	case "wss", "https":
		u.Scheme = "https"
	default:
		return nil, fmt.Errorf("%q is not a Hermes dashboard address: use http://HOST:PORT or the gateway's ws:// URL", raw)
	}
	path := strings.TrimSuffix(u.Path, "/")
	path = strings.TrimSuffix(path, "/api/ws")
	return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: path}, nil
}
