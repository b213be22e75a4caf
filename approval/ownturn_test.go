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

// TestAPIServerRunAnsweredElsewhere: on an API server of 0.18/0.19
// (/v1/runs/{id}/approval: no id, the run's oldest approval first), the
// run's stream reports every answer with approval.responded, Herald's
// own (before or after its reply confirmed it) and another client's.
// Herald's own never reads as another client's; another client's settles
// the run's oldest approval in Herald too, so Herald never shows it as
// waiting, and an approval Herald then sends reaches what it shows.
func TestAPIServerRunAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	const a, b = "rm -rf ./A-build-cache", "git push --force origin main"
	ask := func(cmd string) wire.Event {
		return event("api", "run1", wire.ApprovalRequest, t0, map[string]any{"command": cmd, "description": "d", "choices": knownChoices})
	}
	responded := func(choice string) wire.Event {
		return event("api", "run1", approvalResponded, t0, map[string]any{"choice": choice, "resolved": 1})
	}
	ranTool := event("api", "run1", wire.ToolComplete, t0, map[string]any{"tool_id": "t", "name": "terminal"})
	for _, tt := range []struct {
		name string
		// first settles the run's oldest approval (a) and returns whether
		// Herald answered it.
		first func(t *testing.T, f *fixture, ka string) bool
	}{
		{"Herald's answer, reported after its reply", func(t *testing.T, f *fixture, ka string) bool {
			if err := f.in.Answer(ctx, ka, ChoiceDeny, "tray", false); err != nil {
				t.Fatal(err)
			}
			f.in.Ingest(responded(ChoiceDeny))
			return true
		}},
		{"Herald's answer, reported before its reply", func(t *testing.T, f *fixture, ka string) bool {
			f.ans["api"].set(1, nil, func() { f.in.Ingest(responded(ChoiceDeny)) })
			if err := f.in.Answer(ctx, ka, ChoiceDeny, "tray", false); err != nil {
				t.Fatal(err)
			}
			f.ans["api"].set(1, nil, nil)
			return true
		}},
		{"another client's answer", func(t *testing.T, f *fixture, ka string) bool {
			f.in.Ingest(responded(ChoiceOnce))
			return false
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.ans["api"] = &fakeAnswerer{resolved: 1}
			f.in.Ingest(ask(a))
			ka := f.in.Pending()[0].Key
			byHerald := tt.first(t, f, ka)
			f.in.Ingest(ranTool)
			f.in.Ingest(ask(b))
			ra := f.get(t, ka)
			switch {
			case byHerald && (ra.State != StateResolved || ra.Outcome.Choice != ChoiceDeny):
				t.Fatalf("Herald's deny of a: %s %+v", ra.State, ra.Outcome)
			case !byHerald && (ra.State != StateCancelled || ra.Outcome.Reason != CancelResolvedElsewhere):
				t.Fatalf("a, answered in another client, is %s %+v: Herald would send its next answer to it, and the server to b", ra.State, ra.Outcome)
			}
			p := f.in.Pending()
			if len(p) != 1 || p[0].Command != b || p[0].DenyOnly() != "" {
				t.Fatalf("waiting after a was settled: %+v", p)
			}
			if err := f.in.Answer(ctx, p[0].Key, ChoiceOnce, "tray", false); err != nil {
				t.Fatalf("approving b: %v", err)
			}
			f.in.Ingest(responded(ChoiceOnce))
			if r := f.get(t, p[0].Key); r.State != StateResolved || r.Outcome.Choice != ChoiceOnce {
				t.Fatalf("b: %s %+v", r.State, r.Outcome)
			}
		})
	}
}

// TestAPIServerRunAnsweredElsewhereUnproven: another client's answer to a
// run whose order Herald cannot prove (events may have been missed), or
// to an approval Herald never saw, ends nothing in Herald (it cannot tell
// which approval it settled) and leaves the run's approvals deny-only.
func TestAPIServerRunAnsweredElsewhereUnproven(t *testing.T) {
	t.Parallel()
	responded := event("api", "run1", approvalResponded, t0, map[string]any{"choice": ChoiceOnce, "resolved": 1})
	for _, tt := range []struct {
		name   string
		before []wire.Event
		asked  int // approvals asked, before and after
	}{
		{"after a gap", []wire.Event{
			event("api", "run1", wire.ApprovalRequest, t0, map[string]any{"command": "rm -rf ./a", "choices": knownChoices}),
			resync("api", "run1", "no-replay", t0),
		}, 2},
		{"one Herald never saw", nil, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			for _, ev := range tt.before {
				f.in.Ingest(ev)
			}
			f.in.Ingest(responded)
			f.in.Ingest(event("api", "run1", wire.ApprovalRequest, t0, map[string]any{"command": "git push --force", "choices": knownChoices}))
			p := f.in.Pending()
			if len(p) != tt.asked {
				t.Fatalf("waiting: %+v, want the %d approvals asked, none ended", p, tt.asked)
			}
			for _, r := range p {
				if r.Unbound == "" {
					t.Fatalf("%q is approvable though Herald cannot tell which approval another client settled", r.Command)
				}
			}
		})
	}
}
