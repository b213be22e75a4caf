package apiserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/hermespeer"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// neverConnected fails when any recorded status says "connected".
func neverConnected(t *testing.T, rec *recorder) {
	t.Helper()
	_, sts := rec.snapshot()
	for i, s := range sts {
		if s.State == source.StateConnected {
			t.Fatalf("status %d of %d is connected with a refused key: %+v", i+1, len(sts), s)
		}
	}
}

// runClient runs a client with key against url until the test ends.
func runClient(t *testing.T, url, key string) (*apiserver.Client, *recorder) {
	t.Helper()
	rec := newRecorder()
	c, err := apiserver.New(apiserver.Config{URL: url, Key: key, Clock: clock.NewFake(epoch), OnStatus: rec.onStatus})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return c, rec
}

// TestRefusedKeyIsNeverConnected: the keyless GET /health answering 200
// never makes a refused key "connected", on a server without
// /v1/capabilities either (there GET /v1/models checks the key), and a
// reconnect with the same wrong key stays refused.
func TestRefusedKeyIsNeverConnected(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/health":
			w.Write([]byte(`{"status": "ok", "platform": "hermes-agent", "version": "0.17.0"}`))
		case r.URL.Path == "/v1/capabilities":
			http.NotFound(w, r) // an older server
		case r.Header.Get("Authorization") != "Bearer right-key-0123456789":
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": "invalid_api_key"}}`))
		case r.URL.Path == "/v1/models":
			w.Write([]byte(`{"object": "list", "data": []}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, rec := runClient(t, srv.URL, "wrong-key-0123456789")
	rec.waitState(t, source.StateAuthFailed)
	// A probe from elsewhere (the window's "test connection"): its keyless
	// /health succeeds, its keyed call is refused.
	if _, err := c.Probe(context.Background()); !errors.Is(err, apiserver.ErrUnauthorized) {
		t.Fatalf("probe with a wrong key: %v", err)
	}
	neverConnected(t, rec)
	c.ReconnectNow()
	rec.waitFor(t, "a second refusal", func(_ []wire.Event, sts []apiserver.Status) bool {
		n := 0
		for _, s := range sts {
			if s.State == source.StateAuthFailed {
				n++
			}
		}
		return n >= 2
	})
	neverConnected(t, rec)
	c.SetKey("right-key-0123456789")
	rec.waitState(t, source.StateConnected)
}

// TestRefusedKeyRealServer: the same against the real Hermes API server.
func TestRefusedKeyRealServer(t *testing.T) {
	t.Parallel()
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := hermespeer.Start(t, hermespeer.API, v)
			c, rec := runClient(t, p.URL, "wrong-key-0123456789abcdef")
			rec.waitState(t, source.StateAuthFailed)
			neverConnected(t, rec)
			c.SetKey(p.Secret)
			rec.waitState(t, source.StateConnected)
		})
	}
}
