package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Peer says, for people, what a transport talks to and how to reach it.
type Peer struct {
	// Name is what the server is called in messages ("the gateway").
	Name string
	// Reach is the advice when it cannot be reached ("check the address
	// and that Hermes is running").
	Reach string
	// Is names what the address should serve ("a Herald bridge"), for
	// the refusal of a redirect (default: Name).
	Is string
}

// DescribeNetErr turns a transport error on the way to host into advice.
// It never includes request headers or URLs, so no credential can leak
// through it. A dial failure is a *DialError (the request never left, so
// any request is safe to retry); a cancelled context is returned as is.
func (p Peer) DescribeNetErr(host string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var redirect *RedirectError
	var certErr *tls.CertificateVerificationError
	var unk x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &redirect):
		return &RedirectedError{Text: p.RedirectText(host, redirect.Status), Cause: redirect}
	case errors.As(err, &certErr), errors.As(err, &unk), errors.As(err, &hostErr):
		return fmt.Errorf("the TLS certificate of %s is not trusted (%v): add %s's CA certificate (the window: \"CA certificate\" in the gateway's settings; the command line: --ca-file FILE, or SSL_CERT_FILE=FILE)", host, err, p.Name)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s did not answer in time: %s: %w", host, p.Reach, err)
	case plainHTTP(err):
		return fmt.Errorf("%s at %s answers plain http, not https: use an http:// address (on this machine or through an SSH tunnel), or put TLS in front of Hermes", p.Name, host)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return &DialError{Peer: p, Host: host, Err: op.Err}
	}
	return fmt.Errorf("talking to %s at %s failed: %w", p.Name, host, err)
}

// plainHTTP reports a TLS handshake answered by a plain-HTTP server: the
// address says https:// (or wss://) and the server does not speak TLS.
// net/http reports it in words of its own (no type to match).
func plainHTTP(err error) bool {
	var rh tls.RecordHeaderError
	return errors.As(err, &rh) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}

// HTTPSOnly reports an HTTP 400 whose body says the server wanted TLS
// (Go's "Client sent an HTTP request to an HTTPS server.", nginx's "The
// plain HTTP request was sent to HTTPS port"): the address says http://
// and the server speaks https.
func HTTPSOnly(status int, body string) bool {
	return status == 400 && strings.Contains(strings.ToLower(body), "https")
}

// HTTPSOnlyText is the advice for HTTPSOnly: what happened and what to do.
func (p Peer) HTTPSOnlyText(host string) string {
	return fmt.Sprintf("%s at %s answers https only: give the address as https://%s", p.Name, host, host)
}

// DialError means a request never reached the server.
type DialError struct {
	Peer Peer
	Host string
	Err  error
}

func (e *DialError) Error() string {
	return fmt.Sprintf("cannot reach %s at %s (%v): %s", e.Peer.Name, e.Host, e.Err, e.Peer.Reach)
}

func (e *DialError) Unwrap() error { return e.Err }
