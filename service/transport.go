package service

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/herald-desktop/herald/backend/addr"
)

// ParseURL reads a gateway or API server address as a user types it:
// a URL, or "host:port" / "[::1]:port" / "127.0.0.1:port" without a scheme,
// which is http:// (as the gateway and API server clients read it).
func ParseURL(rawURL string) (*url.URL, error) {
	return url.Parse(addr.WithScheme(rawURL))
}

// PlainTextHost reports whether credentials sent to rawURL would cross the
// network in clear text: an http:// or ws:// URL (or a bare host:port,
// which is http) whose host is not loopback by address: a loopback IP, or
// localhost / *.localhost, which Herald dials on loopback itself and never
// proxies (backend/addr). It returns the host for the message. A URL that
// does not parse is not judged here.
func PlainTextHost(rawURL string) (host string, plain bool) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "ws":
	default:
		return "", false
	}
	host = u.Hostname()
	if host == "" {
		return "", false
	}
	return host, !addr.IsLoopback(host)
}

// RedactURL is rawURL for messages: without a user name or password,
// query or fragment, which may carry a token. An unparsable URL is cut at
// the first '@', '?' or '#' the same way.
func RedactURL(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	// Without "://" it is shown as typed (cut as below): net/url reads
	// "not a url" as a path and would print it as not%20a%20url.
	if err != nil || !strings.Contains(rawURL, "://") {
		s := strings.TrimSpace(rawURL)
		if i := strings.Index(s, "://"); i >= 0 {
			rest := s[i+3:]
			if at := strings.LastIndex(rest, "@"); at >= 0 {
				rest = "…@" + rest[at+1:]
			}
			s = s[:i+3] + rest
		} else if at := strings.LastIndex(s, "@"); at >= 0 {
			s = "…@" + s[at+1:]
		}
		if i := strings.IndexAny(s, "?#"); i >= 0 {
			s = s[:i] + "?…"
		}
		return s
	}
	hidden := u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != ""
	u.User, u.RawQuery, u.Fragment, u.ForceQuery = nil, "", "", false
	s := u.String()
	if hidden {
		s += " (credentials and query not shown)"
	}
	return s
}

// ReadCA reads the PEM CA certificates that replace the system roots for
// a gateway (the window's CA file setting, the CLI's --ca-file).
func ReadCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the CA file %s: %v", path, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}
