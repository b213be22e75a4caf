package gateway

import (
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
)

// lockedRand is a seeded random source the client may call from any
// goroutine.
func lockedRand(seed int64) func() float64 {
	var mu sync.Mutex
	r := rand.New(rand.NewSource(seed))
	return func() float64 { mu.Lock(); defer mu.Unlock(); return r.Float64() }
}

// restartOnce restarts srv, keeps it refusing for down (fake time) and
// walks the client's retries on the fake clock until it is connected
// again. It returns how long after the gateway accepted again the client
// dialed (fake time: dial and handshake take none of it) and how many
// dials the gateway refused meanwhile.
func restartOnce(tb testing.TB, h *harness, srv *hermestest.Server, down time.Duration) (lag time.Duration, refused int) {
	tb.Helper()
	srv.SetFaults(hermestest.Faults{RejectUpgrade: 503})
	m := h.rec.mark()
	srv.Restart()
	back := h.clk.Now().Add(down)
	for {
		// Each wait in turn: a retry due at once (no jitter) may be
		// refused, and announce the next, before this loop reads it.
		st, next := h.rec.nextState(tb, m, source.StateReconnecting)
		m = next
		if !st.NextRetry.Before(back) {
			h.clk.Advance(back.Sub(h.clk.Now()))
			srv.SetFaults(hermestest.Faults{})
			h.clk.Advance(st.NextRetry.Sub(h.clk.Now()))
			h.rec.waitStateAfter(tb, m, source.StateConnected)
			return st.NextRetry.Sub(back), refused
		}
		h.clk.Advance(st.NextRetry.Sub(h.clk.Now()))
		if refused++; refused > 10000 {
			tb.Fatalf("more than 10000 dials within %v of the gateway being down (now %v in)", down, down-back.Sub(h.clk.Now()))
		}
	}
}

// stayUp keeps the connection up for n ping intervals of fake time.
func stayUp(tb testing.TB, h *harness, n int) {
	tb.Helper()
	for i := 0; i < n; i++ {
		h.clk.BlockUntil(1)
		h.clk.Advance(PingInterval)
		h.waitHeard(tb)
	}
}

// BenchmarkRestartTwiceAMinute: a gateway that restarts every 15 or 30 s
// (so twice within a minute, again and again), each time down for a
// random 0.2-8 s, over real loopback WebSockets with the backoff on the
// fake clock. lag is the time from the gateway accepting again to
// Herald's dial; the goal is under 1 s every time. It also reports how
// often Herald dials a gateway that stays down for 10 minutes.
func BenchmarkRestartTwiceAMinute(b *testing.B) {
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := start(b, srv, func(c *Config) { c.Rand = lockedRand(1) })
	h.manual.Store(true)
	defer h.stop()
	h.rec.waitState(b, source.StateConnected)
	rng := rand.New(rand.NewSource(2))

	// A gateway that stays down: dials in its first minute and in 10.
	_, firstMinute := restartOnce(b, h, srv, time.Minute)
	stayUp(b, h, 1)
	_, tenMinutes := restartOnce(b, h, srv, 10*time.Minute)
	stayUp(b, h, 1)

	var lags []time.Duration
	for b.Loop() {
		stayUp(b, h, 1+rng.Intn(2))
		lag, _ := restartOnce(b, h, srv, time.Duration(200+rng.Intn(7800))*time.Millisecond)
		lags = append(lags, lag)
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lags[len(lags)/2]), "p50-lag-ms")
	b.ReportMetric(ms(lags[len(lags)-1]), "max-lag-ms")
	b.ReportMetric(float64(firstMinute), "dials-down-1min")
	b.ReportMetric(float64(tenMinutes), "dials-down-10min")
}

// TestRestartsWithinAMinuteRedialWithinASecond: the benchmark's claim as
// a test on the fake clock (no timing of real time): a gateway restarted
// three times 15 s apart, down 3 s each time, is redialed within 1 s of
// accepting again every time; one that stays down 10 minutes is dialed
// no more than once every 10 s once the outage is old.
func TestRestartsWithinAMinuteRedialWithinASecond(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	for _, r := range []float64{0, 0.5, 0.999} { // the jitter's extremes
		h := start(t, srv, func(c *Config) { c.Rand = func() float64 { return r } })
		h.manual.Store(true)
		h.rec.waitState(t, source.StateConnected)
		for i := 0; i < 3; i++ {
			stayUp(t, h, 1)
			if lag, _ := restartOnce(t, h, srv, 3*time.Second); lag >= time.Second {
				t.Fatalf("jitter %v, restart %d: dialed %v after the gateway accepted again", r, i+1, lag)
			}
		}
		stayUp(t, h, 1)
		_, n := restartOnce(t, h, srv, 10*time.Minute)
		// 30 s of quick retries (at least 0.4 s apart), then at least 3.75 s
		// apart, growing to at least 10 s apart from the second minute.
		if maxDials := 1 + 75 + 30/3 + (9*60)/10; n > maxDials {
			t.Fatalf("jitter %v: %d dials to a gateway down for 10 minutes, want at most %d", r, n, maxDials)
		}
		h.stop()
	}
}
