package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/herald-desktop/herald/backend/addr"
)

// DefaultPort is the Hermes dashboard's default port.
const DefaultPort = "9119"

// target is a parsed gateway address: the HTTP base for REST calls and the
// WebSocket URL for the channel.
type target struct {
	base *url.URL // http(s)://host:port[/prefix]
	ws   *url.URL // ws(s)://host:port[/prefix]/api/ws
}

// parseTarget accepts http(s)://, ws(s):// or a bare host[:port].
func parseTarget(raw string) (target, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return target{}, fmt.Errorf("no gateway URL given: use e.g. http://127.0.0.1:%s", DefaultPort)
	}
	given := raw // errors quote what the user typed, not what Herald added
	raw = addr.WithScheme(raw)
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return target{}, fmt.Errorf("gateway URL %q is not a URL: %v", addr.Shown(given), err)
	}
	if u.User != nil {
		return target{}, fmt.Errorf("gateway URL must not carry credentials; pass the token or password separately")
	}
	// The dashboard's own WebSocket address carries its session token
	// (/api/ws?token=...). Taken as typed it would be kept in settings and
	// shown wherever the address is; Herald keeps tokens apart.
	if p := addr.SecretInQuery(given); p != "" {
		return target{}, addr.ErrSecretInQuery(given, p)
	}
	var httpScheme, wsScheme string
	switch strings.ToLower(u.Scheme) {
	case "http", "ws":
		httpScheme, wsScheme = "http", "ws"
	case "https", "wss":
		httpScheme, wsScheme = "https", "wss"
	default:
		return target{}, fmt.Errorf("gateway URL scheme %q is not supported: use http, https, ws or wss", u.Scheme)
	}
	if u.Hostname() == "" {
		return target{}, fmt.Errorf("gateway URL %q has no host", addr.Shown(given))
	}
	host := u.Host
	if u.Port() == "" {
		if httpScheme == "https" {
			host = net.JoinHostPort(u.Hostname(), "443")
		} else {
			host = net.JoinHostPort(u.Hostname(), DefaultPort)
		}
	}
	path := strings.TrimRight(u.Path, "/")
	path = strings.TrimRight(strings.TrimSuffix(path, "/api/ws"), "/")
	base := &url.URL{Scheme: httpScheme, Host: host, Path: path}
	ws := &url.URL{Scheme: wsScheme, Host: host, Path: path + "/api/ws"}
	// The host must survive a round trip: net/url accepts some hosts it
	// cannot print back (e.g. "::"), which would only fail at dial time.
	if _, err := url.Parse(base.String()); err != nil {
		return target{}, fmt.Errorf("gateway URL %q has an invalid host %q", addr.Shown(given), u.Host)
	}
	return target{base: base, ws: ws}, nil
}

// endpoint returns the HTTP URL of a REST path on the gateway.
func (t target) endpoint(p string) string {
	u := *t.base
	u.Path = strings.TrimSuffix(u.Path, "/") + p
	return u.String()
}

// origin is the base URL's own origin, the only Origin Herald may send.
func (t target) origin() string {
	return (&url.URL{Scheme: t.base.Scheme, Host: t.base.Host}).String()
}
