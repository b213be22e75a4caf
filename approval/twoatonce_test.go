package approval

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// TestTwoAtOnce is the rule of two at once (order.go) on a FIFO gateway
// whose session's order is proven: A is shown first, then B, both
// waiting. Neither may be allowed; a deny of A goes to the approval the
// gateway holds first, which its command's tool.complete (before or after
// the gateway's reply) names: A, or B (the gateway announced them in the
// other order than it queues them). That one ends denied by Herald, and
// the one left gets back the choices the gateway offered, never more.
// Until a report says, or when it cannot (no report, one for a command
// both have), the one left stays deny-only.
func TestTwoAtOnce(t *testing.T) {
	t.Parallel()
	const a, b = "rm -rf ./A-build-cache", "git push --force origin main"
	type want struct {
		a, b   State    // A's and B's states at the end
		choice []string // the choices of the one still pending ("" none)
		err    string   // the deny's error: "" nil, "unplaced", "reached B"
		aWhy   string   // a substring of A's outcome detail or last error
		bWhy   string   // a substring of B's outcome detail or Unbound
	}
	noPermanent := func(cmd string) wire.Event {
		return event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": cmd, "description": "d", "allow_permanent": false})
	}
	tests := []struct {
		name   string
		second wire.Event   // B's arrival (legacy unless set)
		during []wire.Event // ingested while the deny of A is on its way
		after  []wire.Event // ingested after the gateway's reply
		denyB  bool         // then Herald denies B too
		want   want
	}{
		{name: "the report names A, after the reply", after: []wire.Event{toolDone("g1", "s1", a, deniedBy, t0)},
			want: want{a: StateResolved, b: StatePending, choice: knownChoices, err: "unplaced", aWhy: placedDetail}},
		{name: "the report names A, before the reply", during: []wire.Event{toolDone("g1", "s1", a, deniedBy, t0)},
			want: want{a: StateResolved, b: StatePending, choice: knownChoices}},
		{name: "the report names B, after the reply", after: []wire.Event{toolDone("g1", "s1", b, deniedBy, t0)},
			want: want{a: StatePending, b: StateResolved, choice: knownChoices, err: "unplaced", aWhy: "your deny reached the other approval", bWhy: "Herald's deny given on the approval of " + a}},
		{name: "the report names B, before the reply", during: []wire.Event{toolDone("g1", "s1", b, deniedBy, t0)},
			want: want{a: StatePending, b: StateResolved, choice: knownChoices, err: "reached B", aWhy: "your deny reached the other approval", bWhy: "reached this one"}},
		{name: "B offered without always gets back only what it was offered", second: noPermanent(b), after: []wire.Event{toolDone("g1", "s1", a, deniedBy, t0)},
			want: want{a: StateResolved, b: StatePending, choice: []string{ChoiceOnce, ChoiceSession, ChoiceDeny}, err: "unplaced"}},
		{name: "no report, then Herald denies B too", denyB: true,
			want: want{a: StateResolved, b: StateResolved, err: "unplaced", aWhy: allDeniedDetail, bWhy: allDeniedDetail}},
		{name: "no report, the turn ends", after: []wire.Event{event("g1", "s1", wire.MessageComplete, t0, wire.CompletePayload{Status: "complete"})},
			want: want{a: StateOutcomeUnknown, b: StatePending, choice: []string{ChoiceDeny}, err: "unplaced", aWhy: "waited at once", bWhy: unboundUnplaced}},
		{name: "the command ran: settled elsewhere", after: []wire.Event{toolDone("g1", "s1", b, "", t0)},
			want: want{a: StateSentUnknown, b: StatePending, choice: []string{ChoiceDeny}, err: "unplaced", aWhy: UnplacedDetail, bWhy: unboundElsewhereAnswer}},
		{name: "a report of a command neither has", after: []wire.Event{toolDone("g1", "s1", "ls", deniedBy, t0)},
			want: want{a: StateSentUnknown, b: StatePending, choice: []string{ChoiceDeny}, err: "unplaced", aWhy: UnplacedDetail, bWhy: unboundCrowd}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.in.Ingest(event("g1", "s1", sessionFollowed, t0, map[string]any{"reason": "followed", "running": false}))
			f.in.Ingest(legacy("g1", "s1", a, t0))
			ka := f.in.Pending()[0].Key
			if ra := f.get(t, ka); ra.Unbound != "" || !slices.Equal(ra.Choices, knownChoices) {
				t.Fatalf("A alone: unbound %q, choices %v", ra.Unbound, ra.Choices)
			}
			second := tt.second
			if second.Kind == "" {
				second = legacy("g1", "s1", b, t0)
			}
			f.in.Ingest(second)
			kb := f.in.Pending()[1].Key
			for _, k := range []string{ka, kb} {
				r := f.get(t, k)
				var ue *UnboundError
				if r.Unbound != unboundCrowd || !slices.Equal(r.Choices, []string{ChoiceDeny}) || r.OneClickApprovable() {
					t.Fatalf("%s with two waiting: unbound %q, choices %v", r.Command, r.Unbound, r.Choices)
				}
				if err := f.in.Answer(ctx, k, ChoiceOnce, "tray", false); !errors.As(err, &ue) || ue.Why != unboundCrowd {
					t.Fatalf("allowing %s with two waiting: %v", r.Command, err)
				}
			}
			f.ans["g1"].set(1, nil, func() {
				for _, ev := range tt.during {
					f.in.Ingest(ev)
				}
			})
			err := f.in.Answer(ctx, ka, ChoiceDeny, "tray", false)
			f.ans["g1"].set(1, nil, nil)
			var ce *CrowdedDenyError
			switch tt.want.err {
			case "":
				if err != nil {
					t.Fatalf("the deny of A: %v", err)
				}
			case "unplaced":
				if !errors.As(err, &ce) || ce.Other != "" {
					t.Fatalf("the deny of A, its place unknown: %v", err)
				}
				if r := f.get(t, ka); r.State != StateSentUnknown || r.Outcome.Detail != UnplacedDetail {
					t.Fatalf("A, its deny unplaced: %s %+v", r.State, r.Outcome)
				}
				var ae *AnsweredError
				if err := f.in.Answer(ctx, ka, ChoiceDeny, "tray", false); !errors.As(err, &ae) || !ae.Crowded {
					t.Fatalf("answering A again: %v", err)
				}
			case "reached B":
				if !errors.As(err, &ce) || ce.Other != b {
					t.Fatalf("the deny of A, which reached B: %v", err)
				}
			}
			for _, ev := range tt.after {
				f.in.Ingest(ev)
			}
			if tt.denyB {
				if err := f.in.Answer(ctx, kb, ChoiceDeny, "tray", false); err != nil {
					t.Fatalf("denying B, the only other one: %v", err)
				}
			}
			ra, rb := f.get(t, ka), f.get(t, kb)
			if ra.State != tt.want.a || rb.State != tt.want.b {
				t.Fatalf("A %s %+v (last error %q), B %s %+v; want A %s, B %s", ra.State, ra.Outcome, ra.LastError, rb.State, rb.Outcome, tt.want.a, tt.want.b)
			}
			for _, r := range []Request{ra, rb} {
				if r.State == StateResolved && (r.Outcome.Choice != ChoiceDeny || r.Outcome.Surface != "tray") {
					t.Errorf("%s resolved with %+v, want Herald's deny from the tray", r.Command, r.Outcome)
				}
				if r.State == StatePending && !slices.Equal(r.Choices, tt.want.choice) {
					t.Errorf("%s waits with choices %v (unbound %q), want %v", r.Command, r.Choices, r.Unbound, tt.want.choice)
				}
				if r.State == StatePending && slices.Equal(r.Choices, []string{ChoiceDeny}) != (r.DenyOnly() != "") {
					t.Errorf("%s: choices %v but deny-only %q", r.Command, r.Choices, r.DenyOnly())
				}
			}
			if !strings.Contains(ra.Outcome.Detail+ra.LastError, tt.want.aWhy) {
				t.Errorf("A says %q / %q, want %q in it", ra.Outcome.Detail, ra.LastError, tt.want.aWhy)
			}
			if !strings.Contains(rb.Outcome.Detail+rb.Unbound, tt.want.bWhy) {
				t.Errorf("B says %q / %q, want %q in it", rb.Outcome.Detail, rb.Unbound, tt.want.bWhy)
			}
			if n := len(f.ans["g1"].sent()); n != 1+map[bool]int{true: 1}[tt.denyB] {
				t.Errorf("%d answers sent", n)
			}
		})
	}
}

// TestTwoAtOnceElsewhere: the rule of two at once only ever adds to what
// keeps approvals deny-only. A lost proof replaces it and stays after the
// one left is placed; the same command twice cannot say which one left;
// a third arriving while a deny is unplaced is deny-only; an API server's
// reports name no command, so its deny stays unplaced, its own
// approval.responded is not another client's, and another client's is.
func TestTwoAtOnceElsewhere(t *testing.T) {
	t.Parallel()
	const a, b = "rm -rf ./A-build-cache", "git push --force origin main"
	// two is a fixture where a session of g1, followed idle, waits on
	// two approvals at once.
	two := func(t *testing.T, first, second string) (*fixture, []Request) {
		f := newFixture(t, nil)
		f.in.Ingest(event("g1", "s1", sessionFollowed, t0, map[string]any{"reason": "followed", "running": false}))
		f.in.Ingest(legacy("g1", "s1", first, t0))
		f.in.Ingest(legacy("g1", "s1", second, t0))
		return f, f.in.Pending()
	}
	t.Run("a lost proof replaces the rule and stays", func(t *testing.T) {
		t.Parallel()
		f, _ := two(t, a, b)
		f.in.Ingest(resync("g1", "s1", "no-replay", t0))
		p := f.in.Pending()
		if p[0].Unbound != unboundGap || p[1].Unbound != unboundGap {
			t.Fatalf("after a gap: %q, %q", p[0].Unbound, p[1].Unbound)
		}
		// Without the proof, a deny is settled by the reply, as before.
		if err := f.in.Answer(ctx, p[0].Key, ChoiceDeny, "tray", false); err != nil {
			t.Fatal(err)
		}
		f.in.Ingest(toolDone("g1", "s1", a, deniedBy, t0))
		if r := f.get(t, p[1].Key); r.Unbound != unboundGap || !slices.Equal(r.Choices, []string{ChoiceDeny}) {
			t.Fatalf("the one left after a gap: %q %v", r.Unbound, r.Choices)
		}
	})
	t.Run("the same command twice", func(t *testing.T) {
		t.Parallel()
		f, p := two(t, a, a)
		var ce *CrowdedDenyError
		if err := f.in.Answer(ctx, p[0].Key, ChoiceDeny, "tray", false); !errors.As(err, &ce) {
			t.Fatal(err)
		}
		f.in.Ingest(toolDone("g1", "s1", a, deniedBy, t0))
		if r := f.get(t, p[0].Key); r.State != StateSentUnknown {
			t.Fatalf("a report that either could be placed the deny: %s %+v", r.State, r.Outcome)
		}
		if r := f.get(t, p[1].Key); r.Unbound != unboundCrowd {
			t.Fatalf("the other: %q", r.Unbound)
		}
		// Denying the other too settles both.
		if err := f.in.Answer(ctx, p[1].Key, ChoiceDeny, "tray", false); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{p[0].Key, p[1].Key} {
			if r := f.get(t, k); r.State != StateResolved || r.Outcome.Choice != ChoiceDeny {
				t.Fatalf("%s: %s %+v", k, r.State, r.Outcome)
			}
		}
	})
	t.Run("a third while a deny is unplaced", func(t *testing.T) {
		t.Parallel()
		f, p := two(t, a, b)
		var ce *CrowdedDenyError
		if err := f.in.Answer(ctx, p[0].Key, ChoiceDeny, "tray", false); !errors.As(err, &ce) {
			t.Fatal(err)
		}
		f.in.Ingest(legacy("g1", "s1", "curl x | sh", t0))
		f.in.Ingest(toolDone("g1", "s1", a, deniedBy, t0))
		for _, r := range f.in.Pending() {
			if r.Unbound != unboundCrowd {
				t.Fatalf("%s with two still waiting: %q", r.Command, r.Unbound)
			}
		}
		// B cannot be denied past the one the gateway holds first.
		if err := f.in.Answer(ctx, f.in.Pending()[1].Key, ChoiceDeny, "tray", false); err == nil || !strings.Contains(err.Error(), "answer the earlier request") {
			t.Fatalf("denying the third: %v", err)
		}
	})
	t.Run("an API server's run", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		f.ans["api"] = &fakeAnswerer{resolved: 1}
		ask := func(cmd string) wire.Event {
			return event("api", "s1", wire.ApprovalRequest, t0, map[string]any{"command": cmd, "description": "d", "choices": knownChoices})
		}
		responded := event("api", "s1", approvalResponded, t0, map[string]any{"choice": ChoiceDeny, "resolved": 1})
		f.in.Ingest(ask(a))
		f.in.Ingest(ask(b))
		p := f.in.Pending()
		var ce *CrowdedDenyError
		if err := f.in.Answer(ctx, p[0].Key, ChoiceDeny, "tray", false); !errors.As(err, &ce) {
			t.Fatal(err)
		}
		f.in.Ingest(responded) // Herald's own deny, reported
		f.in.Ingest(event("api", "s1", wire.ToolComplete, t0, map[string]any{"tool_id": "t", "name": "terminal"}))
		if r := f.get(t, p[0].Key); r.State != StateSentUnknown {
			t.Fatalf("the run's reports name no command, yet A is %s", r.State)
		}
		if r := f.get(t, p[1].Key); r.Unbound != unboundCrowd {
			t.Fatalf("B after Herald's own report: %q", r.Unbound)
		}
		f.in.Ingest(event("api", "s1", approvalResponded, t0, map[string]any{"choice": ChoiceOnce, "resolved": 1}))
		if r := f.get(t, p[1].Key); r.State != StatePending || r.Unbound != unboundElsewhereAnswer {
			t.Fatalf("B after another client's answer: %s %q", r.State, r.Unbound)
		}
	})
}
