package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/netfault"
	"github.com/herald-desktop/herald/backend/source"
)

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestDeadLinkDetectedWithin45s freezes the link (half-open: no FIN) and
// checks that the client gives up on it within 45 s of silence, then
// reconnects once the network is back.
func TestDeadLinkDetectedWithin45s(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d})
			defer srv.Close()
			px, err := netfault.New(srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer px.Close()
			h := start(t, srv, func(c *Config) { c.URL = "http://" + px.Addr() })
			h.rec.waitState(t, source.StateConnected)
			h.clk.BlockUntil(1) // the heartbeat ticker is armed
			m := h.rec.mark()
			px.Freeze()
			// 35 s of silence is not yet a dead link.
			h.clk.Advance(35 * time.Second)
			if st := h.client.Status(); st.State != source.StateConnected {
				t.Fatalf("after 35s of silence state is %s, want connected", st.State)
			}
			h.clk.Advance(10 * time.Second) // 45 s in all
			st := h.rec.waitStateAfter(t, m, source.StateReconnecting)
			if !strings.Contains(st.Err, "no reply from the gateway") {
				t.Fatalf("dead link reported as %q", st.Err)
			}
			px.Thaw()
			h.rec.waitReconnected(t, m)
		})
	}
}

// TestPingOnlyWhereSupported checks that a 0.18.2 gateway is asked for
// gateway.ping and client.capabilities once, and never again after its
// -32601, even across reconnects; a newer gateway is pinged every 15 s.
func TestPingOnlyWhereSupported(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d})
			defer srv.Close()
			h := start(t, srv, nil)
			h.rec.waitState(t, source.StateConnected)
			h.clk.BlockUntil(1)
			pings := func() int { return count(srv.Methods(), "gateway.ping") }
			for i := 1; i <= 4; i++ {
				h.clk.Advance(PingInterval)
				h.waitHeard(t) // the reply to this interval's ping arrived
			}
			want := 4
			if d == hermestest.Legacy {
				want = 1 // asked once, answered -32601, never again
			}
			if got := pings(); got != want {
				t.Fatalf("gateway.ping asked %d times, want %d", got, want)
			}
			m := h.rec.mark()
			srv.Kick()
			h.rec.waitReconnected(t, m)
			h.clk.BlockUntil(1)
			h.clk.Advance(PingInterval)
			if d == hermestest.Modern {
				waitServer(t, srv, "ping after reconnect", func() bool { return pings() >= 5 })
				h.waitHeard(t)
				if got := pings(); got != 5 {
					t.Fatalf("gateway.ping asked %d times after reconnect, want 5", got)
				}
				if got := h.client.Status().Features; !got.Ping || !got.Capabilities || !got.ServerRequests {
					t.Fatalf("features = %+v, want ping, capabilities and server requests", got)
				}
				return
			}
			// Liveness still works on 0.18.2: WebSocket pongs keep the
			// link up across several dead-link windows.
			for i := 0; i < 4; i++ {
				h.clk.Advance(PingInterval)
				h.waitHeard(t)
			}
			if st := h.client.Status(); st.State != source.StateConnected || srv.Dials() != 2 {
				t.Fatalf("0.18.2 link dropped although it answers WebSocket pings: %s %s", st.State, st.Err)
			}
			calls := srv.Methods()
			if got := count(calls, "gateway.ping"); got != 1 {
				t.Fatalf("0.18.2 gateway was asked gateway.ping %d times, want 1 (%v)", got, calls)
			}
			if got := count(calls, "client.capabilities"); got != 1 {
				t.Fatalf("0.18.2 gateway was asked client.capabilities %d times, want 1", got)
			}
		})
	}
}
