package approval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// TestRunEnd: an API-server run that ends settles its waiting request;
// one being answered is left to the answer, since the run may have ended
// because of it (its events can arrive before the answer's reply).
func TestRunEnd(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		kind    string
		output  string
		answer  bool
		state   State
		outcome CancelReason
	}{
		{name: "cancelled while waiting", kind: "run.cancelled", state: StateCancelled, outcome: CancelInterrupted},
		{name: "failed while waiting", kind: "run.failed", state: StateCancelled, outcome: CancelInterrupted},
		{name: "completed: settled elsewhere", kind: "run.completed", output: "approved: rm", state: StateCancelled, outcome: CancelResolvedElsewhere},
		{name: "completed after the server's timeout", kind: "run.completed", output: `blocked: rm` + "\n" + `guard={"message": "BLOCKED: Command timed out without user response. The user has NOT consented."}`, state: StateExpired},
		{name: "completed during Herald's answer", kind: "run.completed", output: "approved: rm", answer: true, state: StateResolved},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.in.Ingest(legacy("g1", "run_1", "rm -rf ./build", t0))
			key := f.only(t).Key
			end := event("g1", "run_1", tc.kind, t0, map[string]any{"event": tc.kind, "run_id": "run_1", "output": tc.output})
			if tc.answer {
				f.ans["g1"].set(1, nil, func() { f.in.Ingest(end) })
				if err := f.in.Answer(context.Background(), key, "once", "test", false); err != nil {
					t.Fatal(err)
				}
			} else {
				f.in.Ingest(end)
			}
			r := f.get(t, key)
			if r.State != tc.state || r.Outcome.Reason != tc.outcome {
				t.Fatalf("ended %s/%s (%s), want %s/%s", r.State, r.Outcome.Reason, r.Outcome.Detail, tc.state, tc.outcome)
			}
		})
	}
}

// A run that ends while Herald's answer is in flight, whose reply is then
// lost, ends the request unknown at once: nothing more will come to
// settle it (found with the session chat stream cut mid-approval).
func TestRunEndDuringAnswerLost(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(legacy("g1", "run_1", "rm -rf ./build", t0))
	key := f.only(t).Key
	end := event("g1", "run_1", "run.completed", t0, map[string]any{"event": "run.completed", "run_id": "run_1", "output": "approved: rm"})
	f.ans["g1"].set(0, fmt.Errorf("sending the approval answer failed: %w", wire.ErrOutcomeUnknown), func() { f.in.Ingest(end) })
	err := f.in.Answer(context.Background(), key, "once", "test", false)
	if !errors.As(err, new(*UnknownOutcomeError)) {
		t.Fatalf("answer: %v", err)
	}
	r := f.get(t, key)
	if r.State != StateOutcomeUnknown || !strings.Contains(r.Outcome.Detail, "the run completed") || r.Outcome.Choice != "once" {
		t.Fatalf("ended %s %q", r.State, r.Outcome.Detail)
	}
}
