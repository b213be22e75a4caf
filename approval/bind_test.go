package approval

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// lostAfterWrite is what a gateway client returns when the answer frame
// went out and the link dropped before the gateway confirmed it.
var lostAfterWrite = fmt.Errorf("sending the approval answer failed: %w", wire.ErrOutcomeUnknown)

// TestCutAfterWriteIsUnknown reproduces issue 16's second finding: the
// answer was written, then the link dropped. Herald must not report "not
// sent, try again", must refuse a second answer (on a FIFO gateway it
// would approve the next request, never shown), and must say plainly that
// the outcome is unknown, in the inbox and in the audit log.
func TestCutAfterWriteIsUnknown(t *testing.T) {
	t.Parallel()
	for _, form := range []string{"fifo", "queue id", "server request"} {
		t.Run(form, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			var a, b wire.Event
			switch form {
			case "fifo":
				a, b = legacy("g1", "s1", "rm -rf ./A-build-cache", t0), legacy("g1", "s1", "git push --force origin main", t0)
			case "queue id":
				a = event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": "rm -rf ./A-build-cache", "request_id": "qa"})
				b = event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": "git push --force origin main", "request_id": "qb"})
			default:
				a, b = srq("g1", "s1", "srq-a", "rm -rf ./A-build-cache", t0), srq("g1", "s1", "srq-b", "git push --force origin main", t0)
			}
			f.in.Ingest(a)
			if form != "fifo" {
				f.in.Ingest(b)
			}
			ka := f.in.Pending()[0].Key
			f.ans["g1"].set(0, lostAfterWrite, nil)
			err := f.in.Answer(ctx, ka, "once", "tray", false)
			if form == "fifo" {
				// B arrives after A's cut answer: while both waited at
				// once, A would accept only deny (order.go).
				f.in.Ingest(b)
			}
			kb := f.in.Pending()[1].Key
			var ue *UnknownOutcomeError
			if !errors.As(err, &ue) || strings.Contains(err.Error(), "try again") {
				t.Fatalf("answer cut after the write: %v, want an UnknownOutcomeError without a retry invitation", err)
			}
			r := f.get(t, ka)
			if r.State != StateSentUnknown || r.Outcome.Choice != "once" || !r.State.Live() {
				t.Fatalf("after the cut: %s %+v", r.State, r.Outcome)
			}
			// No retry: the same answer, or any other, is refused.
			f.ans["g1"].set(1, nil, nil)
			var ae *AnsweredError
			if err := f.in.Answer(ctx, ka, "once", "window", false); !errors.As(err, &ae) || !ae.Unknown {
				t.Fatalf("retry after the cut: %v, want an AnsweredError (unknown)", err)
			}
			rb := f.get(t, kb)
			if form == "fifo" {
				// B waits behind A's unknown answer and can no longer be
				// proven the oldest: deny-only, and nothing is sent blind.
				if rb.Unbound == "" || !slices.Equal(rb.Choices, []string{ChoiceDeny}) {
					t.Fatalf("B after A's unknown answer: %+v", rb)
				}
				if err := f.in.Answer(ctx, kb, "deny", "window", false); err == nil {
					t.Fatal("an id-less answer was sent behind an answer of unknown outcome")
				}
			} else if rb.Unbound != "" || len(rb.Choices) != len(knownChoices) {
				t.Fatalf("B is answered by its own id, so it keeps its choices: %+v", rb)
			}
			if n := len(f.ans["g1"].sent()); n != 1 {
				t.Fatalf("%d answers reached the gateway, want the one sent before the cut", n)
			}
			var logged []State
			for _, e := range must(f.store.List(Filter{Key: ka})) {
				logged = append(logged, e.State)
			}
			if !slices.Contains(logged, StateSentUnknown) || slices.Contains(logged, StateResolved) {
				t.Fatalf("audit log of A: %v", logged)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestUnknownReconciled: an answer of unknown outcome is settled by what
// the gateway says next, and recorded as such; failing that, it ends
// "outcome unknown" at its deadline.
func TestUnknownReconciled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		arrive wire.Event
		choice string
		next   func(f *fixture) []wire.Event
		state  State
		detail string
	}{
		{"the command ran", legacy("g1", "s1", "rm -rf ./a", t0), "once", func(*fixture) []wire.Event {
			return []wire.Event{toolDone("g1", "s1", "rm -rf ./a", "", t0)}
		}, StateResolved, "the command ran"},
		{"denied as answered", legacy("g1", "s1", "rm -rf ./a", t0), "deny", func(*fixture) []wire.Event {
			return []wire.Event{toolDone("g1", "s1", "rm -rf ./a", deniedBy, t0)}
		}, StateResolved, "denied"},
		{"denied elsewhere", legacy("g1", "s1", "rm -rf ./a", t0), "once", func(*fixture) []wire.Event {
			return []wire.Event{toolDone("g1", "s1", "rm -rf ./a", deniedBy, t0)}
		}, StateCancelled, "did not take effect"},
		{"timed out", legacy("g1", "s1", "rm -rf ./a", t0), "once", func(*fixture) []wire.Event {
			return []wire.Event{toolDone("g1", "s1", "rm -rf ./a", timedOut, t0)}
		}, StateExpired, "timed out"},
		{"turn ended unseen", legacy("g1", "s1", "rm -rf ./a", t0), "once", func(*fixture) []wire.Event {
			return []wire.Event{event("g1", "s1", wire.MessageComplete, t0, map[string]any{"status": "complete"})}
		}, StateOutcomeUnknown, "outcome unknown"},
		{"runtime gone after a restart", legacy("g1", "s1", "rm -rf ./a", t0), "deny", func(*fixture) []wire.Event {
			return []wire.Event{{Gateway: "g1", Session: "s1", Kind: wire.SessionGone, ReceivedAt: t0}}
		}, StateOutcomeUnknown, "runtime is gone"},
		{"another runtime gone", legacy("g1", "s1", "rm -rf ./a", t0), "deny", func(*fixture) []wire.Event {
			return []wire.Event{{Gateway: "g1", Session: "s2", Kind: wire.SessionGone, ReceivedAt: t0}, {Gateway: "g2", Session: "s1", Kind: wire.SessionGone, ReceivedAt: t0}}
		}, StateSentUnknown, UnknownDetail},
		{"listed again by id", srq("g1", "s1", "srq-1", "rm -rf ./a", t0), "once", func(*fixture) []wire.Event {
			return []wire.Event{srq("g1", "s1", "srq-1", "rm -rf ./a", t0)}
		}, StatePending, "listed it again"},
		{"gone after reconnect", srq("g1", "s1", "srq-1", "rm -rf ./a", t0), "once", func(*fixture) []wire.Event {
			return []wire.Event{cancel("g1", "s1", "srq-1", "not_pending_after_reconnect", t0)}
		}, StateSentUnknown, "no longer waits"},
		{"gone, then the deadline", srq("g1", "s1", "srq-1", "rm -rf ./a", t0), "once", func(f *fixture) []wire.Event {
			f.in.Ingest(cancel("g1", "s1", "srq-1", "not_pending_after_reconnect", t0))
			f.clk.Advance(DefaultTimeout)
			return nil
		}, StateOutcomeUnknown, "outcome unknown"},
		{"API server confirms", event("api", "run1", wire.ApprovalRequest, t0, map[string]any{"command": "rm -rf ./a"}), "once", func(*fixture) []wire.Event {
			return []wire.Event{event("api", "run1", "approval.responded", t0, map[string]any{"choice": "once", "resolved": 1})}
		}, StateResolved, "API server reported"},
		{"run ended", event("api", "run1", wire.ApprovalRequest, t0, map[string]any{"command": "rm -rf ./a"}), "once", func(*fixture) []wire.Event {
			return []wire.Event{event("api", "run1", "run.completed", t0, map[string]any{"output": "done"})}
		}, StateOutcomeUnknown, "outcome unknown"},
		{"deadline", legacy("g1", "s1", "rm -rf ./a", t0), "once", func(f *fixture) []wire.Event {
			f.clk.Advance(DefaultTimeout)
			return nil
		}, StateOutcomeUnknown, "timeout passed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.ans["api"] = &fakeAnswerer{}
			f.in.Ingest(tt.arrive)
			key := f.only(t).Key
			f.ans[tt.arrive.Gateway].set(0, lostAfterWrite, nil)
			if err := f.in.Answer(ctx, key, tt.choice, "tray", false); !errors.As(err, new(*UnknownOutcomeError)) {
				t.Fatalf("answer: %v", err)
			}
			for _, ev := range tt.next(f) {
				f.in.Ingest(ev)
			}
			r := f.get(t, key)
			text := r.Outcome.Detail + " " + r.LastError
			if r.State != tt.state || !strings.Contains(text, tt.detail) {
				t.Fatalf("after reconciling: %s %q, want %s with %q", r.State, text, tt.state, tt.detail)
			}
			es := must(f.store.List(Filter{Key: key}))
			if last := es[len(es)-1]; last.State != tt.state {
				t.Fatalf("audit log ends %s, want %s", last.State, tt.state)
			}
		})
	}
}

// TestFIFOProof: an id-less answer is sent only while Herald can prove the
// request is its session's oldest waiting approval.
func TestFIFOProof(t *testing.T) {
	t.Parallel()
	followed := func(sid string, running bool) wire.Event {
		return event("g1", sid, sessionFollowed, t0, map[string]any{"reason": "followed", "running": running})
	}
	tests := []struct {
		name   string
		before []wire.Event
		after  []wire.Event // after the arrival
		bound  bool
	}{
		{"seen from the start", []wire.Event{followed("s1", false)}, nil, true},
		{"attached mid-turn", []wire.Event{followed("s1", true)}, nil, false},
		{"mid-turn, then the turn ended", []wire.Event{followed("s1", true), event("g1", "s1", wire.MessageComplete, t0, map[string]any{"status": "complete"})}, nil, true},
		{"reconnect before", []wire.Event{resync("g1", "s1", "no-replay", t0)}, nil, false},
		{"reconnect after", nil, []wire.Event{resync("g1", "s1", "no-replay", t0)}, false},
		{"taken by another client", nil, []wire.Event{event("g1", "s1", sessionElsewhere, t0, map[string]any{"reason": "taken"})}, false},
		{"gap in another session", []wire.Event{resync("g1", "s2", "no-replay", t0)}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			for _, ev := range tt.before {
				f.in.Ingest(ev)
			}
			f.in.Ingest(legacy("g1", "s1", "rm -rf ./a", t0))
			for _, ev := range tt.after {
				f.in.Ingest(ev)
			}
			r := f.only(t)
			err := f.in.Answer(ctx, r.Key, "once", "tray", false)
			if tt.bound != (err == nil) {
				t.Fatalf("approve: %v (bound %v)", err, tt.bound)
			}
			if !tt.bound {
				if r = f.get(t, r.Key); r.Unbound == "" || r.DenyOnly() != r.Unbound || r.OneClickApprovable() {
					t.Fatalf("deny-only without a reason to show: %+v", r)
				}
				if err := f.in.Answer(ctx, r.Key, "deny", "tray", false); err != nil {
					t.Fatalf("deny: %v", err)
				}
			}
		})
	}
}

// TestSameIDInTwoSessions: an approval's key includes its session.
func TestSameIDInTwoSessions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": "ls", "request_id": "q1"}))
	f.in.Ingest(event("g1", "s2", wire.ApprovalRequest, t0, map[string]any{"command": "ls", "request_id": "q1"}))
	f.in.Ingest(srq("g1", "s1", "srq-1", "ls", t0))
	f.in.Ingest(srq("g1", "s2", "srq-1", "ls", t0))
	p := f.in.Pending()
	if len(p) != 4 {
		t.Fatalf("%d requests, want 4: %+v", len(p), p)
	}
	for _, r := range p {
		// A queue id is answered with its session; a server request's
		// answer names only its id, which now names two requests.
		if conflict := r.Dialect == DialectServerRequest; (r.Conflict != "") != conflict {
			t.Fatalf("%s: conflict %q", r.Key, r.Conflict)
		}
	}
}

// TestRestartKeepsGuards reproduces issue 16's first finding and checks
// that a restored request keeps every guard and never widens its choices.
func TestRestartKeepsGuards(t *testing.T) {
	t.Parallel()
	big := "echo ok; " + strings.Repeat("x", DefaultMaxCommandBytes) + "; rm -rf ~"
	tests := []struct {
		name   string
		arrive []wire.Event
		pick   func(Request) bool
		check  func(t *testing.T, r Request)
	}{
		{"fifo is deny-only", []wire.Event{legacy("g1", "s1", "rm -rf ./A-build-cache", t0)}, nil, func(t *testing.T, r Request) {
			if r.Unbound != unboundRestart || !slices.Equal(r.Choices, []string{ChoiceDeny}) {
				t.Fatalf("%+v", r)
			}
		}},
		{"truncated", []wire.Event{srq("g1", "s1", "srq-1", big, t0)}, nil, func(t *testing.T, r Request) {
			if !r.Truncated || r.CommandBytes != len(big) || r.RequestID != "srq-1" {
				t.Fatalf("%+v", r)
			}
		}},
		{"conflict", []wire.Event{srq("g1", "s1", "srq-7", "ls -la", t0), srq("g1", "s1", "srq-7", "rm -rf ~", t0)}, func(r Request) bool { return r.Command == "ls -la" }, func(t *testing.T, r Request) {
			if r.Conflict == "" {
				t.Fatalf("%+v", r)
			}
		}},
		{"ids kept, deny-only until listed again", []wire.Event{event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": "ls", "request_id": "q1", "choices": []string{"once", "deny"}})}, nil, func(t *testing.T, r Request) {
			if r.QueueID != "q1" || !slices.Equal(r.Choices, []string{"deny"}) || r.Unbound != unboundRestartID {
				t.Fatalf("%+v", r)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rig := newRestartRig(t)
			in, _, stop := rig.start()
			for _, ev := range tt.arrive {
				in.Ingest(ev)
			}
			stop()
			in, _, stop = rig.start()
			defer stop()
			var r Request
			for _, p := range in.Pending() {
				if tt.pick == nil || tt.pick(p) {
					r = p
				}
			}
			tt.check(t, r)
			if err := in.Answer(ctx, r.Key, "once", "tray", false); err == nil && r.DenyOnly() != "" {
				t.Fatal("a deny-only restored request was approved")
			}
			for _, s := range rig.ans.sent() {
				if s.choice != ChoiceDeny && s.requestID == "" && r.Dialect == DialectServerRequest {
					t.Fatalf("a server request was answered without its id: %+v", s)
				}
			}
		})
	}
}

// TestRestartOldRecordsDenyOnly: entries written before guards were kept
// restore deny-only; an answer in flight at the restart is never offered
// again.
func TestRestartOldRecordsDenyOnly(t *testing.T) {
	t.Parallel()
	st := NewMemoryStore()
	old := Entry{At: t0, Kind: ChangeArrived, Key: "g1/srq/7", Gateway: "g1", Session: "s1", Dialect: DialectServerRequest, Command: "rm -rf ./a", State: StatePending}
	inflight := Entry{At: t0, Kind: ChangeArrived, Key: "g1/ev/s2/1", Gateway: "g1", Session: "s2", Dialect: DialectEvent, Command: "ls", State: StatePending, Guards: GuardsVersion, Choices: knownChoices}
	for _, e := range []Entry{old, inflight} {
		_ = st.Record(e)
	}
	inflight.Kind, inflight.State, inflight.Choice, inflight.Surface = ChangeUpdated, StateAnswering, "once", "tray"
	_ = st.Record(inflight)
	f := newFixture(t, func(o *Options) { o.Store = st; o.Clock.(interface{ Advance(time.Duration) }).Advance(time.Second) })
	r := f.get(t, "g1/srq/7")
	if !slices.Equal(r.Choices, []string{ChoiceDeny}) || r.Unbound == "" {
		t.Fatalf("old record restored as %+v", r)
	}
	if r := f.get(t, "g1/ev/s2/1"); r.State != StateOutcomeUnknown {
		t.Fatalf("answer in flight at the restart restored as %s", r.State)
	}
}

// TestRestoredOfferedAgainByID: a restored request the gateway lists again
// under its own id is bound by that id again, with the choices the gateway
// offers now; an id-less one stays deny-only.
func TestRestoredOfferedAgainByID(t *testing.T) {
	t.Parallel()
	queued := event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": "ls", "request_id": "q1", "choices": []string{"once", "deny"}})
	rig := newRestartRig(t)
	in, _, stop := rig.start()
	in.Ingest(queued)
	in.Ingest(legacy("g1", "s2", "rm -rf ./a", t0))
	stop()
	in, _, stop = rig.start()
	defer stop()
	in.Ingest(queued)
	in.Ingest(legacy("g1", "s2", "rm -rf ./a", t0))
	for _, r := range in.Pending() {
		switch r.Session {
		case "s1":
			if r.Unbound != "" || !slices.Equal(r.Choices, []string{"once", "deny"}) {
				t.Fatalf("listed again by id: %+v", r)
			}
		default:
			if r.Unbound == "" || !slices.Equal(r.Choices, []string{ChoiceDeny}) {
				t.Fatalf("id-less, offered again: %+v", r)
			}
		}
	}
}
