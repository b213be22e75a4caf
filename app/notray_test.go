package app

import "testing"

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
