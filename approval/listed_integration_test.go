package approval

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
)

// TestUnknownReconciledOnReconnect runs the inbox behind the gateway
// client against the fake 0.21.3+ gateway (server requests, open_requests,
// approval.pending, request.answer). An answer is written and the link
// drops before the gateway's reply; after the reconnect Herald asks the
// gateway what still waits:
//   - lost before the gateway took it: listed again by its id, so pending
//     again, and a second answer by that id settles it (one answer at the
//     gateway);
//   - taken, then the link dropped: no longer listed, so it stays unknown
//     with a plain reason, and no second answer is sent.
func TestUnknownReconciledOnReconnect(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		cut     func(*hermestest.Server)
		state   State
		detail  string
		answers int
	}{
		{"lost before the gateway took it", func(s *hermestest.Server) { s.LoseNext("request.answer") }, StatePending, "listed it again", 0},
		{"taken, then the link dropped", func(s *hermestest.Server) { s.CutAfter(0) }, StateSentUnknown, "no longer waits", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Requests})
			defer srv.Close()
			clk := clock.NewFake(t0)
			connected := make(chan int, 10)
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
						clk.Advance(s.NextRetry.Sub(clk.Now()))
					case source.StateConnected:
						connected <- s.Dials
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			go client.Run(ctx)
			waitDials := func(n int) {
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
			}
			waitDials(1)
			ref, err := client.CreateSession(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := client.Call(ctx, "prompt.submit", map[string]any{"session_id": ref.ID, "text": "approve-me: git reset --hard HEAD"}, nil); err != nil {
				t.Fatal(err)
			}
			key := f.waitChange(t, "arrival", func(c Change) bool { return c.Kind == ChangeArrived }).Request.Key
			tt.cut(srv)
			if err := f.in.Answer(ctx, key, "once", "tray", false); !errors.As(err, new(*UnknownOutcomeError)) {
				t.Fatalf("answer cut after the write: %v", err)
			}
			waitDials(2)
			r := f.waitChange(t, "reconciled", func(c Change) bool {
				return c.Request.Key == key && c.Request.State == tt.state && strings.Contains(c.Request.Outcome.Detail, tt.detail)
			}).Request
			if n := len(srv.Answers()); n != tt.answers {
				t.Fatalf("the gateway took %d answers before the second, want %d", n, tt.answers)
			}
			err = f.in.Answer(ctx, key, "once", "window", false)
			if tt.state != StatePending {
				if err == nil {
					t.Fatalf("a second answer was accepted on %+v", r)
				}
				return
			}
			if err != nil {
				t.Fatalf("answer again: %v", err)
			}
			if got := srv.Answers(); len(got) != 1 || got[0].Choice != "once" || got[0].Command != "git reset --hard HEAD" {
				t.Fatalf("gateway answers %+v", got)
			}
			if r := f.get(t, key); r.State != StateResolved {
				t.Fatalf("after answering again: %s %q", r.State, r.Outcome.Detail)
			}
		})
	}
}
