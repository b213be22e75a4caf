package approval

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestUnknownReconciledOnAPIServer runs the inbox behind the API server
// client against the fake API server. An answer is written and the link
// drops before the server's reply; Herald asks the run's status:
//   - a server that shows the pending approval with its request_id
//     (LastEventID) lists it again when the answer never landed: pending
//     again, and a second answer by that id settles it;
//   - one that took the answer says so on the stream (approval.responded):
//     resolved, with the server's word for it;
//   - 0.18.2's status says only "waiting_for_approval": it cannot name the
//     approval, so the answer stays unknown and nothing is sent again;
//   - an answer by request_id is bound by that id only once the server
//     showed on this connection that it honours ids (an earlier answer's
//     200 echoed its id: proved answers the run's first approval first);
//     before that, an approval listed again stays unknown (the answer,
//     applied by order, may have settled another approval of the run) and
//     nothing is sent again.
func TestUnknownReconciledOnAPIServer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		dialect apiservertest.Dialect
		fault   apiservertest.Faults
		state   State
		detail  string
		again   bool
		proved  bool
	}{
		{"listed again by its request_id", apiservertest.LastEventID, apiservertest.Faults{LoseApproval: 1}, StatePending, "listed it again", true, true},
		{"listed again before ids were honoured", apiservertest.LastEventID, apiservertest.Faults{LoseApproval: 1}, StateSentUnknown, UnknownDetail, false, false},
		{"taken, confirmed on the stream", apiservertest.LastEventID, apiservertest.Faults{DropApprovalResponse: 1}, StateResolved, "API server reported", false, true},
		{"taken on 0.18.2, confirmed on the stream", apiservertest.SingleConsumer, apiservertest.Faults{DropApprovalResponse: 1}, StateResolved, "API server reported", false, false},
		{"0.18.2 cannot name the approval", apiservertest.SingleConsumer, apiservertest.Faults{LoseApproval: 1}, StateSentUnknown, UnknownDetail, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := apiservertest.NewServer(apiservertest.Options{Dialect: tt.dialect})
			defer srv.Close()
			clk := clock.NewFake(t0)
			// The API server source as the service opens it: it is the
			// inbox's Answerer, as there.
			checks := make(chan struct{}, 1)
			listings := make(chan struct{}, 8)
			var api *apiserver.Source
			f := newFixture(t, func(o *Options) {
				o.Clock = clk
				o.Answerers = func(string) (Answerer, bool) { return api, true }
			})
			d, err := source.Lookup(string(apiserver.Kind))
			if err != nil {
				t.Fatal(err)
			}
			src, err := d.Open(source.Config{Name: "api", URL: srv.URL, Secrets: map[string]string{"key": srv.Key()}, Clock: clk},
				source.Hooks{OnEvent: func(ev wire.Event) {
					f.in.Ingest(ev)
					if ev.Kind == wire.ApprovalsListed {
						listings <- struct{}{}
					}
				}, OnStatus: func(s source.Status) {
					select {
					case checks <- struct{}{}:
					default:
					}
					if s.State == source.StateReconnecting {
						clk.Advance(s.NextRetry.Sub(clk.Now()))
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			api = src.(*apiserver.Source)
			client := api.Client()
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			go client.Run(ctx)
			if tt.proved {
				// An earlier run's answer by id, honoured: the server
				// showed that it binds answers by id.
				first, err := client.StartRun(ctx, apiserver.RunRequest{Input: "approve-me: rm -rf ./first"})
				if err != nil {
					t.Fatal(err)
				}
				k := f.waitChange(t, "first arrival", func(c Change) bool { return c.Kind == ChangeArrived }).Request.Key
				if err := f.in.Answer(ctx, k, "once", "tray", false); err != nil {
					t.Fatal(err)
				}
				f.waitChange(t, "first run's end", func(c Change) bool { return c.Request.Key == k && c.Request.State == StateResolved })
				for r, _ := srv.Run(first.ID); r.Status != "completed"; r, _ = srv.Run(first.ID) {
					<-srv.Changed()
				}
			}
			run, err := client.StartRun(ctx, apiserver.RunRequest{Input: "approve-me: git reset --hard HEAD"})
			if err != nil {
				t.Fatal(err)
			}
			key := f.waitChange(t, "arrival", func(c Change) bool {
				return c.Kind == ChangeArrived && strings.Contains(c.Request.Command, "git reset")
			}).Request.Key
			if r := f.get(t, key); tt.dialect == apiservertest.LastEventID && (r.ByOrder == tt.proved || r.QueueID == "") {
				t.Fatalf("ids honoured on this connection %v: by order %v, id %q", tt.proved, r.ByOrder, r.QueueID)
			}
			before := len(srv.Approvals())
			srv.SetFaults(tt.fault)
			err = f.in.Answer(ctx, key, "once", "tray", false)
			// A server that took the answer may confirm it on the stream
			// before the lost reply is noticed: then the answer stands.
			if !errors.As(err, new(*UnknownOutcomeError)) && (tt.state != StateResolved || err != nil) {
				t.Fatalf("answer cut after the write: %v", err)
			}
			// nextCheck waits for the client's next status check to be
			// due, and returns when.
			nextCheck := func() time.Time {
				for {
					for _, r := range client.Status().Runs {
						if r.ID == run.ID && r.NextCheck.After(clk.Now()) {
							return r.NextCheck
						}
					}
					select {
					case <-checks:
					case <-ctx.Done():
						t.Fatal("no status check due")
					}
				}
			}
			if !tt.again && tt.state == StateResolved {
				// The stream says how; no check is needed.
			} else {
				clk.Advance(nextCheck().Sub(clk.Now()))
			}
			switch {
			case tt.state == StateSentUnknown && tt.dialect == apiservertest.LastEventID:
				// The check listed it by its id; applied, it changes
				// nothing.
				select {
				case <-listings:
				case <-ctx.Done():
					t.Fatal("no listing")
				}
			case tt.state == StateSentUnknown:
				// The check named nothing: another one is due.
				nextCheck()
			default:
				f.waitChange(t, "reconciled", func(c Change) bool {
					return c.Request.Key == key && c.Request.State == tt.state && strings.Contains(c.Request.Outcome.Detail, tt.detail)
				})
			}
			r := f.get(t, key)
			if r.State != tt.state || !strings.Contains(r.Outcome.Detail, tt.detail) {
				t.Fatalf("after the check: %s %q, want %s %q", r.State, r.Outcome.Detail, tt.state, tt.detail)
			}
			err = f.in.Answer(ctx, key, "once", "window", false)
			if !tt.again {
				if err == nil {
					t.Fatal("a second answer was accepted")
				}
				if n := len(srv.Approvals()) - before; n > 1 {
					t.Fatalf("%d answers reached the server", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("answer again: %v", err)
			}
			got := srv.Approvals()[before:]
			if len(got) != 1 || got[0].Choice != "once" || got[0].RequestID == "" || got[0].Status != 200 || got[0].RunID != run.ID {
				t.Fatalf("server took %+v", got)
			}
			f.waitChange(t, "resolved", func(c Change) bool { return c.Request.Key == key && c.Request.State == StateResolved })
		})
	}
}
