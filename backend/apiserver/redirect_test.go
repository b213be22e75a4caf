package apiserver_test

import (
	"context"
	"crypto/x509"
	"errors"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/netfault"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestRedirectIsRefused: an https API server address that answers 307 to
// plain http on another listener gets nothing followed there, neither the
// probe nor an approval answer (the one HTTP client,
// source.NewHTTPClient, stops at the redirect); the status and the
// answer's error say, for people, that the address redirects, and the
// source waits for the user (config_error). An answer refused that way
// was not acted on: not an unknown outcome.
func TestRedirectIsRefused(t *testing.T) {
	t.Parallel()
	rd, first := netfault.NewRedirect(t, 307, true)
	pool := x509.NewCertPool()
	pool.AddCert(first.Certificate())
	rec := newRecorder()
	const key = "secret-key-0123456789"
	c, err := apiserver.New(apiserver.Config{URL: rd.URL, Key: key, RootCAs: pool, Clock: clock.NewFake(epoch), OnStatus: rec.onStatus})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	st := rec.waitState(t, source.StateConfigError)
	says := func(what, text string) {
		t.Helper()
		for _, want := range []string{"redirect (HTTP 307)", "does not serve a Hermes API server", "sent nothing to the address it pointed to"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s %q does not say %q", what, text, want)
			}
		}
		if strings.Contains(text, "127.0.0.2") || strings.Contains(text, key) {
			t.Errorf("%s %q quotes where the redirect pointed, or the key", what, text)
		}
	}
	says("status", st.Err)
	err = c.RespondApproval(context.Background(), "run-1", "once", "")
	if err == nil || errors.Is(err, wire.ErrOutcomeUnknown) || !source.IsRedirect(err) {
		t.Fatalf("answer through a redirect: %v", err)
	}
	says("answer error", err.Error())
	if rd.Seen() < 2 {
		t.Fatalf("the redirecting server saw %d requests", rd.Seen())
	}
	if hits := rd.Hits(); len(hits) != 0 {
		t.Fatalf("%d requests reached the second listener (first: %s %s)", len(hits), hits[0].Method, hits[0].URL)
	}
}
