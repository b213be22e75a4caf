package app

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/service"
)

func (f *fakePlatform) runs(id string) bool {
	for _, s := range f.last.Sessions {
		if s.ID == id && s.Running {
			return true
		}
	}
	return false
}

// TestStopFromTrayAndWindow: the tray's "Active runs" submenu lists a
// running turn and its Stop interrupts it; the outcome is a notification
// shown after the gateway confirmed. The window's quick prompt starts a
// turn and its Stop button stops it the same way.
func TestStopFromTrayAndWindow(t *testing.T) {
	a, p, srv, live := desktop(t)
	if err := srv.Prompt(live, "hold"); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "the turn running", func(f *fakePlatform) bool { return f.runs(live) })
	snap := a.Snapshot()
	m := trayModel(snap)
	// The run is named as the Sessions panel names its session.
	name := ""
	for _, s := range snap.Sessions {
		if s.ID == live {
			name = s.Name
		}
	}
	if len(m.Runs) != 1 || m.Runs[0].Gateway != "lab" || m.Runs[0].ID != live || name == "" || !strings.HasPrefix(m.Runs[0].Label, "lab · "+name+": ") {
		t.Fatalf("tray runs %+v, want the label to start %q", m.Runs, "lab · "+name+": ")
	}
	a.TrayStop(m.Runs[0].Gateway, m.Runs[0].ID)
	n := p.lastNotified()
	if n.Title != "Run stopped" || !strings.Contains(n.Body, "confirmed by the gateway") || srv.Interrupts() != 1 {
		t.Fatalf("tray stop: %+v, %d interrupts", n, srv.Interrupts())
	}
	if runs := trayModel(a.Snapshot()).Runs; len(runs) != 0 {
		t.Fatalf("the run is still listed after the confirmed stop: %+v", runs)
	}

	// Window: quick prompt on the followed session, then Stop.
	ask, err := a.Ask("", live, "hold")
	if err != nil || ask.Session != live || ask.Status != "streaming" {
		t.Fatalf("Ask = %+v, %v", ask, err)
	}
	p.waitFor(t, "the prompted turn running", func(*fakePlatform) bool { return len(a.ActiveRuns()) == 1 })
	if runs := a.ActiveRuns(); len(runs) != 1 || runs[0].ID != live {
		t.Fatalf("ActiveRuns = %+v", runs)
	}
	res, err := a.StopRun("lab", live)
	if err != nil || res.Outcome != service.OutcomeInterrupted {
		t.Fatalf("StopRun = %+v, %v", res, err)
	}
	if runs := a.ActiveRuns(); runs == nil || len(runs) != 0 {
		t.Fatalf("ActiveRuns after the stop = %#v, want an empty list", runs)
	}
	// A new session from the quick prompt.
	ask, err = a.Ask("lab", "", "hello there")
	if err != nil || !ask.NewSession || ask.Session == live {
		t.Fatalf("Ask (new session) = %+v, %v", ask, err)
	}
	if _, err := a.Ask("lab", "", "   "); err == nil {
		t.Fatal("an empty prompt was sent")
	}

	// A stop that cannot work says so, in the notification and the window.
	a.TrayStop("lab", "nosuchsession")
	n = p.lastNotified()
	// Not critical: nothing waits for the user (notePolicy).
	if n.Title != "Could not stop the run" || n.Urgency != UrgencyNormal || !strings.Contains(n.Body, "nothing was interrupted") {
		t.Fatalf("failed tray stop: %+v", n)
	}
	if w := a.Snapshot().Warnings; len(w) == 0 || !strings.Contains(w[len(w)-1], "nosuchsession") {
		t.Fatalf("warnings %v", w)
	}
}

// TestRunTextIsMadeVisible: what the window and the tray show of a
// gateway's answer is one bounded line with controls made visible.
func TestRunTextIsMadeVisible(t *testing.T) {
	t.Parallel()
	got := visible("interrupted\x1b[2J\nnext" + strings.Repeat("x", 5000))
	if strings.ContainsAny(got, "\x1b\n") || !strings.Contains(got, "␛[2J⏎next") || len(got) > resultTextMax+100 || !strings.HasSuffix(got, "…") {
		t.Fatalf("visible = %q", got)
	}
	if visibleErr(nil) != nil {
		t.Fatal("nil error became an error")
	}
}
