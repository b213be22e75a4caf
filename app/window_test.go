package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// fakeWindow is a Platform with a window.
type fakeWindow struct {
	*fakePlatform
	mu            sync.Mutex
	geo           WindowGeometry
	known         bool
	screenW       int
	screenH       int
	placed        []WindowGeometry
	hidden, quits int
}

func (w *fakeWindow) WindowGeometry() (WindowGeometry, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.geo, w.known
}
func (w *fakeWindow) ScreenSize() (int, int) { return w.screenW, w.screenH }
func (w *fakeWindow) PlaceWindow(g WindowGeometry) {
	w.mu.Lock()
	w.placed = append(w.placed, g)
	w.mu.Unlock()
}
func (w *fakeWindow) HideWindow() { w.mu.Lock(); w.hidden++; w.mu.Unlock() }
func (w *fakeWindow) Quit()       { w.mu.Lock(); w.quits++; w.mu.Unlock() }

func newWindowApp(t *testing.T, st Settings) (*App, *fakeWindow, *SettingsStore) {
	t.Helper()
	store, err := NewSettingsStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(st); err != nil {
		t.Fatal(err)
	}
	a := New(Deps{Settings: store, Autostart: Autostart{Dir: t.TempDir()}})
	t.Cleanup(a.Close)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	w := &fakeWindow{fakePlatform: newFakePlatform(), screenW: 1920, screenH: 1080}
	a.Attach(w)
	return a, w, store
}

func savedWindow(t *testing.T, store *SettingsStore) *WindowGeometry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(store.Dir(), "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st Settings
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st.Window
}

func TestWindowGeometryIsSavedAndRestored(t *testing.T) {
	t.Parallel()
	a, w, store := newWindowApp(t, DefaultSettings())
	a.restoreWindow()
	if len(w.placed) != 0 {
		t.Fatalf("a first run moved the window: %v", w.placed)
	}
	// Not knowable (minimised): nothing is saved.
	a.SaveWindowState()
	if g := savedWindow(t, store); g != nil {
		t.Fatalf("saved %v from an unknown geometry", g)
	}
	w.geo, w.known = WindowGeometry{X: 200, Y: 120, Width: 900, Height: 600}, true
	a.HideWindow() // Ctrl+W
	if w.hidden != 1 {
		t.Fatal("Ctrl+W did not hide the window")
	}
	if g := savedWindow(t, store); g == nil || *g != w.geo {
		t.Fatalf("saved %v, want %v", g, w.geo)
	}
	// Maximised: remembered as such, with the size to return to.
	w.geo = WindowGeometry{X: 0, Y: 0, Width: 1920, Height: 1080, Maximised: true}
	a.QuitApp() // Ctrl+Q
	if w.quits != 1 {
		t.Fatal("Ctrl+Q did not quit")
	}
	want := WindowGeometry{X: 200, Y: 120, Width: 900, Height: 600, Maximised: true}
	if g := savedWindow(t, store); g == nil || *g != want {
		t.Fatalf("saved %v, want %v", g, want)
	}

	// The next run opens at the saved size and place.
	st, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if w, h := InitialWindowSize(st); w != 900 || h != 600 {
		t.Fatalf("initial size %dx%d", w, h)
	}
	b, w2, _ := newWindowApp(t, st)
	b.restoreWindow()
	if len(w2.placed) != 1 || w2.placed[0] != want {
		t.Fatalf("placed %v, want %v", w2.placed, want)
	}
	if b.BeforeClose(context.Background()) {
		t.Fatal("closing was prevented")
	}
}

func TestWindowOffScreenIsNotRestored(t *testing.T) {
	t.Parallel()
	for _, g := range []WindowGeometry{
		{X: 3000, Y: 100, Width: 900, Height: 600}, // a monitor that is gone
		{X: 100, Y: -50, Width: 900, Height: 600},  // title bar above the screen
		{X: -600, Y: 100, Width: 900, Height: 600}, // more than half off the left
	} {
		st := DefaultSettings()
		st.Window = &g
		a, w, _ := newWindowApp(t, st)
		a.restoreWindow()
		if len(w.placed) != 0 {
			t.Errorf("%v was placed on a 1920x1080 screen", g)
		}
	}
}

func TestInitialWindowSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		win  *WindowGeometry
		w, h int
	}{
		{nil, DefaultWindowWidth, DefaultWindowHeight},
		{&WindowGeometry{Width: 0, Height: 500}, DefaultWindowWidth, DefaultWindowHeight},
		{&WindowGeometry{Width: 300, Height: 200}, MinWindowWidth, MinWindowHeight},
		{&WindowGeometry{Width: 1 << 20, Height: 800}, maxWindowEdge, 800},
	}
	for _, tc := range tests {
		if w, h := InitialWindowSize(Settings{Window: tc.win}); w != tc.w || h != tc.h {
			t.Errorf("%v: %dx%d, want %dx%d", tc.win, w, h, tc.w, tc.h)
		}
	}
}

// A Platform without a window (tests, a headless surface) is fine.
func TestWindowMethodsWithoutAWindow(t *testing.T) {
	t.Parallel()
	a := New(Deps{Settings: mustStore(t), Autostart: Autostart{Dir: t.TempDir()}})
	t.Cleanup(a.Close)
	a.Attach(newFakePlatform())
	if err := a.SaveWindowState(); err != nil {
		t.Fatal(err)
	}
	a.HideWindow()
	a.restoreWindow()
}

func mustStore(t *testing.T) *SettingsStore {
	s, err := NewSettingsStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The window process of the split model sends its geometry to the
// always-on Herald by name, as the page's other calls travel.
func TestRememberWindowThroughTheWindowCall(t *testing.T) {
	t.Parallel()
	a, _, store := newWindowApp(t, DefaultSettings())
	g := WindowGeometry{X: 40, Y: 30, Width: 1000, Height: 700}
	raw, _ := json.Marshal(g)
	if _, err := a.callBound("RememberWindow", []json.RawMessage{raw}); err != nil {
		t.Fatal(err)
	}
	if got := savedWindow(t, store); got == nil || *got != g {
		t.Fatalf("saved %v, want %v", got, g)
	}
	// Nonsense sizes are not saved.
	raw, _ = json.Marshal(WindowGeometry{Width: -1, Height: 1 << 30})
	if _, err := a.callBound("RememberWindow", []json.RawMessage{raw}); err != nil {
		t.Fatal(err)
	}
	if got := savedWindow(t, store); got == nil || *got != g {
		t.Fatalf("a nonsense size replaced the saved one: %v", got)
	}
}
