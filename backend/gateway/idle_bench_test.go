//go:build unix

package gateway

import (
	"syscall"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIdleListingHour: what listing sessions every DiscoveryInterval
// costs one connected, idle gateway over an hour of the fake clock:
// heartbeat wake-ups per minute (timer firings, exact), session
// listings per minute, and CPU ms per idle hour. The CPU figure is the
// whole process, the in-process fake gateway's side of every listing
// included, so it is an upper bound for Herald alone; the loopback
// WebSocket round trips are real.
func BenchmarkIdleListingHour(b *testing.B) {
	for _, tc := range []struct {
		d     hermestest.Dialect
		every time.Duration // 0: the default; 15 s was the listing before issue 15
	}{{hermestest.Legacy, 0}, {hermestest.Requests, 0}, {hermestest.Legacy, 15 * time.Second}} {
		d := tc.d
		name := d.String()
		if tc.every > 0 {
			name += "/every-" + tc.every.String()
		}
		b.Run(name, func(b *testing.B) {
			var wakes, listings int64
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				srv := hermestest.NewServer(hermestest.Options{Dialect: d})
				h := start(b, srv, func(c *Config) { c.DiscoveryInterval = tc.every })
				h.rec.waitState(b, source.StateConnected)
				h.rec.waitFor(b, "the first listing", func([]wire.Event, []source.Status) bool {
					return !h.client.LastDiscovery().At.IsZero() && !h.client.listing()
				})
				h.rec.waitFor(b, "re-armed", func([]wire.Event, []source.Status) bool {
					return h.client.polls.Load() > 0 && h.client.beats.Load() > h.client.polledBeats.Load()
				})
				fired, lists := h.clk.Fired(), count(srv.Methods(), "session.active_list")
				c0 := cpuTime()
				for s := 0; s < 3600; s++ {
					before, polls := h.clk.Fired(), h.client.polls.Load()
					h.clk.Advance(time.Second)
					if h.clk.Fired() > before {
						h.waitBeat(b)
						h.waitRearmed(b, polls)
					}
				}
				cpu += cpuTime() - c0
				wakes += h.clk.Fired() - fired
				listings += int64(count(srv.Methods(), "session.active_list") - lists)
				h.stop()
				srv.Close()
			}
			n := float64(b.N)
			b.ReportMetric(float64(wakes)/n/60, "wakeups/min")
			b.ReportMetric(float64(listings)/n/60, "listings/min")
			b.ReportMetric(float64(cpu.Milliseconds())/n, "cpu-ms/idle-hour")
		})
	}
}
