package approval

import (
	"slices"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// TestOwnAnswersKeepTheOrder is issue 28's bug on the fake gateway's
// events: on a FIFO gateway (0.18/0.19: no request ids), in Herald's own
// turn, the agent asks two approvals, at once or one after the other.
// Whatever Herald answers first, the command's tool.complete that follows
// (before or after the gateway confirmed the answer) is Herald's own
// answer taking effect, not one given elsewhere: the session's answer
// order stays proven and the second approval keeps its choices.
func TestOwnAnswersKeepTheOrder(t *testing.T) {
	t.Parallel()
	const a, b = "rm -rf ./A-build-cache", "git push --force origin main"
	outcome := map[string]string{ChoiceDeny: deniedBy, ChoiceOnce: ""}
	for _, task := range []string{"par", "seq"} {
		for _, first := range []string{ChoiceDeny, ChoiceOnce} {
			for _, toolWhen := range []string{"before the confirmation", "after the confirmation"} {
				t.Run(task+"/"+first+" first/tool.complete "+toolWhen, func(t *testing.T) {
					t.Parallel()
					f := newFixture(t, nil)
					f.in.Ingest(event("g1", "s1", sessionFollowed, t0, map[string]any{"reason": "followed", "running": false}))
					f.in.Ingest(legacy("g1", "s1", a, t0))
					if task == "par" {
						f.in.Ingest(legacy("g1", "s1", b, t0))
					}
					ka := f.in.Pending()[0].Key
					done := toolDone("g1", "s1", a, outcome[first], t0)
					if toolWhen == "before the confirmation" {
						f.ans["g1"].set(1, nil, func() { f.in.Ingest(done) })
					}
					if err := f.in.Answer(ctx, ka, first, "tray", false); err != nil {
						t.Fatalf("first answer %q: %v", first, err)
					}
					f.ans["g1"].set(1, nil, nil)
					if toolWhen == "after the confirmation" {
						f.in.Ingest(done)
					}
					if task == "seq" {
						f.in.Ingest(legacy("g1", "s1", b, t0))
					}
					if r := f.get(t, ka); r.State != StateResolved || r.Outcome.Choice != first {
						t.Fatalf("the first request after its own tool.complete: %s %+v", r.State, r.Outcome)
					}
					var kb string
					for _, r := range f.in.Pending() {
						kb = r.Key
					}
					rb := f.get(t, kb)
					if rb.Unbound != "" || !slices.Equal(rb.Choices, knownChoices) {
						t.Fatalf("the second request after Herald's own %q: unbound %q, choices %v", first, rb.Unbound, rb.Choices)
					}
					second := map[string]string{ChoiceDeny: ChoiceOnce, ChoiceOnce: ChoiceDeny}[first]
					if err := f.in.Answer(ctx, kb, second, "tray", false); err != nil {
						t.Fatalf("second answer %q after %q: %v", second, first, err)
					}
					f.in.Ingest(toolDone("g1", "s1", b, outcome[second], t0))
					f.in.Ingest(event("g1", "s1", wire.MessageComplete, t0, wire.CompletePayload{Status: "complete"}))
					for k, choice := range map[string]string{ka: first, kb: second} {
						if r := f.get(t, k); r.State != StateResolved || r.Outcome.Choice != choice {
							t.Errorf("%s: %s %+v, want resolved %q", r.Command, r.State, r.Outcome, choice)
						}
					}
					if got := f.ans["g1"].sent(); len(got) != 2 || got[0].choice != first || got[1].choice != second {
						t.Fatalf("answers sent: %+v", got)
					}
				})
			}
		}
	}
}
