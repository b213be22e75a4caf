package source

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// TestAnswerOutcome: the one rule of every transport's answer path.
func TestAnswerOutcome(t *testing.T) {
	t.Parallel()
	p := Peer{Name: "the gateway"}
	lost := errors.New("connection reset by peer")
	already := fmt.Errorf("sending failed: %w", wire.ErrOutcomeUnknown)
	redirect := p.Redirected("h:1", 307)
	tests := []struct {
		name                string
		written, understood bool
		err                 error
		unknown             bool
	}{
		{"not written", false, false, lost, false},
		{"written, reply understood", true, true, lost, false},
		{"written, no reply", true, false, lost, true},
		{"already unknown", false, false, already, true},
		{"redirect refused", true, false, redirect, false},
		{"no error", true, false, nil, false},
	}
	for _, tt := range tests {
		got := p.AnswerOutcome(tt.written, tt.understood, tt.err)
		if errors.Is(got, wire.ErrOutcomeUnknown) != tt.unknown || (tt.err == nil) != (got == nil) {
			t.Errorf("%s: %v", tt.name, got)
		}
		if tt.unknown && tt.err == lost && !errors.Is(got, lost) {
			t.Errorf("%s: the cause is lost: %v", tt.name, got)
		}
	}
	for code, want := range map[int]bool{200: false, 307: true, 400: true, 401: true, 409: true, 429: true, 500: false, 502: false, 503: true, 504: false} {
		if NotActed(code) != want {
			t.Errorf("NotActed(%d) = %v", code, !want)
		}
	}
}

// TestTraceWrites: a request is counted as written once its headers went
// out, not when the connection could not be made; a retry starts afresh.
func TestTraceWrites(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	hc := NewHTTPClient(HTTPOptions{})
	var w Writes
	ctx := TraceWrites(context.Background(), &w)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !w.Wrote() {
		t.Fatal("a request that was sent is not counted as written")
	}
	ResetWrites(ctx)
	srv.Close()
	hc.CloseIdleConnections() // a new connection is dialled, and refused
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	if _, err := hc.Do(req); err == nil || w.Wrote() {
		t.Fatalf("a request to nothing: %v, written %v", err, w.Wrote())
	}
}

// TestNoRedirects: the one HTTP client construction, and a client a
// caller supplied, stop at a redirect; nothing reaches the address it
// names.
func TestNoRedirects(t *testing.T) {
	t.Parallel()
	var reached atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Store(true) }))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	for name, hc := range map[string]*http.Client{
		"built":    NewHTTPClient(HTTPOptions{}),
		"supplied": WithoutRedirects(&http.Client{}),
	} {
		req, _ := http.NewRequest(http.MethodGet, first.URL, nil)
		req.Header.Set("X-Hermes-Session-Token", "secret")
		_, err := hc.Do(req)
		var re *RedirectError
		if !errors.As(err, &re) || re.Status != 307 || !IsRedirect(err) {
			t.Errorf("%s: %v", name, err)
		}
		d := Peer{Name: "the Hermes dashboard", Is: "a Herald bridge"}.DescribeNetErr("h:1", err)
		if !IsRedirect(d) || d.Error() != (Peer{Name: "the Hermes dashboard", Is: "a Herald bridge"}).RedirectText("h:1", 307) {
			t.Errorf("%s: described as %v", name, d)
		}
	}
	if reached.Load() {
		t.Fatal("a request followed the redirect")
	}
}
