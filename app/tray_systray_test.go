package app

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestForwardClicksIgnoresAClosedChannel: fyne.io/systray closes an
// item's click channel when the menu is reset; that is no click. (Read as
// one, every rebuild answered the requests of the old menu again.)
func TestForwardClicksIgnoresAClosedChannel(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	clicked, gen := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() { forwardClicks(clicked, gen, func() { n.Add(1) }); close(done) }()
	clicked <- struct{}{}
	clicked <- struct{}{}
	close(clicked) // the menu was reset
	<-done
	if n.Load() != 2 {
		t.Fatalf("%d actions, want the 2 clicks", n.Load())
	}
	// A rebuild begun wins: gen closed first, then the channel.
	var m atomic.Int32
	clicked, gen = make(chan struct{}), make(chan struct{})
	done = make(chan struct{})
	close(gen)
	close(clicked)
	go func() { forwardClicks(clicked, gen, func() { m.Add(1) }); close(done) }()
	select {
	case <-done:
	case <-time.After(guard):
		t.Fatal("forwardClicks did not end")
	}
	if m.Load() != 0 {
		t.Fatalf("%d actions after the rebuild", m.Load())
	}
}

type nopActions struct{}

func (nopActions) TrayAnswer(string, string)  {}
func (nopActions) TrayOpen(string)            {}
func (nopActions) TrayReconnect()             {}
func (nopActions) TrayTogglePause()           {}
func (nopActions) TrayShow()                  {}
func (nopActions) TrayQuit()                  {}
func (nopActions) TrayStop(string, string)    {}
func (nopActions) TrayOpenRun(string, string) {}
func (nopActions) TrayFollow(string, string)  {}

// TestTrayPlan: what waits comes first, each run has Stop and Open at the
// first level, and a change of words alone (how long a run runs) keeps
// the menu's shape, so it is retitled in place rather than rebuilt under
// the user's pointer.
func TestTrayPlan(t *testing.T) {
	t.Parallel()
	m := TrayModel{
		Pending: []TrayApproval{{Key: "lab/k1", Label: "lab: git push", CanOnce: true}, {Key: "lab/k2", Label: "Outcome unknown: lab: rm -rf ./b", State: TrayItemUnknown}},
		Waiting: 1,
		Runs:    []TrayRun{{Gateway: "lab", ID: "s1", Label: "lab · Nightly: thinking, under a minute"}},
	}
	plan := trayPlan(m, nopActions{})
	var top []string
	for _, e := range plan {
		if e.parent < 0 && !e.sep {
			top = append(top, strings.TrimSpace(e.label))
		}
	}
	want := []string{"lab: git push", "Outcome unknown: lab: rm -rf ./b", "lab · Nightly: thinking, under a minute", "Stop", "Open", "Reconnect", "Pause notifications", "Open Herald", "Quit"}
	if strings.Join(top, "|") != strings.Join(want, "|") {
		t.Fatalf("first level %q, want %q", top, want)
	}
	for _, e := range plan {
		if e.parent >= 0 && plan[e.parent].id == "unknown:lab/k2" && e.label != "Open…" {
			t.Errorf("the unknown answer offers %q", e.label)
		}
	}
	later := m
	later.Runs = []TrayRun{{Gateway: "lab", ID: "s1", Label: "lab · Nightly: writing, 2 min"}}
	shown := make([]shownEntry, len(plan))
	for i, e := range plan {
		shown[i].trayEntry = e
	}
	if !sameShape(shown, trayPlan(later, nopActions{})) {
		t.Fatal("a run's new words changed the menu's shape")
	}
	answered := m
	answered.Pending = answered.Pending[1:]
	if sameShape(shown, trayPlan(answered, nopActions{})) {
		t.Fatal("an answered approval kept the menu's shape")
	}
}
