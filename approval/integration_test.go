package approval

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
)

// TestWithGatewayClient runs the inbox behind the real gateway client
// against the fake Hermes gateway, in both dialects, with and without a
// reconnect while the approval is pending.
func TestWithGatewayClient(t *testing.T) {
	t.Parallel()
	for _, d := range []hermestest.Dialect{hermestest.Legacy, hermestest.Modern} {
		for _, reconnect := range []bool{false, true} {
			t.Run(d.String()+map[bool]string{false: "", true: "/reconnect"}[reconnect], func(t *testing.T) {
				t.Parallel()
				srv := hermestest.NewServer(hermestest.Options{Dialect: d})
				defer srv.Close()
				f, client, ctx, waitDials := newGatewayRig(t, srv)
				waitDials(1)
				ref, err := client.CreateSession(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := client.Call(ctx, "prompt.submit", map[string]any{"session_id": ref.ID, "text": "approve-me: git reset --hard HEAD"}, nil); err != nil {
					t.Fatal(err)
				}
				c := f.waitChange(t, "arrival", func(c Change) bool { return c.Kind == ChangeArrived })
				if len(srv.Answers()) != 0 {
					t.Fatal("the gateway got an answer before the user gave one")
				}
				choice := "once"
				if reconnect {
					srv.Kick()
					waitDials(2)
					if d == hermestest.Legacy {
						f.waitChange(t, "uncertain after the reconnect", func(c Change) bool { return c.Request.Uncertain })
						// 0.18.2 cannot replay: Herald cannot prove the
						// request is still the session's oldest, so it
						// refuses to approve it and sends only deny.
						var ue *UnboundError
						if err := f.in.Answer(ctx, c.Request.Key, "once", "tray", false); !errors.As(err, &ue) {
							t.Fatalf("approving after the reconnect: %v, want an UnboundError", err)
						}
						choice = "deny"
					}
				}
				if err := f.in.Answer(ctx, c.Request.Key, choice, "tray", false); err != nil {
					t.Fatal(err)
				}
				for {
					ch := srv.Changed()
					if len(srv.Answers()) > 0 {
						break
					}
					select {
					case <-ch:
					case <-ctx.Done():
						t.Fatal("the gateway never got the answer")
					}
				}
				if got := srv.Answers(); len(got) != 1 || got[0].Choice != choice || got[0].Command != "git reset --hard HEAD" {
					t.Fatalf("gateway answers %+v", got)
				}
				if r := f.get(t, c.Request.Key); r.State != StateResolved || r.Outcome.Surface != "tray" || r.Uncertain {
					t.Fatalf("request %+v", r)
				}
			})
		}
	}
}

// newGatewayRig is the inbox of a new fixture behind a gateway client on a
// fake clock, running against srv until the test ends; waitDials(n) waits
// until the client has connected with at least n dials. A dropped link is
// redialed at once.
func newGatewayRig(t *testing.T, srv *hermestest.Server) (*fixture, *gateway.Client, context.Context, func(int)) {
	t.Helper()
	f, client, ctx, waitDials, _ := newHeldGatewayRig(t, srv, false)
	return f, client, ctx, waitDials
}

// newHeldGatewayRig is newGatewayRig whose redial, with held, waits for
// release(): a test decides what happens before the client reconnects.
func newHeldGatewayRig(t *testing.T, srv *hermestest.Server, held bool) (*fixture, *gateway.Client, context.Context, func(int), func()) {
	t.Helper()
	clk := clock.NewFake(t0)
	connected := make(chan int, 10) // dial count at each connect
	var (
		mu   sync.Mutex
		due  time.Time // a retry held back
		hold = held
	)
	retry := func(at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if hold {
			due = at
			return
		}
		clk.Advance(at.Sub(clk.Now()))
	}
	release := func() {
		mu.Lock()
		defer mu.Unlock()
		hold = false
		if !due.IsZero() {
			clk.Advance(due.Sub(clk.Now()))
		}
	}
	var client *gateway.Client
	f := newFixture(t, func(o *Options) {
		o.Clock = clk
		o.Answerers = func(string) (Answerer, bool) { return client, true }
	})
	client, err := gateway.New(gateway.Config{
		Name: "gw", URL: srv.URL, Token: srv.Token(), Clock: clk,
		Rand:    func() float64 { return 0.5 },
		OnEvent: f.in.Ingest,
		OnStatus: func(s source.Status) {
			switch s.State {
			case source.StateReconnecting:
				retry(s.NextRetry)
			case source.StateConnected:
				connected <- s.Dials
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	go client.Run(ctx)
	return f, client, ctx, func(n int) {
		t.Helper()
		for {
			select {
			case got := <-connected:
				if got >= n {
					return
				}
			case <-ctx.Done():
				t.Fatalf("not connected (dial %d)", n)
			}
		}
	}, release
}
