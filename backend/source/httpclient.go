package source

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/herald-desktop/herald/backend/addr"
)

// HTTPOptions are what a transport may choose about its HTTP client. What
// it may not choose is fixed by NewHTTPClient: no redirects, TLS 1.2 and
// verification on, proxies only where backend/addr allows them, and
// loopback names kept on loopback.
type HTTPOptions struct {
	// RootCAs, when set, replaces the system roots for https.
	RootCAs *x509.CertPool
	// DialContext, when set, replaces net.Dialer (tests put a chaos proxy
	// in the path with it). It is wrapped with addr.Dial either way.
	DialContext addr.DialFunc
	// Jar keeps cookies (the gateway's gated sign-in).
	Jar http.CookieJar
	// Timeout bounds a whole request, body included (0: none, for
	// streams and long polls).
	Timeout time.Duration
	// ResponseHeaderTimeout bounds the wait for an answer's headers
	// after the request was written (0: none).
	ResponseHeaderTimeout time.Duration
	// Transport, when set, replaces the transport built from the fields
	// above (tests that lose replies); the client around it still
	// refuses redirects.
	Transport http.RoundTripper
}

// NewHTTPClient is the one construction of an HTTP client that every
// transport uses, for every request it makes to a server. It never
// follows a redirect: a redirect would re-send the request, its
// credentials included, to wherever the answer points (plain http on
// another host as well), so the client stops at the 3xx and the request
// fails with a *RedirectError (Peer.DescribeNetErr says it for people).
// Nothing is sent to the address the redirect names.
func NewHTTPClient(o HTTPOptions) *http.Client {
	rt := o.Transport
	if rt == nil {
		rt = NewHTTPTransport(o)
	}
	return &http.Client{Transport: rt, Jar: o.Jar, Timeout: o.Timeout, CheckRedirect: RefuseRedirect}
}

// NewHTTPTransport is the transport NewHTTPClient builds: a transport
// that opens connections of its own (a WebSocket dialer) takes its
// DialContext, TLSClientConfig and Proxy from it.
func NewHTTPTransport(o HTTPOptions) *http.Transport {
	dial := o.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	return &http.Transport{
		// A loopback name stays on loopback; see addr.Dial.
		DialContext:           addr.Dial(dial),
		TLSClientConfig:       &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12},
		Proxy:                 addr.Proxy,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: o.ResponseHeaderTimeout,
	}
}

// WithoutRedirects is hc with redirects refused, for a client a caller
// supplied (tests): the property holds whoever built the client.
func WithoutRedirects(hc *http.Client) *http.Client {
	c := *hc
	c.CheckRedirect = RefuseRedirect
	return &c
}

// RefuseRedirect is the CheckRedirect of every client: it stops before the
// redirected request is sent.
func RefuseRedirect(req *http.Request, via []*http.Request) error {
	e := &RedirectError{}
	if req.Response != nil {
		e.Status = req.Response.StatusCode
	}
	if req.URL != nil {
		e.To = req.URL.Scheme + "://" + req.URL.Host
	}
	return e
}

// RedirectError is a request that the server answered with a redirect,
// which Herald does not follow. To is the scheme and host it pointed to
// (server text: for logs, never for surfaces).
type RedirectError struct {
	Status int
	To     string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the server answered with a redirect (HTTP %d), which Herald does not follow", e.Status)
}

// IsRedirect reports whether err is a refused redirect.
func IsRedirect(err error) bool {
	var re *RedirectError
	return errors.As(err, &re)
}

// RedirectStatus reports whether an HTTP status is a redirect (a
// WebSocket dialer does not follow them either, and says so with the
// status alone).
func RedirectStatus(code int) bool { return code/100 == 3 && code != http.StatusNotModified }

// RedirectText says, for people, that host answered with a redirect: what
// happened and what to do. It never names where the redirect pointed
// (server text, and possibly a trap).
func (p Peer) RedirectText(host string, status int) string {
	what := p.Is
	if what == "" {
		what = p.Name
	}
	return fmt.Sprintf("%s at %s answered with a redirect (HTTP %d), so this address does not serve %s: Herald does not follow redirects and sent nothing to the address it pointed to; give Herald the address Hermes itself serves (a proxy in front of it may be redirecting)", p.Name, host, status, what)
}

// Redirected is the error of a request that host answered with a
// redirect (status): RedirectText, matching IsRedirect. A transport
// returns it for a 3xx that reached it (one without a Location, which
// the client hands back instead of refusing).
func (p Peer) Redirected(host string, status int) error {
	return &RedirectedError{Text: p.RedirectText(host, status), Cause: &RedirectError{Status: status}}
}

// RedirectedError is a refused redirect described for people (see
// Peer.RedirectText). It stays a *RedirectError underneath, so
// IsRedirect holds.
type RedirectedError struct {
	Text  string
	Cause *RedirectError
}

func (e *RedirectedError) Error() string { return e.Text }

// Unwrap returns the redirect.
func (e *RedirectedError) Unwrap() error { return e.Cause }
