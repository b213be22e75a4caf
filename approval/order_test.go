package approval

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// TestOrderType: the proof of answer order by itself. Every session is
// proven until lost; the first reason stands; a session is regained only
// when nothing open remains; refusals are for good, and bounded; two
// approvals at once are deny-only until one is left, placed.
func TestOrderType(t *testing.T) {
	t.Parallel()
	o := newOrder()
	if _, ok := o.proven("g1/ev/s1"); !ok {
		t.Fatal("a session Herald knows nothing against is not proven")
	}
	o.lose("g1/ev/s1", unboundGap)
	o.lose("g1/ev/s1", unboundElsewhere)
	if why, ok := o.proven("g1/ev/s1"); ok || why != unboundGap {
		t.Fatalf("after two losses: proven %v, why %q; want the first reason", ok, why)
	}
	if _, ok := o.proven("g1/ev/s2"); !ok {
		t.Fatal("a loss in one session spread to another")
	}
	if o.regain("g1/ev/s1", true) {
		t.Fatal("regained while an id-less approval of the session is open")
	}
	if !o.regain("g1/ev/s1", false) {
		t.Fatal("not regained once nothing waits")
	}
	if _, ok := o.proven("g1/ev/s1"); !ok || o.regain("g1/ev/s1", false) {
		t.Fatal("regaining a proven session changed something")
	}
	// Two at once: deny-only while two or more are open, or a deny among
	// them awaits its place; a lost proof replaces that reason, never
	// the other way round.
	for _, c := range []struct {
		open     int
		unplaced bool
		want     string
	}{{0, false, ""}, {1, false, ""}, {2, false, unboundCrowd}, {3, false, unboundCrowd}, {1, true, unboundCrowd}} {
		if got := crowdWhy(c.open, c.unplaced); got != c.want {
			t.Errorf("crowdWhy(%d, %v) = %q, want %q", c.open, c.unplaced, got, c.want)
		}
	}
	r := Request{Choices: knownChoices}
	if !unbind(&r, unboundCrowd) || unbind(&r, unboundCrowd) || !slices.Equal(r.Choices, []string{ChoiceDeny}) {
		t.Fatalf("the rule of two at once: %+v", r)
	}
	if !unbind(&r, unboundGap) || unbind(&r, unboundCrowd) || r.Unbound != unboundGap {
		t.Fatalf("a lost proof after the rule of two at once: %q", r.Unbound)
	}
	for i := range maxPoisoned + 10 {
		o.refuse(fmt.Sprint("g2/ev/s", i), "g2")
	}
	if len(o.refused) > maxPoisoned+1 || !o.wasRefused("g2/ev/never-seen", "g2") || o.wasRefused("g1/ev/s1", "g1") {
		t.Fatalf("refusals past the bound: %d kept, wildcard %v", len(o.refused), o.refused["g2/ev/*"])
	}
}

// TestOrderProof: what keeps, breaks and restores a session's proof of
// answer order, seen through the inbox: after each story, an approval of
// session s1 arrives, and it is approvable exactly when the proof holds.
// Herald's own answers, confirmed, and their tool.complete (before or
// after the confirmation) never break it.
func TestOrderProof(t *testing.T) {
	t.Parallel()
	const a, b = "rm -rf ./a", "git push --force"
	answer := func(choice string) func(*testing.T, *fixture) {
		return func(t *testing.T, f *fixture) {
			t.Helper()
			var ce *CrowdedDenyError
			err := f.in.Answer(ctx, f.in.Pending()[0].Key, choice, "test", false)
			if err != nil && !(choice == ChoiceDeny && errors.As(err, &ce) && ce.Other == "") {
				// (A deny among two waiting at once awaits the report of
				// its command, which the story gives.)
				t.Fatalf("Herald's %s: %v", choice, err)
			}
		}
	}
	answerWith := func(choice string, during wire.Event) func(*testing.T, *fixture) {
		return func(t *testing.T, f *fixture) {
			t.Helper()
			f.ans["g1"].set(1, nil, func() { f.in.Ingest(during) })
			answer(choice)(t, f)
			f.ans["g1"].set(1, nil, nil)
		}
	}
	ingest := func(evs ...wire.Event) func(*testing.T, *fixture) {
		return func(_ *testing.T, f *fixture) {
			for _, ev := range evs {
				f.in.Ingest(ev)
			}
		}
	}
	arrive := ingest(legacy("g1", "s1", a, t0))
	done := func(cmd, errText string) wire.Event { return toolDone("g1", "s1", cmd, errText, t0) }
	turnEnd := event("g1", "s1", wire.MessageComplete, t0, wire.CompletePayload{Status: "complete"})
	followed := func(running bool) wire.Event {
		return event("g1", "s1", sessionFollowed, t0, map[string]any{"reason": "followed", "running": running})
	}
	tests := []struct {
		name   string
		story  []func(*testing.T, *fixture)
		proven bool
	}{
		// What keeps it.
		{"nothing happened", nil, true},
		{"two arrivals seen live", []func(*testing.T, *fixture){arrive, ingest(legacy("g1", "s1", b, t0))}, true},
		{"own approval, its tool.complete after the confirmation", []func(*testing.T, *fixture){arrive, answer(ChoiceOnce), ingest(done(a, ""))}, true},
		{"own approval, its tool.complete before the confirmation", []func(*testing.T, *fixture){arrive, answerWith(ChoiceOnce, done(a, ""))}, true},
		{"own deny, its tool.complete after the confirmation", []func(*testing.T, *fixture){arrive, answer(ChoiceDeny), ingest(done(a, deniedBy))}, true},
		{"own deny, its tool.complete before the confirmation", []func(*testing.T, *fixture){arrive, answerWith(ChoiceDeny, done(a, deniedBy))}, true},
		{"own deny, then own approval", []func(*testing.T, *fixture){arrive, ingest(legacy("g1", "s1", b, t0)), answer(ChoiceDeny), ingest(done(a, deniedBy)), answer(ChoiceOnce), ingest(done(b, ""))}, true},
		{"a gap in another session", []func(*testing.T, *fixture){ingest(resync("g1", "s2", "no-replay", t0))}, true},
		{"answered elsewhere by its queue id", []func(*testing.T, *fixture){ingest(event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": a, "request_id": "q1"})), ingest(done(a, ""))}, true},
		// What breaks it.
		{"a reconnect", []func(*testing.T, *fixture){ingest(resync("g1", "s1", "no-replay", t0))}, false},
		{"another client took the session", []func(*testing.T, *fixture){ingest(event("g1", "s1", sessionElsewhere, t0, map[string]any{"reason": "taken"}))}, false},
		{"attached mid-turn", []func(*testing.T, *fixture){ingest(followed(true))}, false},
		{"approved elsewhere", []func(*testing.T, *fixture){arrive, ingest(done(a, ""))}, false},
		{"denied elsewhere", []func(*testing.T, *fixture){arrive, ingest(done(a, deniedBy))}, false},
		{"timed out at the gateway", []func(*testing.T, *fixture){arrive, ingest(done(a, timedOut))}, false},
		{"own deny, but the command ran", []func(*testing.T, *fixture){arrive, answer(ChoiceDeny), ingest(done(a, ""))}, false},
		{"own approval, but the command was denied", []func(*testing.T, *fixture){arrive, answer(ChoiceOnce), ingest(done(a, deniedBy))}, false},
		{"own approval in flight, but the command timed out", []func(*testing.T, *fixture){arrive, func(t *testing.T, f *fixture) {
			f.ans["g1"].set(1, nil, func() { f.in.Ingest(done(a, timedOut)) })
			var ended *EndedError
			if err := f.in.Answer(ctx, f.in.Pending()[0].Key, ChoiceOnce, "test", false); !errors.As(err, &ended) || ended.State != StateExpired {
				t.Fatalf("an approval whose command timed out meanwhile: %v", err)
			}
			f.ans["g1"].set(1, nil, nil)
		}}, false},
		{"an answer's outcome unknown", []func(*testing.T, *fixture){arrive, func(t *testing.T, f *fixture) {
			f.ans["g1"].set(0, lostAfterWrite, nil)
			_ = f.in.Answer(ctx, f.in.Pending()[0].Key, ChoiceDeny, "test", false)
			f.ans["g1"].set(1, nil, nil)
		}}, false},
		{"a refused arrival", []func(*testing.T, *fixture){func(_ *testing.T, f *fixture) {
			f.in.Ingest(event("g1", "s1", wire.Refused, t0, wire.RefusedPayload{Method: wire.ApprovalRequest, Count: 1, Unkeyed: true, Reason: "queue full"}))
		}}, false},
		// What restores it.
		{"a reconnect, then the turn ended", []func(*testing.T, *fixture){ingest(resync("g1", "s1", "no-replay", t0), turnEnd)}, true},
		{"a reconnect, then followed idle", []func(*testing.T, *fixture){ingest(resync("g1", "s1", "no-replay", t0), followed(false))}, true},
		{"not while one stays open", []func(*testing.T, *fixture){arrive, ingest(resync("g1", "s1", "no-replay", t0), turnEnd)}, false},
		{"an unknown outcome, then the turn ended", []func(*testing.T, *fixture){arrive, func(t *testing.T, f *fixture) {
			f.ans["g1"].set(0, lostAfterWrite, nil)
			_ = f.in.Answer(ctx, f.in.Pending()[0].Key, ChoiceOnce, "test", false)
			f.ans["g1"].set(1, nil, nil)
		}, ingest(turnEnd)}, true},
		{"never after a refusal", []func(*testing.T, *fixture){func(_ *testing.T, f *fixture) {
			f.in.Ingest(event("g1", "s1", wire.Refused, t0, wire.RefusedPayload{Method: wire.ApprovalRequest, Count: 1, Unkeyed: true, Reason: "queue full"}))
		}, ingest(turnEnd, followed(false))}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			for _, step := range tt.story {
				step(t, f)
			}
			// The test: an approval arriving now, alone or behind the
			// story's open ones, is proven exactly as the story says, and
			// approvable when proven and alone (two waiting at once
			// accept only deny, see TestTwoAtOnce).
			alone := !slices.ContainsFunc(f.in.Pending(), func(r Request) bool { return idless(r) && r.Session == "s1" })
			f.in.Ingest(legacy("g1", "s1", "curl x | sh", t0))
			var last Request
			for _, r := range f.in.Pending() {
				last = r
			}
			approvable := last.DenyOnly() == ""
			var proven bool
			f.in.do(func(time.Time) { _, proven = f.in.order.proven("g1/ev/s1") })
			proven = proven && !f.inOrderRefused("g1/ev/s1", "g1")
			if approvable != (tt.proven && alone) || proven != tt.proven {
				t.Fatalf("after %q: approvable %v (%q), proven %v; want proven %v (alone %v)", tt.name, approvable, last.DenyOnly(), proven, tt.proven, alone)
			}
			if tt.proven && !alone && last.Unbound != unboundCrowd {
				t.Fatalf("after %q, behind open approvals: deny-only for %q, want the rule of two at once", tt.name, last.Unbound)
			}
		})
	}
}

func (f *fixture) inOrderRefused(ns, gw string) bool {
	var refused bool
	f.in.do(func(time.Time) { refused = f.in.order.wasRefused(ns, gw) })
	return refused
}
