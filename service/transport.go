package service

import (
	"net"
	"net/url"
	"strings"
)

// PlainTextHost reports whether credentials sent to rawURL would cross the
// network in clear text: an http:// or ws:// URL whose host is not a
// loopback address (localhost, 127.0.0.0/8, ::1). It returns the host for
// the message. A URL that does not parse is not judged here.
func PlainTextHost(rawURL string) (host string, plain bool) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
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
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return host, false
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return host, false
	}
	return host, true
}

// RedactURL is rawURL for messages: without a user name or password,
// query or fragment, which may carry a token. An unparsable URL is cut at
// the first '@', '?' or '#' the same way.
func RedactURL(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		s := rawURL
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
