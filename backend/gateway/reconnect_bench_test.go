package gateway

import (
	"sort"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// BenchmarkReconnectResume measures a gateway kick (abrupt TCP close) to
// the client being back in StateConnected with its session re-attached on
// the gateway, over real loopback WebSockets. Backoff waits are skipped by
// the harness's fake clock, so this is the reconnect work itself: dial,
// handshake, negotiate, session.resume and replay.
func BenchmarkReconnectResume(b *testing.B) {
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := start(b, srv, nil)
	defer h.stop()
	h.rec.waitState(b, source.StateConnected)
	ref, err := h.client.CreateSession(ctxT(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	// The stored row comes with the first prompt; only then does the
	// session outlive its connection.
	if err := h.client.Call(ctxT(b), "prompt.submit", map[string]any{"session_id": ref.ID, "text": "hello"}, nil); err != nil {
		b.Fatal(err)
	}
	h.rec.waitKind(b, wire.MessageComplete, 1)
	attached := func() bool {
		for _, s := range srv.Sessions() {
			if s.StoredID == ref.StoredID {
				return s.Attached
			}
		}
		return false
	}
	waitServer(b, srv, "attached", attached)
	var lat []time.Duration
	for b.Loop() {
		// Forget the history, so waiting does not copy an ever longer one.
		h.rec.mu.Lock()
		h.rec.events, h.rec.statuses = nil, nil
		h.rec.mu.Unlock()
		m := h.rec.mark()
		t0 := time.Now()
		srv.Kick()
		h.rec.waitReconnected(b, m)
		waitServer(b, srv, "re-attached", attached)
		lat = append(lat, time.Since(t0))
	}
	if got := srv.Dials(); got < len(lat)+1 {
		b.Fatalf("%d dials for %d reconnects", got, len(lat))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
