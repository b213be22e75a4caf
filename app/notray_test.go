package app

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestNoTrayHost: without a tray host the window is told (tray_missing)
// and closing it quits Herald only when the user chose so (saved in the
// settings); a tray host appearing clears both.
func TestNoTrayHost(t *testing.T) {
	t.Parallel()
	a, _, store := newWindowApp(t, DefaultSettings())
	if s := a.Snapshot(); s.TrayMissing || a.TrayAbsentQuits() {
		t.Fatalf("before any word from the bus: tray_missing %v, quits %v", s.TrayMissing, a.TrayAbsentQuits())
	}
	a.TrayHostChanged(false)
	if s := a.Snapshot(); !s.TrayMissing || s.QuitWithoutTray || a.TrayAbsentQuits() {
		t.Fatalf("no tray host: tray_missing %v, quit_without_tray %v, quits %v; want true, false, false", s.TrayMissing, s.QuitWithoutTray, a.TrayAbsentQuits())
	}
	if err := a.SetQuitWithoutTray(true); err != nil {
		t.Fatal(err)
	}
	if s := a.Snapshot(); !s.QuitWithoutTray || !a.TrayAbsentQuits() {
		t.Fatalf("chose quit: quit_without_tray %v, quits %v", s.QuitWithoutTray, a.TrayAbsentQuits())
	}
	if st, err := store.Load(); err != nil || !st.QuitWithoutTray {
		t.Fatalf("the choice is not saved: %+v %v", st, err)
	}
	a.TrayHostChanged(true)
	if s := a.Snapshot(); s.TrayMissing || a.TrayAbsentQuits() {
		t.Fatalf("a tray host appeared: tray_missing %v, quits %v", s.TrayMissing, a.TrayAbsentQuits())
	}
}

// TestTrayNoticeDismissal: the note on how to get a tray shows while
// there is no tray host, until the user dismisses it; the dismissal is
// saved and holds across restarts, until a tray host is seen: a tray
// lost after that brings the note back.
func TestTrayNoticeDismissal(t *testing.T) {
	t.Parallel()
	a, _, store := newWindowApp(t, DefaultSettings())
	shown := func() bool { s := a.Snapshot(); return s.TrayMissing && !s.TrayNoticeDismissed }
	steps := []struct {
		name      string
		do        func(t *testing.T)
		shown     bool
		dismissed bool // as saved
	}{
		{"no tray host", func(*testing.T) { a.TrayHostChanged(false) }, true, false},
		{"dismissed", func(t *testing.T) {
			if err := a.DismissTrayNotice(); err != nil {
				t.Fatal(err)
			}
		}, false, true},
		{"Herald restarted, still no tray host", func(t *testing.T) {
			a.Close()
			a = New(Deps{Settings: store, Autostart: Autostart{Dir: t.TempDir()}})
			t.Cleanup(a.Close)
			if err := a.Start(); err != nil {
				t.Fatal(err)
			}
			a.TrayHostChanged(false)
		}, false, true},
		{"a tray host appeared", func(*testing.T) { a.TrayHostChanged(true) }, false, false},
		{"and went again", func(*testing.T) { a.TrayHostChanged(false) }, true, false},
	}
	for _, st := range steps {
		st.do(t)
		if got := shown(); got != st.shown {
			t.Fatalf("%s: note shown %v, want %v", st.name, got, st.shown)
		}
		saved, err := store.Load()
		if err != nil || saved.TrayNoticeDismissed != st.dismissed {
			t.Fatalf("%s: saved dismissal %v (%v), want %v", st.name, saved.TrayNoticeDismissed, err, st.dismissed)
		}
	}
}

// TestRunFinishedNotificationIsOptIn: a finished turn raises no
// notification unless the user turned them on; then one, with the
// answer's first line only (no page of text with markers).
func TestRunFinishedNotificationIsOptIn(t *testing.T) {
	t.Parallel()
	n := newNotifier(clock.NewFake(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)), nil)
	p := newFakePlatform()
	n.attach(p)
	done := func(session string) wire.Event {
		ev := wire.Event{Gateway: "lab", Session: session, Kind: wire.MessageComplete}
		ev.Payload, _ = json.Marshal(map[string]any{"status": "complete", "text": "\nAll 12 tests pass.\nguard={\"x\":1}\nmore"})
		ev.DecodeData()
		return ev
	}
	n.event(done("s1"))
	if len(p.notified) != 0 {
		t.Fatalf("a finished turn notified with the setting off: %+v", p.notified)
	}
	n.setRuns(true)
	n.event(done("s2"))
	if len(p.notified) != 1 || p.notified[0].Body != "All 12 tests pass." {
		t.Fatalf("notifications %+v, want one saying %q", p.notified, "All 12 tests pass.")
	}
}

// TestTrayDegradedWhenSomeGatewaysAreDown: with one of two gateways down
// the tray icon says so (not green), not only its tooltip.
func TestTrayDegradedWhenSomeGatewaysAreDown(t *testing.T) {
	t.Parallel()
	gw := func(states ...string) Snapshot {
		var s Snapshot
		for i, st := range states {
			s.Gateways = append(s.Gateways, GatewayView{Name: string(rune('a' + i)), State: st})
		}
		return s
	}
	for _, tc := range []struct {
		snap Snapshot
		want TrayState
	}{
		{gw("connected", "connected"), TrayConnected},
		{gw("connected", "reconnecting"), TrayDegraded},
		{gw("reconnecting", "auth_failed"), TrayDisconnected},
		{gw(), TrayDisconnected},
	} {
		if got := trayModel(tc.snap).State; got != tc.want {
			t.Errorf("%+v: tray state %v, want %v", tc.snap.Gateways, got, tc.want)
		}
	}
	if string(trayIcon(TrayDegraded)) == string(trayIcon(TrayConnected)) || len(trayIcon(TrayDegraded)) == 0 {
		t.Fatal("the degraded icon is missing or looks like the connected one")
	}
}
