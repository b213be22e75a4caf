package gateway

import (
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/wire"
)

// waitBeat waits until the heartbeat has acted on a wake-up at the fake
// clock's current time and any ping or session listing it sent has its
// answer.
func (h *harness) waitBeat(t testing.TB) {
	t.Helper()
	at := h.clk.Now().UnixNano()
	h.rec.waitFor(t, "the heartbeat", func([]wire.Event, []Status) bool {
		cn := h.client.current()
		return cn != nil && h.client.beat.Load() >= at && !cn.pinging.Load() && !h.client.listing()
	})
}

// TestIdleWakeupsPerMinute: one connected, idle gateway wakes Herald only
// for its heartbeat, at most 4 times a minute: the timer sleeps until the
// link has been quiet for PingInterval, pings, and sleeps again. The fake
// clock counts every timer firing, so the figure is exact.
func TestIdleWakeupsPerMinute(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d})
			defer srv.Close()
			h := start(t, srv, nil)
			h.rec.waitState(t, StateConnected)
			// The session listing sent at connect is answered first.
			h.rec.waitFor(t, "the first session listing", func([]wire.Event, []Status) bool {
				return !h.client.LastDiscovery().At.IsZero() && !h.client.listing()
			})
			h.clk.BlockUntil(1)
			base := h.clk.Fired()
			pings := count(srv.Methods(), "gateway.ping")
			// One minute in 1 s steps; after each wake-up wait for the ping's
			// reply, so that every step is fully handled before the next.
			for s := 0; s < 60; s++ {
				before := h.clk.Fired()
				h.clk.Advance(time.Second)
				if h.clk.Fired() > before {
					h.waitBeat(t)
				}
			}
			fires := h.clk.Fired() - base
			pinged := count(srv.Methods(), "gateway.ping") - pings
			t.Logf("idle wake-ups per minute: %d (gateway.ping sent %d times)", fires, pinged)
			if fires > 4 {
				t.Fatalf("an idle minute woke Herald %d times, want at most 4", fires)
			}
			if fires < 4 {
				t.Fatalf("an idle minute woke Herald %d times: the link is no longer checked every %s", fires, PingInterval)
			}
			want := 4
			if d == hermestest.Legacy {
				want = 1 // answered -32601 once; WebSocket pings since
			}
			if pinged != want {
				t.Fatalf("gateway.ping sent %d times in an idle minute, want %d", pinged, want)
			}
			if st := h.client.Status(); st.State != StateConnected || srv.Dials() != 1 {
				t.Fatalf("the idle link dropped: %s %s (%d dials)", st.State, st.Err, srv.Dials())
			}
		})
	}
}
