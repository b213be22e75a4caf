package app

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/service"
)

func gateways(states ...string) []GatewayView {
	var out []GatewayView
	for i, st := range states {
		out = append(out, GatewayView{Name: string(rune('a' + i)), State: st})
	}
	return out
}

func viewOf(r approval.Request) ApprovalView { return approvalViewIn(r, "Nightly") }

// TestTrayStatePrecedence: the icon shows the one state that matters
// most: what waits for the user, then no gateway at all, then what Herald
// cannot see, then a gateway down, then a run, then idle.
func TestTrayStatePrecedence(t *testing.T) {
	t.Parallel()
	allow := viewOf(pendingRequest("a/k1", "git push --force"))
	denyOnly := pendingRequest("a/k2", "")
	denyOnly.Choices = []string{approval.ChoiceDeny}
	unknown := pendingRequest("a/k3", "rm -rf ./b")
	unknown.State = approval.StateSentUnknown
	run := service.SessionView{Gateway: "a", ID: "s1", Name: "Nightly", Running: true, Since: t0}
	unseen := []LiveGatewayView{{Gateway: "a", Sessions: []LiveSessionView{{ID: "x", Name: "Other", Status: "working"}}}}
	for _, tc := range []struct {
		name string
		s    Snapshot
		want TrayState
	}{
		{"idle", Snapshot{Gateways: gateways("connected")}, TrayConnected},
		{"running", Snapshot{Gateways: gateways("connected"), Sessions: []service.SessionView{run}}, TrayRunning},
		{"waiting beats running", Snapshot{Gateways: gateways("connected"), Sessions: []service.SessionView{run}, Approvals: []ApprovalView{allow}}, TrayPending},
		{"waiting beats all down", Snapshot{Gateways: gateways("reconnecting"), Approvals: []ApprovalView{allow}}, TrayPending},
		{"deny only", Snapshot{Gateways: gateways("connected"), Approvals: []ApprovalView{viewOf(denyOnly)}}, TrayBlind},
		{"outcome unknown", Snapshot{Gateways: gateways("connected"), Approvals: []ApprovalView{viewOf(unknown)}}, TrayBlind},
		{"a session elsewhere", Snapshot{Gateways: gateways("connected"), Live: unseen}, TrayBlind},
		{"blind beats one down", Snapshot{Gateways: gateways("connected", "reconnecting"), Live: unseen}, TrayBlind},
		{"one down beats running", Snapshot{Gateways: gateways("connected", "reconnecting"), Sessions: []service.SessionView{run}}, TrayDegraded},
		{"all down", Snapshot{Gateways: gateways("reconnecting", "auth_failed"), Live: unseen}, TrayDisconnected},
		{"none set up", Snapshot{}, TrayDisconnected},
	} {
		if got := trayModel(tc.s).State; got != tc.want {
			t.Errorf("%s: state %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTrayRunLines: each run is one line, "gateway · name: what it does
// now, for how long"; a command waiting for approval says so, not that
// it runs.
func TestTrayRunLines(t *testing.T) {
	t.Parallel()
	now := t0.Add(3*time.Minute + 10*time.Second)
	wait := pendingRequest("lab/k1", "rm -rf ./build")
	wait.Session = "s1"
	for _, tc := range []struct {
		name  string
		ss    service.SessionView
		waits []ApprovalView
		want  string
	}{
		{"waiting for approval, not running the command", service.SessionView{Tool: "terminal: Running rm -rf ./build"}, []ApprovalView{viewOf(wait)}, "lab · Nightly: waiting for your approval, 3 min"},
		{"running a command", service.SessionView{Tool: "terminal: Running make test"}, nil, "lab · Nightly: running a command: make test, 3 min"},
		{"another tool", service.SessionView{Tool: "read_file: notes.md"}, nil, "lab · Nightly: using read_file, 3 min"},
		{"thinking", service.SessionView{}, nil, "lab · Nightly: thinking, 3 min"},
		{"writing", service.SessionView{LastText: "Here is"}, nil, "lab · Nightly: writing, 3 min"},
	} {
		ss := tc.ss
		ss.Gateway, ss.ID, ss.Name, ss.Running, ss.Since = "lab", "s1", "Nightly", true, t0
		r := trayRunAt(ss, tc.waits, now)
		if r.Label != tc.want || r.Gateway != "lab" || r.ID != "s1" {
			t.Errorf("%s: %q, want %q", tc.name, r.Label, tc.want)
		}
	}
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{0, "under a minute"}, {59 * time.Second, "under a minute"}, {time.Minute, "1 min"}, {65 * time.Minute, "1 h 5 min"}} {
		if got := runFor(t0, t0.Add(tc.d)); got != tc.want {
			t.Errorf("runFor(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
	if runFor(time.Time{}, t0) != "" {
		t.Error("a run with no start time says how long")
	}
}

// TestTrayTooltipAndMenuModel: the tooltip says what waits (in the
// singular for one), each run's line and what Herald cannot see; an
// answer whose outcome is unknown is listed as unknown, with no choice
// and not as pending.
func TestTrayTooltipAndMenuModel(t *testing.T) {
	t.Parallel()
	a := pendingRequest("lab/k1", "git push --force origin main")
	a.Session, a.SessionTitle = "s1", "Nightly" // named as the session: one name on every surface
	unknown := pendingRequest("lab/k2", "rm -rf ./build")
	unknown.Session, unknown.SessionTitle = "s2", "Clean up"
	unknown.State, unknown.Outcome.Choice = approval.StateSentUnknown, approval.ChoiceDeny
	s := Snapshot{Now: t0.Add(2 * time.Minute), Gateways: gateways("connected"),
		Sessions:  []service.SessionView{{Gateway: "lab", ID: "s1", Name: "Nightly", Running: true, Since: t0, Tool: "terminal: Running git push --force origin main"}},
		Approvals: []ApprovalView{viewOf(a), viewOf(unknown)}}
	m := trayModel(s)
	if m.State != TrayPending || m.Waiting != 1 || len(m.Pending) != 2 || len(m.Runs) != 1 {
		t.Fatalf("model %+v", m)
	}
	for _, want := range []string{"1 request waits for you", "lab · Nightly: waiting for your approval, 2 min", "Outcome unknown: lab · Clean up: rm -rf ./build", "1 of 1 gateway connected"} {
		if !strings.Contains(m.Tooltip, want) {
			t.Errorf("tooltip %q lacks %q", m.Tooltip, want)
		}
	}
	if strings.Contains(m.Tooltip, "1 approvals") || strings.Contains(m.Tooltip, "Running git push") {
		t.Errorf("tooltip %q", m.Tooltip)
	}
	if p := m.Pending[0]; p.State != TrayItemWaiting || !p.CanOnce || !strings.HasPrefix(p.Label, "lab · Nightly: git push") {
		t.Errorf("waiting item %+v", p)
	}
	if p := m.Pending[1]; p.State != TrayItemUnknown || p.CanOnce || p.Label != "Outcome unknown: lab · Clean up: rm -rf ./build" {
		t.Errorf("unknown item %+v", p)
	}
	// Many runs: a few listed, the rest counted.
	s = Snapshot{Now: t0, Gateways: gateways("connected")}
	for i := range trayRunsMax + 3 {
		s.Sessions = append(s.Sessions, service.SessionView{Gateway: "a", ID: string(rune('a' + i)), Name: "n", Running: true, Since: t0})
	}
	if m := trayModel(s); len(m.Runs) != trayRunsMax || m.MoreRuns != 3 || !strings.Contains(m.Tooltip, "3 more runs") {
		t.Fatalf("runs %d, more %d, tooltip %q", len(m.Runs), m.MoreRuns, m.Tooltip)
	}
	s.DoNotDisturb = true
	if m := trayModel(s); !m.DoNotDisturb || !strings.Contains(m.Tooltip, "do not disturb") {
		t.Fatalf("do not disturb: %q", m.Tooltip)
	}
}

// TestPumpLeadingEdge: the first changes reach the tray at once (no
// timer), up to pumpBurst runs; past that, changes while it runs are
// folded into one run per gap.
func TestPumpLeadingEdge(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	ran := make(chan struct{}, 100)
	release := make(chan struct{}, 100)
	p := newPump(clk, trayGap, func() {
		ran <- struct{}{}
		<-release
	})
	idle := func() {
		for {
			p.mu.Lock()
			busy := p.busy
			p.mu.Unlock()
			if !busy {
				return
			}
			select {
			case <-ran:
				t.Fatal("an extra run")
			default:
			}
		}
	}
	// A burst: each poke runs at once, up to pumpBurst.
	for range pumpBurst {
		release <- struct{}{}
		p.poke()
		<-ran
		idle()
	}
	if clk.Waiters() != 0 {
		t.Fatal("a timer within the burst")
	}
	// Past it: one run per gap, however many pokes.
	for range 50 {
		p.poke()
	}
	clk.BlockUntil(1)
	if len(ran) != 0 {
		t.Fatal("ran again before the gap")
	}
	release <- struct{}{}
	clk.Advance(trayGap)
	<-ran
	idle()
	if len(ran) != 0 || clk.Waiters() != 0 {
		t.Fatalf("extra runs %d, timers %d", len(ran), clk.Waiters())
	}
	// Quiet for a while: the burst is back.
	clk.Advance(pumpBurst * trayGap)
	release <- struct{}{}
	p.poke()
	<-ran
	idle()
	p.stop()
	p.poke()
	if len(ran) != 0 || clk.Waiters() != 0 {
		t.Fatal("ran after stop")
	}
}
