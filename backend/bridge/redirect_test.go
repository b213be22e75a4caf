package bridge_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/bridge"
	"github.com/herald-desktop/herald/backend/bridge/bridgetest"
	"github.com/herald-desktop/herald/backend/netfault"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestRedirectIsRefused: a https dashboard that answers the bridge's poll
// with 307 to plain http on another listener is not a Herald bridge:
// nothing is sent there (not the poll, not its X-Hermes-Session-Token),
// the status says so for people, and the source waits for the user
// (config_error), not "connected" and not retrying every few seconds.
// The driver's Check says the same.
func TestRedirectIsRefused(t *testing.T) {
	t.Parallel()
	for _, code := range []int{301, 302, 307, 308} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			rd, first := netfault.NewRedirect(t, code, true)
			pool := x509.NewCertPool()
			pool.AddCert(first.Certificate())
			s := newSink()
			c, err := bridge.New(bridge.Config{Name: "r", URL: rd.URL, Token: "secret-token", RootCAs: pool,
				OnEvent: func(ev wire.Event) { s.events <- ev }, OnStatus: func(st source.Status) { s.status <- st }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = c.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			st := s.state(t, source.StateConfigError)
			for _, want := range []string{"redirect (HTTP " + strconv.Itoa(code) + ")", "does not serve a Herald bridge", "sent nothing to the address it pointed to"} {
				if !strings.Contains(st.Err, want) {
					t.Errorf("status %q does not say %q", st.Err, want)
				}
			}
			if strings.Contains(st.Err, "127.0.0.2") || strings.Contains(st.Err, "secret") {
				t.Errorf("status %q quotes where the redirect pointed, or the token", st.Err)
			}
			d, _ := source.Lookup("bridge")
			if r := d.Check(context.Background(), source.Config{URL: rd.URL, RootCAs: pool, Secrets: map[string]string{"token": "secret-token"}}); r.OK || !strings.Contains(r.Message, "does not serve a Herald bridge") {
				t.Errorf("check: %+v", r)
			}
			if hits := rd.Hits(); len(hits) != 0 {
				t.Fatalf("%d requests reached the second listener (first: %s %s, token %q)", len(hits), hits[0].Method, hits[0].URL, hits[0].Header.Get("X-Hermes-Session-Token"))
			}
			if rd.Seen() < 2 {
				t.Fatalf("the redirecting server saw %d requests", rd.Seen())
			}
		})
	}
}

// TestRedirectedAnswerIsNotSent: an answer posted to a route that now
// redirects it to plain http on another listener is refused before
// anything goes there: not sent, said so, not an unknown outcome.
func TestRedirectedAnswerIsNotSent(t *testing.T) {
	t.Parallel()
	rd, _ := netfault.NewRedirect(t, 307, false)
	f := bridgetest.New("tok")
	url := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Redirect(w, r, rd.Other+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			return
		}
		f.ServeHTTP(w, r)
	}))
	c, s := start(t, url, "tok", "answer-redirect")
	s.state(t, source.StateConnected)
	id, _ := f.Ask(bridgetest.Ask{Command: "rm -rf build"})
	s.event(t, wire.ApprovalServerRequest)
	err := c.RespondServerRequest(context.Background(), id, "once")
	if err == nil || errors.Is(err, wire.ErrOutcomeUnknown) || !source.IsRedirect(err) || !strings.Contains(err.Error(), "does not serve a Herald bridge") {
		t.Fatalf("answer through a redirect: %v", err)
	}
	if hits := rd.Hits(); len(hits) != 0 {
		t.Fatalf("%d requests reached the second listener", len(hits))
	}
	if f.Answers() != 0 {
		t.Fatal("the route took an answer")
	}
}
