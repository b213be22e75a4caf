package approval

import (
	"errors"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// answeredCancel is the Herald bridge's request.cancel for a request
// whose end names who answered it.
// (Who answered is never read from JSON: the bridge sets it on Data.)
func answeredCancel(gw, sid, id, answered, choice string) wire.Event {
	ev := event(gw, sid, wire.RequestCancel, t0, wire.CancelPayload{ID: id, Method: "approval", Reason: "resolved"})
	ev.RequestID = id
	ev.Data = &wire.CancelPayload{ID: id, Method: "approval", Reason: "resolved", Answered: answered, Choice: choice}
	return ev
}

// TestAnswerSettledByWhoAnswered: an answer of unknown outcome is settled
// from a cancel that says who answered (the Herald bridge's poll names
// the client): this Herald with its choice is Herald's own answer,
// resolved with that choice, in the inbox and the history; another client
// ends it as settled elsewhere. Said while the answer is still on its way
// (the poll came first), it is kept for the answer's result, which is
// then Herald's answer, not an unknown outcome.
func TestAnswerSettledByWhoAnswered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		during   bool // the cancel arrives while the answer is on its way
		answered string
		choice   string
		state    State
		reason   CancelReason
		detail   string
	}{
		{"this Herald", false, wire.AnsweredHere, "once", StateResolved, "", "this Herald's answer"},
		{"this Herald, while answering", true, wire.AnsweredHere, "once", StateResolved, "", "this Herald's answer"},
		{"another client", false, wire.AnsweredElsewhere, "deny", StateCancelled, CancelResolvedElsewhere, "another client answered first (deny)"},
		{"this Herald, another choice", false, wire.AnsweredHere, "deny", StateSentUnknown, "", "no longer waits"},
		{"no one named", false, "", "once", StateSentUnknown, "", "no longer waits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.in.Ingest(srq("g1", "s1", "b-1", "git push --force", t0))
			key := f.only(t).Key
			var during func()
			if tt.during {
				during = func() { f.in.Ingest(answeredCancel("g1", "s1", "b-1", tt.answered, tt.choice)) }
			}
			f.ans["g1"].set(0, lostAfterWrite, during)
			err := f.in.Answer(ctx, key, "once", "cli", false)
			if tt.during {
				if err != nil {
					t.Fatalf("answer settled while on its way: %v", err)
				}
			} else {
				if !errors.As(err, new(*UnknownOutcomeError)) {
					t.Fatalf("answer: %v", err)
				}
				f.in.Ingest(answeredCancel("g1", "s1", "b-1", tt.answered, tt.choice))
			}
			r := f.get(t, key)
			if r.State != tt.state || r.Outcome.Reason != tt.reason || !strings.Contains(r.Outcome.Detail, tt.detail) {
				t.Fatalf("settled as %s %+v, want %s %q with %q", r.State, r.Outcome, tt.state, tt.reason, tt.detail)
			}
			if tt.state == StateResolved && r.Outcome.Choice != "once" {
				t.Fatalf("resolved with %q", r.Outcome.Choice)
			}
			es := must(f.store.List(Filter{Key: key}))
			if last := es[len(es)-1]; last.State != tt.state || last.Reason != tt.reason {
				t.Fatalf("history ends %s %q", last.State, last.Reason)
			}
		})
	}
}
