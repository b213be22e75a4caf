package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/netfault"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestSleepRedialsAtOnce plays a laptop's sleep on the fake clock (wall
// time jumps, running time and timers do not) and checks that the client
// redials as soon as it wakes, without a backoff wait and without first
// waiting for the link to look dead: at once when told (CheckLink, what the
// desktop does on logind's resume signal), otherwise at the next heartbeat.
func TestSleepRedialsAtOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		wake func(h *harness)
		// ran is how much running time the redial may take after the wake.
		ran time.Duration
	}{
		{"resume signal", func(h *harness) { h.client.CheckLink() }, 0},
		{"next heartbeat", func(h *harness) { h.clk.Advance(PingInterval) }, PingInterval},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
			defer srv.Close()
			h := start(t, srv, nil)
			h.rec.waitState(t, source.StateConnected)
			h.clk.BlockUntil(1)
			m := h.rec.mark()
			h.clk.Suspend(2 * time.Hour)
			woke := h.clk.Now()
			tc.wake(h)
			st := h.rec.waitStateAfter(t, m, source.StateReconnecting)
			if !strings.Contains(st.Err, "asleep") {
				t.Fatalf("the redial after a sleep says %q, want it to say the computer was asleep", st.Err)
			}
			h.rec.waitReconnected(t, m)
			if ran := h.clk.Now().Sub(woke); ran != tc.ran {
				t.Fatalf("reconnected %s after waking, want %s (no backoff, no dead-link wait)", ran, tc.ran)
			}
			if n := srv.Dials(); n != 2 {
				t.Fatalf("%d dials, want 2", n)
			}
		})
	}
}

// TestCheckLinkProbes: after a network change (CheckLink) a link that
// answers stays up, and one that does not answer within ProbeTimeout is
// redialed, long before DeadAfter.
func TestCheckLinkProbes(t *testing.T) {
	t.Parallel()
	for _, frozen := range []bool{false, true} {
		name := map[bool]string{false: "alive", true: "frozen"}[frozen]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
			defer srv.Close()
			px, err := netfault.New(srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer px.Close()
			h := start(t, srv, func(c *Config) { c.URL = "http://" + px.Addr() })
			h.rec.waitState(t, source.StateConnected)
			h.clk.BlockUntil(1)
			pings := count(srv.Methods(), "gateway.ping")
			m := h.rec.mark()
			if frozen {
				px.Freeze()
			}
			h.client.CheckLink()
			probing := func() bool { cn := h.client.current(); return cn != nil && cn.pinging.Load() }
			if !frozen {
				waitServer(t, srv, "the probe's ping", func() bool { return count(srv.Methods(), "gateway.ping") > pings })
				h.rec.waitFor(t, "the probe's answer", func([]wire.Event, []source.Status) bool { return !probing() })
				if got := count(srv.Methods(), "gateway.ping") - pings; got != 1 {
					t.Fatalf("CheckLink sent %d pings, want 1", got)
				}
				h.clk.Advance(ProbeTimeout)
				if st := h.client.Status(); st.State != source.StateConnected || srv.Dials() != 1 {
					t.Fatalf("a link that answered the probe dropped: %s %s", st.State, st.Err)
				}
				return
			}
			h.rec.waitFor(t, "the probe", func([]wire.Event, []source.Status) bool { return probing() })
			h.clk.Advance(ProbeTimeout - 1)
			if st := h.client.Status(); st.State != source.StateConnected {
				t.Fatalf("the link dropped before the probe timed out: %s", st.Err)
			}
			h.clk.Advance(1)
			st := h.rec.waitStateAfter(t, m, source.StateReconnecting)
			if !strings.Contains(st.Err, "network changed") {
				t.Fatalf("probe failure reported as %q", st.Err)
			}
			px.Thaw()
			h.rec.waitReconnected(t, m)
		})
	}
}
