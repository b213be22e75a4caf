package approval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

var ctx = context.Background()

func TestArrival(t *testing.T) {
	t.Parallel()
	no, yes := false, true
	tests := []struct {
		name    string
		payload wire.ApprovalPayload
		want    []string
	}{
		{"0.18.2 offers all", wire.ApprovalPayload{Command: "x", Choices: knownChoices}, knownChoices},
		{"absent choices default to all", wire.ApprovalPayload{Command: "x"}, knownChoices},
		{"allow_permanent false drops always", wire.ApprovalPayload{Command: "x", AllowPermanent: &no, Choices: knownChoices}, []string{"once", "session", "deny"}},
		{"allow_session false drops session", wire.ApprovalPayload{Command: "x", AllowSession: &no, AllowPermanent: &yes}, []string{"once", "always", "deny"}},
		{"gateway order kept, unknown dropped", wire.ApprovalPayload{Command: "x", Choices: []string{"deny", "once", "all", "once"}}, []string{"deny", "once"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.in.Ingest(event("g1", "s1", wire.ApprovalRequest, t0, tt.payload))
			if r := f.only(t); !slices.Equal(r.Choices, tt.want) || r.State != StatePending {
				t.Fatalf("choices %v state %s, want %v pending", r.Choices, r.State, tt.want)
			}
		})
	}
}

func TestExpiresAtUsesConfiguredTimeoutNotGatewayClock(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) {
		o.Timeout = func(gw string) time.Duration {
			if gw == "g2" {
				return 10 * time.Minute
			}
			return 0
		}
	})
	f.in.Ingest(srq("g1", "s1", "srq-1", "rm -rf x", t0)) // expires_at 1234.5 on the gateway's monotonic clock
	f.in.Ingest(srq("g2", "s1", "srq-1", "rm -rf x", t0))
	if got := f.get(t, "g1/srq/s1/srq-1").ExpiresAt; !got.Equal(t0.Add(DefaultTimeout)) {
		t.Errorf("g1 expires %v, want received + 300 s", got)
	}
	if got := f.get(t, "g2/srq/s1/srq-1").ExpiresAt; !got.Equal(t0.Add(10 * time.Minute)) {
		t.Errorf("g2 expires %v, want received + its 10 min", got)
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(srq("g1", "s1", "srq-7", "a", t0))
	withQueue := event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": "b", "request_id": "q9"})
	f.in.Ingest(withQueue)
	f.in.Ingest(legacy("g1", "s1", "c", t0))
	f.in.Ingest(legacy("g1", "s1", "d", t0))
	stored := legacy("g1", "s2", "e", t0)
	stored.StoredSession = "20261202_x"
	f.in.Ingest(stored)
	var keys []string
	for _, r := range f.in.Snapshot().Requests {
		keys = append(keys, r.Key)
	}
	want := []string{"g1/srq/s1/srq-7", "g1/q/s1/q9", "g1/ev/s1/1", "g1/ev/s1/2", "g1/ev/20261202_x/1"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	if r := f.get(t, "g1/srq/s1/srq-7"); r.QueueID != "q-srq-7" || r.RequestID != "srq-7" || r.Dialect != DialectServerRequest {
		t.Fatalf("server request ids: %+v", r)
	}
}

func TestAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		ev    wire.Event
		key   string
		want  sent
		extra func(*fixture)
	}{
		{"event form", legacy("g1", "s1", "git reset --hard HEAD", t0), "g1/ev/s1/1", sent{"approval.respond", "s1", "once", ""}, nil},
		{"event form with queue id", event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": "x", "request_id": "q1"}), "g1/q/s1/q1", sent{"approval.respond", "s1", "once", "q1"}, nil},
		{"server request", srq("g1", "s1", "srq-1", "x", t0), "g1/srq/s1/srq-1", sent{"response", "", "once", "srq-1"}, nil},
		// The reconnect lost the proof that it is the session's oldest
		// approval: only deny, sent to the new runtime id.
		{"after a new runtime id", withStored(legacy("g1", "s1", "x", t0), "st"), "g1/ev/st/1", sent{"approval.respond", "s9", "deny", ""}, func(f *fixture) {
			f.in.Ingest(withStored(resync("g1", "s9", "new-runtime", t0), "st"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.in.Ingest(tt.ev)
			if tt.extra != nil {
				tt.extra(f)
			}
			f.clk.Advance(time.Second)
			if err := f.in.Answer(ctx, tt.key, tt.want.choice, "tray", false); err != nil {
				t.Fatal(err)
			}
			if got := f.ans["g1"].sent(); !slices.Equal(got, []sent{tt.want}) {
				t.Fatalf("sent %+v, want %+v", got, tt.want)
			}
			r := f.get(t, tt.key)
			if r.State != StateResolved || r.Outcome != (Outcome{Choice: tt.want.choice, Surface: "tray", At: t0.Add(time.Second)}) || r.Uncertain {
				t.Fatalf("after answer: %s %+v uncertain=%v", r.State, r.Outcome, r.Uncertain)
			}
		})
	}
}

func TestAnswerRefused(t *testing.T) {
	t.Parallel()
	no := false
	tests := []struct {
		name, key, choice, surface string
		confirm                    bool
		noAnswerer                 bool
		want                       string
		is                         error
	}{
		{name: "unknown key", key: "g1/ev/s1/9", choice: "once", surface: "tray", is: ErrNotFound},
		{name: "choice not offered", key: "g1/ev/s1/1", choice: "always", surface: "tray", confirm: true, want: `"always" is not offered for this request; choose one of: once, session, deny`},
		{name: "made-up choice", key: "g1/ev/s1/1", choice: "maybe", surface: "tray", want: "choose one of: once, session, deny"},
		{name: "always unconfirmed", key: "g1/ev/s1/2", choice: "always", surface: "tray", is: ErrConfirmAlways},
		{name: "no surface", key: "g1/ev/s1/2", choice: "once", want: "surface"},
		{name: "gateway not connected", key: "g1/ev/s1/2", choice: "once", surface: "tray", noAnswerer: true, is: ErrNoAnswerer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			if tt.noAnswerer {
				delete(f.ans, "g1")
			}
			f.in.Ingest(event("g1", "s1", wire.ApprovalRequest, t0, wire.ApprovalPayload{Command: "a", AllowPermanent: &no}))
			f.in.Ingest(event("g2", "s1", wire.ApprovalRequest, t0, wire.ApprovalPayload{Command: "b"}))
			f.in.Ingest(event("g1", "s2", wire.ApprovalRequest, t0, wire.ApprovalPayload{Command: "c"}))
			key := strings.Replace(tt.key, "s1/2", "s2/1", 1)
			err := f.in.Answer(ctx, key, tt.choice, tt.surface, tt.confirm)
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %v / %q", err, tt.is, tt.want)
			}
			for gw, a := range f.ans {
				if got := a.sent(); len(got) != 0 {
					t.Fatalf("%s was sent %+v", gw, got)
				}
			}
			for _, r := range f.in.Snapshot().Requests {
				if r.State != StatePending {
					t.Fatalf("%s is %s after a refused answer", r.Key, r.State)
				}
			}
		})
	}
}

func TestAlwaysConfirmed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(legacy("g1", "s1", "rm -rf ./build", t0))
	if err := f.in.Answer(ctx, "g1/ev/s1/1", "always", "window", true); err != nil {
		t.Fatal(err)
	}
	if got := f.ans["g1"].sent(); len(got) != 1 || got[0].choice != "always" {
		t.Fatalf("sent %+v", got)
	}
}

func TestNothingPendingAnyMore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		advance time.Duration // inside the send
		state   State
		reason  CancelReason
	}{
		{"before the deadline: settled elsewhere", time.Second, StateCancelled, CancelResolvedElsewhere},
		{"after the deadline: expired", DefaultTimeout, StateExpired, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.in.Ingest(legacy("g1", "s1", "x", t0))
			f.ans["g1"].set(0, nil, func() { f.clk.Advance(tt.advance) })
			err := f.in.Answer(ctx, "g1/ev/s1/1", "once", "tray", false)
			var ended *EndedError
			if !errors.As(err, &ended) || !ended.Sent || !strings.Contains(err.Error(), "your answer had no effect") {
				t.Fatalf("err = %v, want an EndedError saying the answer had no effect", err)
			}
			if r := f.only(t); r.State != tt.state || r.Outcome.Reason != tt.reason {
				t.Fatalf("state %s reason %q, want %s %q", r.State, r.Outcome.Reason, tt.state, tt.reason)
			}
		})
	}
}

func TestFailedSendStaysPendingAndCanBeRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(srq("g1", "s1", "srq-1", "x", t0))
	cause := errors.New("write wss://gw:9119/api/ws?token=SECRET123: broken pipe")
	f.ans["g1"].set(0, cause, nil)
	err := f.in.Answer(ctx, "g1/srq/s1/srq-1", "deny", "tray", false)
	var se *SendError
	if !errors.As(err, &se) || !errors.Is(err, cause) || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "still pending, try again") {
		t.Fatalf("err = %v", err)
	}
	r := f.only(t)
	if r.State != StatePending || r.LastError != "write wss://gw:9119/api/ws: broken pipe" {
		t.Fatalf("after a failed send: %s, LastError %q", r.State, r.LastError)
	}
	f.ans["g1"].set(1, nil, nil)
	if err := f.in.Answer(ctx, "g1/srq/s1/srq-1", "deny", "window", false); err != nil {
		t.Fatal(err)
	}
	if r := f.only(t); r.State != StateResolved || r.LastError != "" || r.Outcome.Surface != "window" {
		t.Fatalf("after retry: %+v", r)
	}
	entries, _ := f.store.List(Filter{})
	for _, e := range entries {
		if strings.Contains(e.Error, "SECRET") {
			t.Fatalf("audit log holds the token: %+v", e)
		}
	}
}

func TestSendFailsAfterDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(srq("g1", "s1", "srq-1", "x", t0))
	f.ans["g1"].set(0, errors.New("timeout"), func() { f.clk.Advance(DefaultTimeout) })
	var ended *EndedError
	if err := f.in.Answer(ctx, "g1/srq/s1/srq-1", "once", "tray", false); !errors.As(err, &ended) || ended.State != StateExpired {
		t.Fatalf("err = %v, want expired", err)
	}
}

func TestConcurrentAnswersFirstWins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(srq("g1", "s1", "srq-1", "x", t0))
	inSend, release := make(chan struct{}), make(chan struct{})
	f.ans["g1"].set(1, nil, func() { close(inSend); <-release })
	first := make(chan error)
	go func() { first <- f.in.Answer(ctx, "g1/srq/s1/srq-1", "once", "tray", false) }()
	<-inSend
	err := f.in.Answer(ctx, "g1/srq/s1/srq-1", "deny", "window", false)
	var ae *AnsweredError
	if !errors.As(err, &ae) || !ae.InFlight || ae.Surface != "tray" || !strings.Contains(err.Error(), `"once" from tray`) {
		t.Fatalf("second answer: %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	err = f.in.Answer(ctx, "g1/srq/s1/srq-1", "deny", "window", false)
	if !errors.As(err, &ae) || ae.InFlight || !strings.Contains(err.Error(), `already answered: "once" from tray`) {
		t.Fatalf("late answer: %v", err)
	}
	if got := f.ans["g1"].sent(); len(got) != 1 {
		t.Fatalf("gateway got %d answers, want 1", len(got))
	}
}

func TestRequestCancel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason string
		state  State
		why    CancelReason
	}{
		{"timeout", StateExpired, ""},
		{"interrupted", StateCancelled, CancelInterrupted},
		{"resolved", StateCancelled, CancelResolvedElsewhere},
		{"session_closed", StateCancelled, CancelSessionClosed},
		{"shutdown", StateCancelled, CancelSessionClosed},
		{"not_pending_after_reconnect", StateCancelled, CancelRequestCancel},
		{"some free text", StateCancelled, CancelRequestCancel},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.in.Ingest(srq("g1", "s1", "srq-1", "x", t0))
			f.in.Ingest(cancel("g1", "s1", "srq-1", tt.reason, t0))
			f.in.Ingest(cancel("g1", "s1", "srq-1", "resolved", t0)) // a second cancel changes nothing
			r := f.only(t)
			if r.State != tt.state || r.Outcome.Reason != tt.why || r.Outcome.Detail != tt.reason {
				t.Fatalf("got %s %+v", r.State, r.Outcome)
			}
			var ended *EndedError
			if err := f.in.Answer(ctx, r.Key, "once", "tray", false); !errors.As(err, &ended) || ended.Sent || !strings.HasSuffix(err.Error(), "nothing was sent") {
				t.Fatalf("answer after cancel: %v", err)
			}
			if len(f.ans["g1"].sent()) != 0 {
				t.Fatal("sent an answer for a cancelled request")
			}
		})
	}
}

func TestCancelledWhileAnsweringIsNotResolved(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		ev    wire.Event
		event func(*fixture) wire.Event
		state State
	}{
		{"request.cancel", srq("g1", "s1", "srq-1", "x", t0), func(*fixture) wire.Event { return cancel("g1", "s1", "srq-1", "resolved", t0) }, StateCancelled},
		{"legacy timeout", legacy("g1", "s1", "x", t0), func(*fixture) wire.Event { return toolDone("g1", "s1", "x", timedOut, t0) }, StateExpired},
		{"legacy interrupt", legacy("g1", "s1", "x", t0), func(*fixture) wire.Event {
			return event("g1", "s1", wire.MessageComplete, t0, wire.CompletePayload{Status: "interrupted"})
		}, StateCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.in.Ingest(tt.ev)
			f.ans["g1"].set(1, nil, func() { f.in.Ingest(tt.event(f)) })
			var ended *EndedError
			if err := f.in.Answer(ctx, f.only(t).Key, "once", "tray", false); !errors.As(err, &ended) {
				t.Fatalf("err = %v, want EndedError", err)
			}
			if r := f.only(t); r.State != tt.state {
				t.Fatalf("state %s, want %s", r.State, tt.state)
			}
		})
	}
}

func TestLegacyEndings(t *testing.T) {
	t.Parallel()
	interrupted := event("g1", "s1", wire.MessageComplete, t0, wire.CompletePayload{Status: "interrupted"})
	tests := []struct {
		name   string
		answer string // Herald's answer before the events, if any
		events []wire.Event
		want   []State // per request, in arrival order
		reason CancelReason
	}{
		{"timeout expires the request", "", []wire.Event{toolDone("g1", "s1", "a", timedOut, t0)}, []State{StateExpired, StatePending}, ""},
		{"timeout for the second command", "", []wire.Event{toolDone("g1", "s1", "b", timedOut, t0)}, []State{StatePending, StateExpired}, ""},
		{"denied without Herald is an interrupt", "", []wire.Event{toolDone("g1", "s1", "a", deniedBy, t0)}, []State{StateCancelled, StatePending}, CancelInterrupted},
		{"Herald's own deny stays resolved", "deny", []wire.Event{toolDone("g1", "s1", "a", deniedBy, t0)}, []State{StateResolved, StatePending}, ""},
		{"approved result changes nothing", "once", []wire.Event{toolDone("g1", "s1", "a", "", t0), toolDone("g1", "s1", "b", "", t0)}, []State{StateResolved, StatePending}, ""},
		{"hardline block changes nothing", "", []wire.Event{toolDone("g1", "s1", "rm -rf /", "BLOCKED (hardline): recursive delete", t0)}, []State{StatePending, StatePending}, ""},
		{"interrupted turn ends all", "", []wire.Event{interrupted}, []State{StateCancelled, StateCancelled}, CancelInterrupted},
		{"other session untouched", "", []wire.Event{toolDone("g1", "s2", "a", timedOut, t0), toolDone("g2", "s1", "a", timedOut, t0)}, []State{StatePending, StatePending}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			// Herald answers a while it waits alone: with two waiting at
			// once it would accept only deny (see TestTwoAtOnce).
			f.in.Ingest(legacy("g1", "s1", "a", t0))
			if tt.answer != "" {
				if err := f.in.Answer(ctx, "g1/ev/s1/1", tt.answer, "tray", false); err != nil {
					t.Fatal(err)
				}
			}
			f.in.Ingest(legacy("g1", "s1", "b", t0))
			for _, ev := range tt.events {
				f.in.Ingest(ev)
			}
			for i, r := range f.in.Snapshot().Requests {
				if r.State != tt.want[i] {
					t.Errorf("request %d (%s): %s, want %s", i, r.Command, r.State, tt.want[i])
				}
				if r.State == StateCancelled && r.Outcome.Reason != tt.reason {
					t.Errorf("request %d reason %q, want %q", i, r.Outcome.Reason, tt.reason)
				}
			}
		})
	}
}

func TestFIFOOrderForIdlessEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(legacy("g1", "s1", "git reset --hard HEAD", t0))
	f.in.Ingest(legacy("g1", "s1", "rm -rf ./build", t0))
	f.in.Ingest(srq("g1", "s1", "srq-1", "x", t0)) // other forms are answered by id
	// Two waiting at once accept only deny (order.go, "Two at once"), and
	// a deny goes in arrival order too.
	var ue *UnboundError
	if err := f.in.Answer(ctx, "g1/ev/s1/2", "once", "tray", false); !errors.As(err, &ue) || ue.Why != unboundCrowd {
		t.Fatalf("approving one of two waiting at once: %v", err)
	}
	err := f.in.Answer(ctx, "g1/ev/s1/2", "deny", "tray", false)
	if err == nil || !strings.HasSuffix(err.Error(), "answer the earlier request from this session first (git reset --hard HEAD)") {
		t.Fatalf("err = %v", err)
	}
	if err := f.in.Answer(ctx, "g1/srq/s1/srq-1", "once", "tray", false); err != nil {
		t.Fatal(err)
	}
	// The first deny may reach either; the second reaches the other one,
	// so both are denied.
	var ce *CrowdedDenyError
	if err := f.in.Answer(ctx, "g1/ev/s1/1", "deny", "tray", false); !errors.As(err, &ce) || ce.Other != "" {
		t.Fatalf("the first deny of two waiting at once: %v", err)
	}
	if err := f.in.Answer(ctx, "g1/ev/s1/2", "deny", "tray", false); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"g1/ev/s1/1", "g1/ev/s1/2"} {
		if r := f.get(t, key); r.State != StateResolved || r.Outcome.Choice != ChoiceDeny {
			t.Fatalf("%s after both denies: %s %+v", key, r.State, r.Outcome)
		}
	}
}

func TestResyncMakesLegacyRequestsUncertain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(legacy("g1", "s1", "a", t0))
	f.in.Ingest(legacy("g1", "s1", "b", t0))
	f.in.Ingest(srq("g1", "s1", "srq-1", "c", t0))
	f.in.Ingest(legacy("g1", "s2", "d", t0))
	f.in.Ingest(resync("g1", "s1", "no-replay", t0))
	got := map[string]bool{}
	for _, r := range f.in.Pending() {
		got[r.Command] = r.Uncertain
	}
	if want := map[string]bool{"a": true, "b": true, "c": false, "d": false}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("uncertain %v, want %v", got, want)
	}
	if err := f.in.Answer(ctx, "g1/ev/s1/2", "deny", "window", false); err == nil || !strings.Contains(err.Error(), "or dismiss it if it is no longer waiting") {
		t.Fatalf("answering behind an uncertain request: %v", err)
	}
	if err := f.in.Dismiss("g1/srq/s1/srq-1", "tray"); err == nil || !strings.Contains(err.Error(), "cannot be dismissed") {
		t.Fatalf("dismissing a certain request: %v", err)
	}
	if err := f.in.Dismiss("g1/ev/s1/1", "tray"); err != nil {
		t.Fatal(err)
	}
	if r := f.get(t, "g1/ev/s1/1"); r.State != StateCancelled || r.Outcome.Reason != CancelDismissed || r.Outcome.Surface != "tray" {
		t.Fatalf("dismissed: %+v", r)
	}
	// The other one stays answerable, with deny only: after the gap
	// Herald cannot prove it is the session's oldest.
	var ue *UnboundError
	if err := f.in.Answer(ctx, "g1/ev/s1/2", "once", "window", false); !errors.As(err, &ue) {
		t.Fatalf("approving after the gap: %v, want an UnboundError", err)
	}
	if err := f.in.Answer(ctx, "g1/ev/s1/2", "deny", "window", false); err != nil {
		t.Fatal(err)
	}
	if len(f.ans["g1"].sent()) != 1 {
		t.Fatal("dismiss must send nothing")
	}
}

func TestRedeliveryRearmsWithoutDuplicating(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(srq("g1", "s1", "srq-1", "x", t0))
	f.ans["g1"].set(0, errors.New("not connected"), nil)
	_ = f.in.Answer(ctx, "g1/srq/s1/srq-1", "once", "tray", false)
	again := srq("g1", "s1", "srq-1", "x", t0.Add(time.Minute))
	again.Replayed = true
	f.in.Ingest(again)
	r := f.only(t)
	if r.State != StatePending || r.LastError != "" || !r.ReceivedAt.Equal(t0) || !r.ExpiresAt.Equal(t0.Add(DefaultTimeout)) {
		t.Fatalf("after redelivery: %+v", r)
	}
	f.ans["g1"].set(1, nil, nil)
	if err := f.in.Answer(ctx, r.Key, "once", "tray", false); err != nil {
		t.Fatal(err)
	}
	f.in.Ingest(again)
	if r := f.only(t); r.State != StateResolved || !strings.Contains(r.Outcome.Detail, "may not have reached it") {
		t.Fatalf("redelivered after the answer: %+v", r)
	}
}

func TestUnreadableRequestIsKeptAsFailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ev := wire.Event{Gateway: "g1", Session: "s1", Kind: wire.ApprovalServerRequest, RequestID: "srq-1", Payload: []byte(`{"command": 7}`), ReceivedAt: t0}
	f.in.Ingest(ev)
	f.in.Ingest(event("g1", "", wire.ApprovalRequest, t0, map[string]any{"command": "x"}))
	for _, r := range f.in.Snapshot().Requests {
		if r.State != StateFailed || r.Outcome.Error == "" {
			t.Fatalf("%+v", r)
		}
		var ended *EndedError
		if err := f.in.Answer(ctx, r.Key, "deny", "tray", false); !errors.As(err, &ended) || !strings.Contains(err.Error(), "answer it in Hermes itself") {
			t.Fatalf("answer: %v", err)
		}
	}
}

func TestExpiryByTimerNotifies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) { o.Keep = time.Hour })
	// Two sessions: two approvals of one would each log the rule of two
	// at once too (order.go).
	f.in.Ingest(legacy("g1", "s1", "a", t0))
	f.in.Ingest(legacy("g1", "s2", "b", t0.Add(time.Minute)))
	f.clk.Advance(DefaultTimeout)
	c := f.waitChange(t, "first expiry", func(c Change) bool { return c.Request.State == StateExpired })
	if c.Request.Key != "g1/ev/s1/1" || !c.At.Equal(t0.Add(DefaultTimeout)) {
		t.Fatalf("expired %s at %v", c.Request.Key, c.At)
	}
	if p := f.in.Pending(); len(p) != 1 || p[0].Key != "g1/ev/s2/1" {
		t.Fatalf("pending %+v", p)
	}
	f.clk.Advance(time.Hour)
	f.waitChange(t, "removal after Keep", func(c Change) bool { return c.Kind == ChangeRemoved && c.Request.Key == "g1/ev/s1/1" })
	if _, ok := f.in.Get("g1/ev/s1/1"); ok {
		t.Fatal("ended request still held after Keep")
	}
	if entries, _ := f.store.List(Filter{Key: "g1/ev/s1/1"}); len(entries) != 2 {
		t.Fatalf("audit log lost the removed request: %+v", entries)
	}
}

func TestNotifyMayCallBack(t *testing.T) {
	t.Parallel()
	var in *Inbox
	var seen []State
	in = New(Options{Notify: func(c Change) {
		r, _ := in.Get(c.Request.Key) // must not deadlock
		seen = append(seen, r.State)
	}})
	defer in.Close()
	in.Ingest(legacy("g1", "s1", "a", time.Now()))
	in.Ingest(toolDone("g1", "s1", "a", timedOut, time.Now()))
	if !slices.Equal(seen, []State{StateExpired, StateExpired}) && !slices.Equal(seen, []State{StatePending, StateExpired}) {
		t.Fatalf("seen %v", seen)
	}
}

func TestAuditTrail(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(legacy("g1", "s1", "GITHUB_TOKEN=ghp_abc git push", t0))
	if err := f.in.Answer(ctx, "g1/ev/s1/1", "once", "tray", false); err != nil {
		t.Fatal(err)
	}
	entries, err := f.store.List(Filter{Key: "g1/ev/s1/1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, fmt.Sprintf("%s %s %s %s %s|%s", e.Kind, e.State, e.Choice, e.Surface, e.Command, e.MaskedCommand))
	}
	want := []string{"arrived pending   GITHUB_TOKEN=ghp_abc git push|GITHUB_TOKEN=•••• git push", "updated answering once tray GITHUB_TOKEN=ghp_abc git push|GITHUB_TOKEN=•••• git push", "updated resolved once tray GITHUB_TOKEN=ghp_abc git push|GITHUB_TOKEN=•••• git push"}
	if !slices.Equal(got, want) {
		t.Fatalf("audit\n got %q\nwant %q", got, want)
	}
	if s := f.in.Snapshot(); s.AuditError != "" {
		t.Fatal(s.AuditError)
	}
}

type failingStore struct{ MemoryStore }

func (*failingStore) Record(Entry) error { return errors.New("disk full") }

func TestAuditFailureIsVisibleAndHarmless(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) { o.Store = &failingStore{} })
	f.in.Ingest(legacy("g1", "s1", "a", t0))
	if err := f.in.Answer(ctx, "g1/ev/s1/1", "once", "tray", false); err != nil {
		t.Fatal(err)
	}
	if s := f.in.Snapshot(); !strings.Contains(s.AuditError, "disk full") {
		t.Fatalf("audit error %q", s.AuditError)
	}
}

// TestAnswerReturnsRecorded: Answer returns only once its changes are in
// the audit log, also while another goroutine is delivering notifications
// (it then notifies them, in order, after its own): `herald log` right
// after `herald approve` shows the answer.
func TestAnswerReturnsRecorded(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var notified []State
	f := newFixture(t, func(o *Options) {
		o.Notify = func(c Change) {
			once.Do(func() { close(entered); <-release }) // the first one holds the drainer
			mu.Lock()
			notified = append(notified, c.Request.State)
			mu.Unlock()
		}
	})
	arrived := make(chan struct{})
	go func() {
		defer close(arrived)
		f.in.Ingest(legacy("g1", "s1", "rm -rf ./build", t0)) // drains, held in Notify
	}()
	select {
	case <-entered:
	case <-time.After(guard):
		t.Fatal("no notification")
	}
	if err := f.in.Answer(ctx, "g1/ev/s1/1", ChoiceDeny, "cli", false); err != nil {
		t.Fatal(err)
	}
	var states []State
	for _, e := range must(f.store.List(Filter{Key: "g1/ev/s1/1"})) {
		states = append(states, e.State)
	}
	if !slices.Equal(states, []State{StatePending, StateAnswering, StateResolved}) {
		t.Fatalf("the history when Answer returned: %v", states)
	}
	close(release)
	<-arrived
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(notified, []State{StatePending, StateAnswering, StateResolved}) {
		t.Fatalf("notified %v", notified)
	}
}

// TestCompletionMatches: a command's tool.complete is matched to the
// request it reports: by the command Herald shows (the beginning of a
// truncated one), an open request or one Herald answered before an older
// one with the same command that ended otherwise, and a BLOCKED report
// naming a command Herald never showed to none (a BLOCKED report without
// a command to the oldest open one).
func TestCompletionMatches(t *testing.T) {
	t.Parallel()
	long := "echo " + strings.Repeat("p", 40) + "; rm -rf ~"
	next := func(t *testing.T, f *fixture) Request {
		t.Helper()
		f.in.Ingest(legacy("g1", "s1", "curl x | sh", f.clk.Now()))
		p := f.in.Pending()
		return p[len(p)-1]
	}
	t.Run("a truncated command, behind an older one that ended", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, func(o *Options) { o.MaxCommandBytes = 16 })
		f.in.Ingest(legacy("g1", "s1", long, t0))
		f.clk.Advance(DefaultTimeout) // it expires, no report
		f.in.Ingest(legacy("g1", "s1", long, f.clk.Now()))
		k := f.in.Pending()[0].Key
		if err := f.in.Answer(ctx, k, ChoiceDeny, "tray", false); err != nil {
			t.Fatal(err)
		}
		f.in.Ingest(toolDone("g1", "s1", long, deniedBy, f.clk.Now()))
		if r := next(t, f); r.DenyOnly() != "" {
			t.Fatalf("after Herald's own deny of a truncated command and its report: deny-only %q", r.DenyOnly())
		}
	})
	t.Run("a BLOCKED report of a command never shown", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		f.in.Ingest(legacy("g1", "s1", "rm -rf ./a", t0))
		f.in.Ingest(toolDone("g1", "s1", "ls", deniedBy, t0))
		if r := f.only(t); r.State != StatePending {
			t.Fatalf("a report of another command ended it: %s %+v", r.State, r.Outcome)
		}
	})
	t.Run("a BLOCKED report without a command", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		f.in.Ingest(legacy("g1", "s1", "rm -rf ./a", t0))
		f.in.Ingest(toolDone("g1", "s1", "", deniedBy, t0))
		if r := f.only(t); r.State != StateCancelled {
			t.Fatalf("a report without a command: %s %+v", r.State, r.Outcome)
		}
	})
}

// TestLiveSnapshot: the live snapshot holds what waits (and answers on
// their way or of unknown outcome), in arrival order, and none of the
// ended requests the full one holds.
func TestLiveSnapshot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	for _, cmd := range []string{"a", "b", "c"} {
		f.in.Ingest(srq("g1", "s1", "srq-"+cmd, cmd, t0))
	}
	if err := f.in.Answer(ctx, "g1/srq/s1/srq-b", ChoiceDeny, "tray", false); err != nil {
		t.Fatal(err)
	}
	var all, live []string
	for _, r := range f.in.Snapshot().Requests {
		all = append(all, r.Command)
	}
	for _, r := range f.in.LiveSnapshot().Requests {
		live = append(live, r.Command)
	}
	if !slices.Equal(all, []string{"a", "b", "c"}) || !slices.Equal(live, []string{"a", "c"}) {
		t.Fatalf("all %v, live %v", all, live)
	}
}

// TestExpiryFromWhenTheGatewayAsked: an API server's approval carries
// when the gateway asked; one Herald got late (a run followed after it
// asked) counts its time from then, not from when Herald saw it. Delivery
// and clock skew under lateSlack, a timestamp in the future or older than
// the whole timeout, and none at all count from when Herald got it.
func TestExpiryFromWhenTheGatewayAsked(t *testing.T) {
	t.Parallel()
	unix := func(at time.Time) float64 { return float64(at.UnixNano()) / 1e9 }
	for _, tc := range []struct {
		name  string
		ts    any // the payload's timestamp, or nil
		asked time.Time
	}{
		{"followed 14 s late", unix(t0.Add(-14 * time.Second)), t0.Add(-14 * time.Second)},
		{"delivered at once", unix(t0.Add(-300 * time.Millisecond)), t0},
		{"gateway clock ahead", unix(t0.Add(time.Minute)), t0},
		{"older than the timeout", unix(t0.Add(-DefaultTimeout)), t0},
		{"no timestamp", nil, t0},
		{"not a number", "yesterday", t0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			p := map[string]any{"command": "git reset --hard HEAD", "choices": knownChoices, "run_id": "run1"}
			if tc.ts != nil {
				p["timestamp"] = tc.ts
			}
			f.in.Ingest(event("g1", "run1", wire.ApprovalRequest, t0, p))
			r := f.only(t)
			if r.Command != "git reset --hard HEAD" || r.State != StatePending || !r.OneClickApprovable() {
				t.Fatalf("the approval itself: %+v", r)
			}
			if got, want := r.ExpiresAt, tc.asked.Add(DefaultTimeout); got.Sub(want).Abs() > time.Millisecond || !r.ReceivedAt.Equal(t0) {
				t.Fatalf("expires %v, want %v (received %v)", got, want, r.ReceivedAt)
			}
		})
	}
}
