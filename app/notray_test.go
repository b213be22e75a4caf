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
