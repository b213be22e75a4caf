package approval

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// streamRig is the inbox behind the API server client, continuing a
// stored session of the fake API server whose session chat stream asks
// for approvals (PR #121769's dialect).
type streamRig struct {
	srv    *apiservertest.Server
	f      *fixture
	clk    *clock.Fake
	api    *apiserver.Source
	client *apiserver.Client
	ctx    context.Context
	sid    string

	mu   sync.Mutex
	ends map[string]chan wire.Event // run ends, for Stop
	// status is poked at each status change of the client.
	status chan struct{}
}

func newStreamRig(t *testing.T) *streamRig {
	t.Helper()
	r := &streamRig{srv: apiservertest.NewServer(apiservertest.Options{SessionStream: apiservertest.SessionStreamApprovals}), clk: clock.NewFake(t0), ends: map[string]chan wire.Event{}, status: make(chan struct{}, 1)}
	t.Cleanup(r.srv.Close)
	r.f = newFixture(t, func(o *Options) {
		o.Clock = r.clk
		o.Answerers = func(string) (Answerer, bool) { return r.api, true }
	})
	d, err := source.Lookup(string(apiserver.Kind))
	if err != nil {
		t.Fatal(err)
	}
	src, err := d.Open(source.Config{Name: "api", URL: r.srv.URL, Secrets: map[string]string{"key": r.srv.Key()}, Clock: r.clk},
		source.Hooks{OnEvent: func(ev wire.Event) {
			r.f.in.Ingest(ev)
			if wire.IsRunEnd(ev.Kind) {
				r.mu.Lock()
				ch := r.ends[ev.Session]
				r.mu.Unlock()
				if ch != nil {
					ch <- ev
				}
			}
		}, OnStatus: func(s source.Status) {
			select {
			case r.status <- struct{}{}:
			default:
			}
			if s.State == source.StateReconnecting {
				r.clk.Advance(s.NextRetry.Sub(r.clk.Now()))
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	r.api = src.(*apiserver.Source)
	r.client = r.api.Client()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	r.ctx = ctx
	go r.client.Run(ctx)
	for r.client.Status().State != source.StateConnected {
		select {
		case <-r.status:
		case <-ctx.Done():
			t.Fatal("the client did not connect")
		}
	}
	r.sid = r.srv.AddSession("", "Release checklist", "what is left?", "two steps")
	return r
}

// ask sends a prompt to the stored session and returns the turn's run.
func (r *streamRig) ask(t *testing.T, text string) string {
	t.Helper()
	a, err := r.api.Ask(r.ctx, r.sid, text)
	if err != nil {
		t.Fatal(err)
	}
	if a.StoredSession != r.sid || a.NewSession {
		t.Fatalf("asked: %+v", a)
	}
	r.mu.Lock()
	r.ends[a.Session] = make(chan wire.Event, 4)
	r.mu.Unlock()
	return a.Session
}

// arrival waits for an approval of run asking cmd and returns it.
func (r *streamRig) arrival(t *testing.T, run, cmd string) Request {
	t.Helper()
	return r.f.waitChange(t, "the approval of "+cmd, func(c Change) bool {
		return c.Kind == ChangeArrived && c.Request.Session == run && c.Request.Command == cmd
	}).Request
}

func (r *streamRig) end(t *testing.T, run string) wire.Event {
	t.Helper()
	r.mu.Lock()
	ch := r.ends[run]
	r.mu.Unlock()
	select {
	case ev := <-ch:
		return ev
	case <-r.ctx.Done():
		t.Fatalf("run %s did not end", run)
	}
	return wire.Event{}
}

// answersTo counts the answers the server took for run.
func (r *streamRig) answersTo(run string) []apiservertest.Approval {
	var out []apiservertest.Approval
	for _, a := range r.srv.Approvals() {
		if a.RunID == run {
			out = append(out, a)
		}
	}
	return out
}

// TestSessionStreamApprovals is issue 27's acceptance against the fake's
// session-stream dialect: an approval on a turn sent to a stored session
// is shown with its command and session, answered once, and the turn goes
// on; a second approval of the same turn is answered deny; a stale answer
// (409) is "no longer waiting", never denied; stop mid-approval ends the
// turn and withdraws the approval; and the stream cut mid-approval leaves
// an answer whose reply was lost unknown until the server settles it,
// never sent again.
func TestSessionStreamApprovals(t *testing.T) {
	t.Parallel()
	r := newStreamRig(t)

	t.Run("answered once, then a second approval denied", func(t *testing.T) {
		run := r.ask(t, "approve-seq: git reset --hard HEAD || rm -rf ./build")
		first := r.arrival(t, run, "git reset --hard HEAD")
		if first.StoredSession != r.sid || first.QueueID == "" || !first.ByOrder || !first.OneClickApprovable() {
			t.Fatalf("first approval: %+v", first)
		}
		if err := r.f.in.Answer(r.ctx, first.Key, ChoiceOnce, "window", false); err != nil {
			t.Fatal(err)
		}
		if got := r.f.get(t, first.Key); got.State != StateResolved || got.Outcome.Choice != ChoiceOnce {
			t.Fatalf("after the answer: %s %q", got.State, got.Outcome.Choice)
		}
		if err := r.f.in.Answer(r.ctx, first.Key, ChoiceOnce, "tray", false); err == nil {
			t.Fatal("a second answer to the same approval was accepted")
		}
		second := r.arrival(t, run, "rm -rf ./build")
		if err := r.f.in.Answer(r.ctx, second.Key, ChoiceDeny, "window", false); err != nil {
			t.Fatal(err)
		}
		end := r.end(t, run)
		if p := end.Data.(*apiserver.RunOutcomePayload); end.Kind != wire.RunCompleted || p.Output != "approved: git reset --hard HEAD\nblocked: rm -rf ./build" {
			t.Fatalf("the turn's end: %s %+v", end.Kind, end.Data)
		}
		got := r.answersTo(run)
		if len(got) != 2 || got[0].Choice != ChoiceOnce || got[0].RequestID != first.QueueID || got[1].Choice != ChoiceDeny || got[1].RequestID != second.QueueID {
			t.Fatalf("the server took %+v", got)
		}
	})

	t.Run("a stale answer is no longer waiting", func(t *testing.T) {
		run := r.ask(t, "approve-seq: rm -rf ./dist || rm -rf ./cache")
		a := r.arrival(t, run, "rm -rf ./dist")
		if a.ByOrder {
			t.Errorf("the server honoured ids on this connection, yet: %+v", a)
		}
		// Another client answers it first (nothing on the chat stream
		// says so).
		if err := mustClient(t, r).RespondApproval(r.ctx, run, ChoiceOnce, a.QueueID); err != nil {
			t.Fatal(err)
		}
		err := r.f.in.Answer(r.ctx, a.Key, ChoiceOnce, "window", false)
		var ended *EndedError
		if !errors.As(err, &ended) || !strings.Contains(err.Error(), "no longer waiting") || strings.Contains(err.Error(), "denied") {
			t.Fatalf("stale answer: %v", err)
		}
		if got := r.f.get(t, a.Key); got.State != StateCancelled || got.Outcome.Reason != CancelResolvedElsewhere || !strings.Contains(got.Outcome.Detail, "no longer waiting") {
			t.Fatalf("after a 409: %+v", got)
		}
		if got := r.answersTo(run); len(got) != 2 || got[1].Status != 409 || got[1].Code != "approval_not_pending" {
			t.Fatalf("the server took %+v", got)
		}
		next := r.arrival(t, run, "rm -rf ./cache")
		if err := r.f.in.Answer(r.ctx, next.Key, ChoiceDeny, "window", false); err != nil {
			t.Fatal(err)
		}
		r.end(t, run)
	})

	t.Run("stop mid-approval", func(t *testing.T) {
		run := r.ask(t, "approve-me: rm -rf ./tmp")
		a := r.arrival(t, run, "rm -rf ./tmp")
		r.mu.Lock()
		ended := r.ends[run]
		r.mu.Unlock()
		res, err := r.api.Stop(r.ctx, run, source.StopWait{Ended: ended, Clock: r.clk, Confirm: time.Minute, Poll: time.Hour})
		if err != nil || res.Outcome != "cancelled" {
			t.Fatalf("stop: %+v %v", res, err)
		}
		r.f.waitChange(t, "the approval withdrawn", func(c Change) bool { return c.Request.Key == a.Key && !c.Request.State.Live() })
		if got := r.f.get(t, a.Key); got.State != StateCancelled || got.Outcome.Choice != "" {
			t.Fatalf("after the stop: %+v", got)
		}
		if got := r.answersTo(run); len(got) != 0 {
			t.Fatalf("an answer was sent: %+v", got)
		}
	})

	t.Run("stream cut mid-approval", func(t *testing.T) {
		// run.started, message.started, five deltas, tool.started,
		// approval.request: then the stream is cut.
		r.srv.SetFaults(apiservertest.Faults{DropStreamAfter: 9})
		run := r.ask(t, "approve-me: git clean -fdx")
		a := r.arrival(t, run, "git clean -fdx")
		r.f.waitChange(t, "the request uncertain after the cut", func(c Change) bool { return c.Request.Key == a.Key && c.Request.Uncertain })
		r.srv.SetFaults(apiservertest.Faults{DropApprovalResponse: 1})
		err := r.f.in.Answer(r.ctx, a.Key, ChoiceOnce, "window", false)
		if !errors.As(err, new(*UnknownOutcomeError)) {
			t.Fatalf("answer whose reply was lost: %v", err)
		}
		// Unknown; already settled as unknown when the run's status,
		// polled since the cut, said the turn ended first.
		if got := r.f.get(t, a.Key); got.State != StateSentUnknown && got.State != StateOutcomeUnknown {
			t.Fatalf("after the lost reply: %s", got.State)
		}
		if err := r.f.in.Answer(r.ctx, a.Key, ChoiceOnce, "tray", false); err == nil {
			t.Fatal("the answer was sent again")
		}
		// The run's status, polled since the cut, carries the turn to its
		// end; the answer is settled then, never pending again. Each
		// status poll and check is let run when the client arms it.
		for {
			got := r.f.get(t, a.Key)
			if got.State == StatePending || got.State == StateAnswering {
				t.Fatalf("pending again: %+v", got)
			}
			if !got.State.Live() {
				if got.State != StateOutcomeUnknown && got.State != StateResolved {
					t.Fatalf("settled as %s: %+v", got.State, got)
				}
				break
			}
			for _, ri := range r.client.Status().Runs {
				for _, next := range []time.Time{ri.NextPoll, ri.NextCheck} {
					if ri.ID == run && next.After(r.clk.Now()) {
						r.clk.Advance(next.Sub(r.clk.Now()))
					}
				}
			}
			select {
			case <-r.status:
			case <-r.f.changes:
			case <-r.ctx.Done():
				t.Fatalf("the answer was never settled: %+v\nclient: %+v", r.f.get(t, a.Key), r.client.Status())
			}
		}
		if got := r.answersTo(run); len(got) != 1 || got[0].Status != 200 {
			t.Fatalf("the server took %+v", got)
		}
	})
}

// mustClient is another API client of the same server (another app).
func mustClient(t *testing.T, r *streamRig) *apiserver.Client {
	t.Helper()
	c, err := apiserver.New(apiserver.Config{URL: r.srv.URL, Key: r.srv.Key()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
