package apiserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestAnswerOutcomeAfterTheWrite: on the one answer path, an approval
// answer written to the API server and not confirmed by a reply Herald
// understands is an unknown outcome (wire.ErrOutcomeUnknown), and it is
// never sent again: a dropped link, a proxy's 502 or 504, a 500, a reply
// that does not decode. A reply that says the server did not act (503,
// 429, a 4xx) is not unknown; 503 and 429 are retried. A bool resolved is
// read as a count.
func TestAnswerOutcomeAfterTheWrite(t *testing.T) {
	t.Parallel()
	drop := func(w http.ResponseWriter) {
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
	}
	tests := []struct {
		name    string
		answer  func(w http.ResponseWriter, n int32) // n: this answer's number, from 1
		unknown bool
		ok      bool
		posts   int32
	}{
		{"dropped, no reply", func(w http.ResponseWriter, _ int32) { drop(w) }, true, false, 1},
		{"proxy timeout 504", func(w http.ResponseWriter, _ int32) { w.WriteHeader(http.StatusGatewayTimeout) }, true, false, 1},
		{"proxy 502", func(w http.ResponseWriter, _ int32) { w.WriteHeader(http.StatusBadGateway) }, true, false, 1},
		{"500", func(w http.ResponseWriter, _ int32) { w.WriteHeader(http.StatusInternalServerError) }, true, false, 1},
		{"200 not JSON", func(w http.ResponseWriter, _ int32) { w.Write([]byte("<html>ok</html>")) }, true, false, 1},
		{"200 resolved not a count", func(w http.ResponseWriter, _ int32) { w.Write([]byte(`{"choice": "once", "resolved": "yes"}`)) }, true, false, 1},
		{"200 resolved a bool", func(w http.ResponseWriter, _ int32) { w.Write([]byte(`{"choice": "once", "resolved": true}`)) }, false, true, 1},
		{"503 then taken", func(w http.ResponseWriter, n int32) {
			if n == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.Write([]byte(`{"choice": "once", "resolved": 1}`))
		}, false, true, 2},
		{"409 not pending", func(w http.ResponseWriter, _ int32) {
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error": {"message": "no approval pending", "code": "approval_not_pending"}}`))
		}, false, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var posts atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/approval") {
					tt.answer(w, posts.Add(1))
					return
				}
				http.NotFound(w, r)
			}))
			t.Cleanup(srv.Close)
			clk := clock.NewFake(epoch)
			c, err := apiserver.New(apiserver.Config{URL: srv.URL, Key: "key-0123456789", Clock: clk, Rand: func() float64 { return 0 }})
			if err != nil {
				t.Fatal(err)
			}
			err = c.RespondApproval(context.Background(), "run-1", "once", "")
			switch {
			case tt.ok && err != nil:
				t.Fatalf("answer: %v", err)
			case !tt.ok && err == nil:
				t.Fatal("no error")
			case errors.Is(err, wire.ErrOutcomeUnknown) != tt.unknown:
				t.Fatalf("unknown outcome %v, want %v: %v", errors.Is(err, wire.ErrOutcomeUnknown), tt.unknown, err)
			}
			if tt.unknown && !strings.Contains(err.Error(), "whether it took effect is unknown") {
				t.Fatalf("the error does not say the outcome is unknown: %v", err)
			}
			if n := posts.Load(); n != tt.posts {
				t.Fatalf("the answer was posted %d times, want %d", n, tt.posts)
			}
		})
	}
}
