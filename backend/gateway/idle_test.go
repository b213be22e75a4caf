package gateway

import (
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// waitBeat waits until the heartbeat has acted on a wake-up at the fake
// clock's current time and any ping or session listing it sent has its
// answer.
func (h *harness) waitBeat(t testing.TB) {
	t.Helper()
	at := h.clk.Now().UnixNano()
	h.rec.waitFor(t, "the heartbeat", func([]wire.Event, []source.Status) bool {
		cn := h.client.current()
		return cn != nil && h.client.beat.Load() >= at && !cn.pinging.Load() && !h.client.listing()
	})
}

// waitRearmed waits, after a wake-up that started a session listing,
// until the listing has ended and the heartbeat has re-armed for the next
// one (the listing's end wakes it once more at the same clock time).
func (h *harness) waitRearmed(t testing.TB, polls int64) {
	t.Helper()
	now := h.clk.Now()
	h.client.mu.Lock()
	listed := h.client.disc.lastPoll.Equal(now)
	h.client.mu.Unlock()
	if !listed {
		return
	}
	h.rec.waitFor(t, "the heartbeat re-armed after the listing", func([]wire.Event, []source.Status) bool {
		return h.client.polls.Load() > polls && h.client.beats.Load() > h.client.polledBeats.Load()
	})
}

// TestIdleWakeupsPerMinute: one connected, idle gateway wakes Herald
// once per session listing, every DiscoveryInterval (30 times a minute),
// and never more: the listings' answers keep the link checked, so no
// ping is needed. The fake clock counts every timer firing, so the
// figure is exact (BENCHMARKS.md).
func TestIdleWakeupsPerMinute(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d})
			defer srv.Close()
			h := start(t, srv, nil)
			h.rec.waitState(t, source.StateConnected)
			// The session listing sent at connect is answered first.
			h.rec.waitFor(t, "the first session listing", func([]wire.Event, []source.Status) bool {
				return !h.client.LastDiscovery().At.IsZero() && !h.client.listing()
			})
			h.rec.waitFor(t, "the heartbeat re-armed after it", func([]wire.Event, []source.Status) bool {
				return h.client.polls.Load() > 0 && h.client.beats.Load() > h.client.polledBeats.Load()
			})
			h.clk.BlockUntil(1)
			base := h.clk.Fired()
			pings := count(srv.Methods(), "gateway.ping")
			lists := count(srv.Methods(), "session.active_list")
			// One minute in 1 s steps; after each wake-up wait for the
			// listing's answer, so that every step is fully handled
			// before the next.
			for s := 0; s < 60; s++ {
				before, polls := h.clk.Fired(), h.client.polls.Load()
				h.clk.Advance(time.Second)
				if h.clk.Fired() > before {
					h.waitBeat(t)
					h.waitRearmed(t, polls)
				}
			}
			fires := h.clk.Fired() - base
			pinged := count(srv.Methods(), "gateway.ping") - pings
			listed := count(srv.Methods(), "session.active_list") - lists
			want := int64(time.Minute / DiscoveryInterval)
			t.Logf("idle wake-ups per minute: %d (%d listings, gateway.ping sent %d times)", fires, listed, pinged)
			if fires != want || int64(listed) != want {
				t.Fatalf("an idle minute woke Herald %d times and listed %d times, want %d of each (every %s)", fires, listed, want, DiscoveryInterval)
			}
			if pinged != 0 {
				t.Fatalf("gateway.ping sent %d times in an idle minute: the listings already show the link alive", pinged)
			}
			if st := h.client.Status(); st.State != source.StateConnected || srv.Dials() != 1 {
				t.Fatalf("the idle link dropped: %s %s (%d dials)", st.State, st.Err, srv.Dials())
			}
		})
	}
}
