package approval

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestOwnAnswersKeepTheOrder is issue 28's bug on the fake gateway's
// events: on a FIFO gateway (0.18/0.19: no request ids), in Herald's own
// turn, the agent asks two approvals, at once or one after the other.
// Whatever Herald answers first, the command's tool.complete that follows
// (before or after the gateway confirmed the answer) is Herald's own
// answer taking effect, not one given elsewhere: the session's answer
// order stays proven and the second approval keeps its choices. While two
// wait at once, only deny is accepted (order.go, "Two at once"): an allow
// of the first is refused and nothing is sent; once the deny's
// tool.complete says which one it reached, the other one gets its choices
// back.
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
					if task == "par" && first != ChoiceDeny {
						var ue *UnboundError
						if err := f.in.Answer(ctx, ka, first, "tray", false); !errors.As(err, &ue) || ue.Why != unboundCrowd {
							t.Fatalf("allowing one of two waiting at once: %v", err)
						}
						if got := f.ans["g1"].sent(); len(got) != 0 {
							t.Fatalf("sent %+v", got)
						}
						return
					}
					done := toolDone("g1", "s1", a, outcome[first], t0)
					if toolWhen == "before the confirmation" {
						f.ans["g1"].set(1, nil, func() { f.in.Ingest(done) })
					}
					var ce *CrowdedDenyError
					switch err := f.in.Answer(ctx, ka, first, "tray", false); {
					case task == "par" && toolWhen == "after the confirmation":
						// Which of the two it reached is for its
						// tool.complete to say.
						if !errors.As(err, &ce) || ce.Other != "" {
							t.Fatalf("a deny of one of two waiting at once, confirmed before its tool.complete: %v", err)
						}
						if rb := f.in.Pending()[1]; rb.Unbound != unboundCrowd {
							t.Fatalf("the other one before the deny's tool.complete: unbound %q, choices %v", rb.Unbound, rb.Choices)
						}
					case err != nil:
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

// TestOwnTurnOnFakeGateway is TestRealOwnTurnDenyThenAllow against the
// fake gateway in its 0.18.2 and 0.19.0 forms, behind the real gateway
// client: two approvals in Herald's own turn, at once or one after the
// other; Herald denies the first shown, and allows the one left once the
// deny's tool.complete is in, which the rig delivers before or after the
// gateway's reply to the deny reached Herald. Two at once may be
// announced in the other order than the gateway queues them
// (hermestest.Options.SwapParallel): the deny then reaches the other one,
// which Herald learns from its tool.complete. The gateway applies each
// answer to its command, and Herald records what the gateway applied.
func TestOwnTurnOnFakeGateway(t *testing.T) {
	t.Parallel()
	const c1, c2 = "rm -rf ./A-build-cache", "git push --force origin main"
	for _, version := range []string{"0.18.2", "0.19.0"} {
		for _, task := range []string{"approve-par", "approve-par swapped", "approve-seq"} {
			for _, before := range []bool{true, false} {
				name := version + "/" + task + map[bool]string{true: "/tool.complete before the reply", false: "/tool.complete after the reply"}[before]
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					swapped := task == "approve-par swapped"
					task := strings.TrimSuffix(task, " swapped")
					srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy, Version: version, SwapParallel: swapped})
					defer srv.Close()
					rig := newOwnTurnRig(t, srv, before)
					ref, err := rig.client.CreateSession(rig.ctx, nil)
					if err != nil {
						t.Fatal(err)
					}
					if err := rig.client.Call(rig.ctx, "prompt.submit", map[string]any{"session_id": ref.ID, "text": task + ": " + c1 + " || " + c2}, nil); err != nil {
						t.Fatal(err)
					}
					f := rig.f
					first := f.waitChange(t, "the first approval", func(c Change) bool { return c.Kind == ChangeArrived }).Request
					if task == "approve-par" {
						f.waitChange(t, "the second approval", func(c Change) bool { return c.Kind == ChangeArrived })
						var ue *UnboundError
						if err := f.in.Answer(rig.ctx, first.Key, ChoiceOnce, "tray", false); !errors.As(err, &ue) || ue.Why != unboundCrowd {
							t.Fatalf("allowing one of two waiting at once: %v", err)
						}
					}
					var ce *CrowdedDenyError
					switch err := f.in.Answer(rig.ctx, first.Key, ChoiceDeny, "tray", false); {
					case task == "approve-par" && !before:
						// Its tool.complete, still to come, says which of
						// the two it reached.
						if !errors.As(err, &ce) || ce.Other != "" {
							t.Fatalf("deny %q, confirmed before its tool.complete: %v", first.Command, err)
						}
					case swapped:
						// Its tool.complete came first: it reached c1.
						if !errors.As(err, &ce) || ce.Other != c1 {
							t.Fatalf("deny %q, which reached %q: %v", first.Command, c1, err)
						}
					case err != nil:
						t.Fatalf("deny %q: %v", first.Command, err)
					}
					close(rig.replied)
					if !rig.wait(rig.deniedIn) {
						t.Fatal("no tool.complete for the deny")
					}
					var second Request
					for second.Key == "" {
						for _, r := range f.in.Pending() {
							second = r
						}
						if second.Key == "" {
							f.waitChange(t, "the second approval", func(c Change) bool { return c.Kind == ChangeArrived })
						}
					}
					if err := f.in.Answer(rig.ctx, second.Key, ChoiceOnce, "tray", false); err != nil {
						t.Fatalf("allowing %q after denying %q: %v", second.Command, first.Command, err)
					}
					got := srv.Answers()
					if len(got) != 2 || got[0].Command != c1 || got[0].Choice != ChoiceDeny || got[1].Command != c2 || got[1].Choice != ChoiceOnce {
						t.Fatalf("the gateway applied %+v, want deny %q then once %q", got, c1, c2)
					}
					if first.Command != map[bool]string{false: c1, true: c2}[swapped] || second.Command != map[bool]string{false: c2, true: c2}[swapped] {
						t.Fatalf("shown first %q, answered second %q", first.Command, second.Command)
					}
					for _, r := range f.in.Snapshot().Requests {
						if want := map[string]string{c1: ChoiceDeny, c2: ChoiceOnce}[r.Command]; r.State != StateResolved || r.Outcome.Choice != want {
							t.Errorf("Herald records %q %s %q (%s), the gateway applied %q", r.Command, r.State, r.Outcome.Choice, r.Outcome.Detail, want)
						}
					}
				})
			}
		}
	}
}

// ownTurnRig is an inbox behind a gateway client against a fake gateway,
// which orders the deny's tool.complete and the gateway's reply to it as
// the test asks.
type ownTurnRig struct {
	f        *fixture
	client   *gateway.Client
	ctx      context.Context
	replied  chan struct{} // closed by the test once Herald's deny returned
	deniedIn chan struct{} // closed once the deny's tool.complete is in
}

// newOwnTurnRig: before, the client's reply to the deny is held until its
// tool.complete is in; otherwise that tool.complete is held until the
// reply returned (the test closes replied).
func newOwnTurnRig(t *testing.T, srv *hermestest.Server, before bool) *ownTurnRig {
	t.Helper()
	rig := &ownTurnRig{replied: make(chan struct{}), deniedIn: make(chan struct{})}
	var cancel context.CancelFunc
	rig.ctx, cancel = context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	connected := make(chan struct{})
	var once sync.Once
	rig.f = newFixture(t, func(o *Options) {
		o.Answerers = func(string) (Answerer, bool) { return holdReply{rig, before}, true }
	})
	var err error
	rig.client, err = gateway.New(gateway.Config{
		Name: "gw", URL: srv.URL, Token: srv.Token(),
		OnEvent: func(ev wire.Event) {
			denied := ev.Kind == wire.ToolComplete && strings.Contains(string(ev.Payload), "denied")
			if denied && !before {
				rig.wait(rig.replied)
			}
			rig.f.in.Ingest(ev)
			if denied {
				close(rig.deniedIn)
			}
		},
		OnStatus: func(s source.Status) {
			if s.State == source.StateConnected {
				once.Do(func() { close(connected) })
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	go rig.client.Run(rig.ctx)
	if !rig.wait(connected) {
		t.Fatal("not connected to the fake gateway")
	}
	return rig
}

// wait waits for ch to close; false when the rig's deadlock guard ran
// out first.
func (rig *ownTurnRig) wait(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-rig.ctx.Done():
		return false
	}
}

// holdReply is the gateway client as the inbox's Answerer; before, it
// returns its reply to a deny only once the deny's tool.complete is in.
type holdReply struct {
	rig    *ownTurnRig
	before bool
}

func (h holdReply) RespondApproval(ctx context.Context, session, choice, id string) (int, error) {
	n, err := h.rig.client.RespondApproval(ctx, session, choice, id)
	if choice == ChoiceDeny && h.before {
		h.rig.wait(h.rig.deniedIn)
	}
	return n, err
}

func (h holdReply) RespondServerRequest(ctx context.Context, id, choice string) error {
	return h.rig.client.RespondServerRequest(ctx, id, choice)
}
