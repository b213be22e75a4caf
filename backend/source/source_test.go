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
	"testing"
)

func TestCheckChoice(t *testing.T) {
	t.Parallel()
	for _, c := range Choices() {
		if err := CheckChoice(c); err != nil {
			t.Errorf("CheckChoice(%q) = %v", c, err)
		}
	}
	for _, c := range []string{"", "yes", "Once", "allow"} {
		err := CheckChoice(c)
		var ce *ChoiceError
		if !errors.As(err, &ce) || ce.Choice != c || len(ce.Allowed) != 4 {
			t.Errorf("CheckChoice(%q) = %v, want a ChoiceError listing the four choices", c, err)
		}
	}
	// Choices is a fresh slice: a caller cannot change the one list.
	Choices()[0] = "always"
	if Choices()[0] != ChoiceOnce {
		t.Fatal("Choices shares its backing array")
	}
}

func TestDescribeNetErr(t *testing.T) {
	t.Parallel()
	p := Peer{Name: "the test server", Reach: "check the test address"}
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	tests := []struct {
		name   string
		err    error
		want   []string
		dialed bool
	}{
		{"dial", &url.Error{Op: "Get", URL: "http://h/?token=secret", Err: dial}, []string{"cannot reach the test server at h:1", "connection refused", "check the test address"}, true},
		{"tls", x509.UnknownAuthorityError{}, []string{"TLS certificate of h:1 is not trusted", "add the test server's CA certificate", "--ca-file FILE", "SSL_CERT_FILE", "gateway's settings"}, false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), []string{"h:1 did not answer in time: check the test address"}, false},
		{"https to http", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, []string{"the test server at h:1 answers plain http, not https: use an http:// address"}, false},
		{"https to http (net/http)", &url.Error{Op: "Get", URL: "https://h/?token=secret", Err: errors.New("http: server gave HTTP response to HTTPS client")}, []string{"the test server at h:1 answers plain http, not https", "SSH tunnel"}, false},
		{"other", errors.New("EOF"), []string{"talking to the test server at h:1 failed: EOF"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := p.DescribeNetErr("h:1", tt.err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("%q shows the URL's token", err)
			}
			var de *DialError
			if errors.As(err, &de) != tt.dialed {
				t.Errorf("DialError = %v, want %v", !tt.dialed, tt.dialed)
			}
		})
	}
	if err := p.DescribeNetErr("h:1", context.Canceled); err != context.Canceled {
		t.Errorf("cancelled: %v, want context.Canceled as is", err)
	}
}
