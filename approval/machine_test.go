package approval

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// allStates is every State, in the order the docs list them.
var allStates = []State{StatePending, StateAnswering, StateSentUnknown, StateResolved, StateCancelled, StateExpired, StateOutcomeUnknown, StateFailed}

// arrivalStates are the states a request arrives in (admitLocked,
// admitFailedLocked); one restored from the log may also come back in a
// final state (admitEndedLocked).
var arrivalStates = []State{StatePending, StateFailed}

// TestMachineTable: the table names every state once; a move leads to a
// state of the table and never to itself; only live states move, and
// every live state can reach an end; what a state must hold it may hold;
// every state is reachable from an arrival.
func TestMachineTable(t *testing.T) {
	t.Parallel()
	if len(machine) != len(allStates) {
		t.Fatalf("the table has %d states, want %d", len(machine), len(allStates))
	}
	for _, s := range allStates {
		rule, ok := machine[s]
		switch {
		case !ok:
			t.Fatalf("state %s is not in the table", s)
		case rule.must&^rule.may != 0:
			t.Errorf("%s must hold %s but may not", s, (rule.must &^ rule.may).String())
		case s.Live() && len(rule.to) == 0:
			t.Errorf("live state %s goes nowhere", s)
		case !s.Live() && len(rule.to) != 0:
			t.Errorf("final state %s moves to %v", s, rule.to)
		}
		for _, to := range rule.to {
			if _, ok := machine[to]; !ok || to == s {
				t.Errorf("%s -> %s: not a move to another state of the table", s, to)
			}
		}
		if s.Live() && !slices.ContainsFunc(reachable(s), func(x State) bool { return !x.Live() }) {
			t.Errorf("live state %s never ends", s)
		}
	}
	seen := map[State]bool{}
	for _, a := range arrivalStates {
		for _, s := range reachable(a) {
			seen[s] = true
		}
	}
	for _, s := range allStates {
		if !seen[s] {
			t.Errorf("state %s cannot be reached from an arrival", s)
		}
	}
}

// reachable lists the states reachable from s, s included.
func reachable(s State) []State {
	out := []State{s}
	for i := 0; i < len(out); i++ {
		for _, to := range machine[out[i]].to {
			if !slices.Contains(out, to) {
				out = append(out, to)
			}
		}
	}
	return out
}

// withFlag sets (or clears) one flag of it.
func withFlag(it *item, f flag, on bool) {
	str := func(v string) string {
		if on {
			return v
		}
		return ""
	}
	switch f {
	case flagUncertain:
		it.Uncertain = on
	case flagLastError:
		it.LastError = str("write: broken pipe")
	case flagChoice:
		it.Outcome.Choice, it.Outcome.Surface = str(ChoiceOnce), str("test")
	case flagReason:
		it.Outcome.Reason = CancelReason(str(string(CancelInterrupted)))
	case flagError:
		it.Outcome.Error = str("it names no session")
	case flagHint:
		it.hint = nil
		if on {
			it.hint = &ending{StateExpired, Outcome{Detail: "timed out"}}
		}
	case flagResponded:
		it.responded = str(ChoiceOnce)
	case flagReusedInFlight:
		it.reusedInFlight = on
	case flagRestored:
		it.restored = on
	case flagAwaitsResponded:
		it.awaitsResponded = on
	case flagCrowded:
		it.crowded = on
	case flagMissed:
		it.missed = str("git push --force")
	case flagEndedDuring:
		it.endedDuring = nil
		if on {
			it.endedDuring = &ending{StateCancelled, Outcome{Detail: "the run completed"}}
		}
	default:
		panic(fmt.Sprintf("flag %b has no setter", f))
	}
}

// itemIn is an approval in state s holding the flags s must hold, plus
// extra ones.
func itemIn(s State, extra flag) *item {
	it := &item{Request: Request{Key: "g1/q/s1/q-" + string(s), Kind: KindApproval, Gateway: "g1", Session: "s1", QueueID: "q-" + string(s),
		Command: "rm -rf ./build", Choices: knownChoices, Dialect: DialectEvent, State: s, ReceivedAt: t0, ExpiresAt: t0.Add(DefaultTimeout)}}
	for i := range flagCount {
		if b := flag(1 << i); (machine[s].must|extra)&b != 0 {
			withFlag(it, b, true)
		}
	}
	return it
}

// TestFlagTable: illegal() accepts exactly the flags each state may hold
// and requires those it must hold.
func TestFlagTable(t *testing.T) {
	t.Parallel()
	for _, s := range allStates {
		rule := machine[s]
		if why := itemIn(s, rule.may).illegal(); why != "" {
			t.Errorf("%s with every flag it may hold: %s", s, why)
		}
		for i := range flagCount {
			b := flag(1 << i)
			it := itemIn(s, 0)
			withFlag(it, b, rule.must&b == 0)
			legal := rule.may&b != 0 && rule.must&b == 0
			if why := it.illegal(); (why == "") != legal {
				t.Errorf("%s, flag %s toggled: illegal() = %q, want legal %v", s, b, why, legal)
			}
		}
	}
}

// transitions are the machine's moves as the topic files make them.
var transitions = []struct {
	name string
	to   State
	do   func(in *Inbox, it *item, now time.Time) bool
}{
	{"toAnswering", StateAnswering, func(in *Inbox, it *item, now time.Time) bool { return in.toAnswering(it, ChoiceDeny, "test", now) }},
	{"toPendingAgain", StatePending, func(in *Inbox, it *item, now time.Time) bool { return in.toPendingAgain(it, "not sent", "", now) }},
	{"toSentUnknown", StateSentUnknown, func(in *Inbox, it *item, now time.Time) bool { return in.toSentUnknown(it, "link dropped", now) }},
	{"toEnded resolved", StateResolved, func(in *Inbox, it *item, now time.Time) bool {
		return in.toEnded(it, ending{StateResolved, Outcome{Choice: ChoiceDeny, Surface: "test"}}, now)
	}},
	{"toEnded cancelled", StateCancelled, func(in *Inbox, it *item, now time.Time) bool {
		return in.toEnded(it, ending{StateCancelled, Outcome{Reason: CancelInterrupted}}, now)
	}},
	{"toEnded expired", StateExpired, func(in *Inbox, it *item, now time.Time) bool {
		return in.toEnded(it, ending{StateExpired, Outcome{Detail: "timed out"}}, now)
	}},
	{"toEnded outcome-unknown", StateOutcomeUnknown, func(in *Inbox, it *item, now time.Time) bool {
		return in.toEnded(it, ending{StateOutcomeUnknown, Outcome{Choice: ChoiceDeny, Surface: "test", Detail: "outcome unknown"}}, now)
	}},
	{"toEnded failed", StateFailed, func(in *Inbox, it *item, now time.Time) bool {
		return in.toEnded(it, ending{StateFailed, Outcome{Error: "late"}}, now)
	}},
}

// TestTransitionsCheckFromState: every transition moves a request only
// along the table's moves, from every state, leaving the flags legal in
// the state it enters; any other move is refused, reported as a fault,
// and changes nothing. Every move of the table is some transition's.
func TestTransitionsCheckFromState(t *testing.T) {
	t.Parallel()
	made := map[[2]State]bool{}
	for _, from := range allStates {
		for _, tr := range transitions {
			t.Run(string(from)+"/"+tr.name, func(t *testing.T) {
				t.Parallel()
				var faults []string
				f := newFixture(t, func(o *Options) { o.fault = func(why string) { faults = append(faults, why) } })
				it := itemIn(from, machine[from].may&^flagUncertain)
				before := it.Request.clone()
				var ok bool
				f.in.do(func(now time.Time) {
					f.in.items[it.Key] = it
					ok = tr.do(f.in, it, now)
				})
				want := slices.Contains(machine[from].to, tr.to)
				switch {
				case ok != want:
					t.Fatalf("%s from %s: moved %v, the table says %v (faults %q)", tr.name, from, ok, want, faults)
				case want && (it.State != tr.to || len(faults) > 0):
					t.Fatalf("%s from %s: now %s, faults %q", tr.name, from, it.State, faults)
				case !want && (it.State != from || len(faults) != 1 || !strings.Contains(faults[0], string(from)+" -> "+string(tr.to)) && !strings.Contains(faults[0], "not an ending")):
					t.Fatalf("%s from %s: refused move left %s %+v, faults %q", tr.name, from, it.State, it.Outcome, faults)
				case !want && (it.Outcome != before.Outcome || it.LastError != before.LastError):
					t.Fatalf("%s from %s: a refused move changed the request: %+v", tr.name, from, it.Request)
				}
			})
			if slices.Contains(machine[from].to, tr.to) {
				made[[2]State{from, tr.to}] = true
			}
		}
	}
	for _, from := range allStates {
		for _, to := range machine[from].to {
			if !made[[2]State{from, to}] {
				t.Errorf("no transition makes the move %s -> %s", from, to)
			}
		}
	}
}

// TestOnlyTheMachineWritesState reads the package's source: no file but
// machine.go assigns a request's State (or its whole Request), or builds
// a Request or item with one. A direct write fails here.
func TestOnlyTheMachineWritesState(t *testing.T) {
	t.Parallel()
	// The check itself catches each form of write.
	for _, src := range []string{
		"func f(it *item) { it.State = StatePending }",
		"func f(it *item) { it.State, it.Uncertain = StateExpired, false }",
		"func f(it *item, r Request) { it.Request = r }",
		"func f() { _ = Request{Key: \"k\", State: StateResolved} }",
		"func f() { _ = &item{Request: Request{State: StateFailed}} }",
		"func f(it *item) { p := &it.State; *p = StateResolved }",
	} {
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, "topic.go", "package approval\n"+src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(stateWrites(fset, file)) == 0 {
			t.Errorf("the guard misses a direct write: %s", src)
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "machine.go" {
			continue
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range stateWrites(fset, file) {
			t.Errorf("%s writes a request's state directly; call a transition of machine.go instead", w)
		}
	}
}

// stateWrites lists where file writes a State field, replaces a whole
// Request, or builds a Request or item with a State.
func stateWrites(fset *token.FileSet, file *ast.File) []string {
	var out []string
	at := func(n ast.Node) string { return fset.Position(n.Pos()).String() }
	isField := func(e ast.Expr, names ...string) bool {
		sel, ok := e.(*ast.SelectorExpr)
		return ok && slices.Contains(names, sel.Sel.Name)
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if isField(l, "State", "Request") {
					out = append(out, at(l))
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND && isField(n.X, "State") {
				out = append(out, at(n))
			}
		case *ast.CompositeLit:
			id, ok := n.Type.(*ast.Ident)
			if !ok || (id.Name != "Request" && id.Name != "item") {
				return true
			}
			for _, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "State" {
						out = append(out, at(kv))
					}
				}
			}
		}
		return true
	})
	return out
}
