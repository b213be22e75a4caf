package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"

	"github.com/herald-desktop/herald/approval"
	native "github.com/herald-desktop/herald/desktop"
	"github.com/herald-desktop/herald/service"
)

// TestCallBound: the window process reaches exactly the methods Wails
// would bind, with JSON in and out and the App's errors as they are.
func TestCallBound(t *testing.T) {
	a := New(Deps{Version: "v-test", Settings: mustSettings(t), Store: approval.NewMemoryStore(), Autostart: Autostart{Dir: t.TempDir()}})
	t.Cleanup(a.Close)
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	res, err := a.callBound("Snapshot", nil)
	if err != nil {
		t.Fatal(err)
	}
	var s Snapshot
	if err := json.Unmarshal(res, &s); err != nil || s.Version != "v-test" {
		t.Fatalf("Snapshot over the window call: %s, %v", res, err)
	}
	tests := []struct {
		method string
		args   []json.RawMessage
		err    string
	}{
		{"Dismiss", []json.RawMessage{raw("nope")}, "nope"}, // the App's own error
		{"SetPauseNotifications", []json.RawMessage{raw(true)}, ""},
		{"RememberWindow", []json.RawMessage{raw(WindowGeometry{X: 10, Y: 20, Width: 900, Height: 700})}, ""},
		{"SetPauseNotifications", []json.RawMessage{raw("yes")}, "does not decode"},
		{"SetPauseNotifications", nil, "takes 1 arguments"},
		{"Start", nil, "cannot call"},
		{"Close", nil, "cannot call"},
		{"TrayQuit", nil, "cannot call"},
		{"snapshot", nil, "cannot call"},
		{"NoSuchMethod", nil, "another version"},
	}
	for _, tc := range tests {
		_, err := a.callBound(tc.method, tc.args)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.method, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.method, err, tc.err)
		}
	}
	if !a.Snapshot().NotificationsPaused {
		t.Error("SetPauseNotifications(true) over the window call did not pause")
	}
	st, err := a.d.Settings.Load()
	if err != nil || st.Window == nil || *st.Window != (WindowGeometry{X: 10, Y: 20, Width: 900, Height: 700}) {
		t.Errorf("the window process's geometry was not remembered: %+v, %v", st.Window, err)
	}
}

func mustSettings(t *testing.T) *SettingsStore {
	t.Helper()
	s, err := NewSettingsStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type fakeNotes struct {
	mu    sync.Mutex
	shown []native.Notification
	gone  []string
	fn    func(id, action string)
}

func (f *fakeNotes) Notify(n native.Notification) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shown = append(f.shown, n)
	return nil
}
func (f *fakeNotes) Withdraw(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gone = append(f.gone, id)
	return nil
}
func (f *fakeNotes) OnAction(fn func(id, action string)) { f.fn = fn }

type fakeLauncher struct{ running, starts int }

func (l *fakeLauncher) Running() bool { return l.running > 0 }
func (l *fakeLauncher) Start() (bool, error) {
	l.starts++
	if l.running > 0 {
		return false, nil
	}
	l.running++
	return true, nil
}

// windowEvents follows the window's events as a window process does: on
// the service's event stream (WatchWindow).
func windowEvents(t *testing.T, svc *service.Service) (<-chan service.WindowEvent, func()) {
	t.Helper()
	sub := svc.Subscribe(service.WatchWindow, 0)
	ch := make(chan service.WindowEvent, 64)
	go func() {
		defer close(ch)
		for {
			n, err := sub.Next(context.Background())
			if err != nil {
				return
			}
			ch <- *n.Window
		}
	}()
	return ch, sub.Close
}

// TestHeadlessPlatform: without a web view, notifications go to the
// notifier (approvals urgent), ShowWindow starts the window process once
// and then raises it, and what the window must not miss waits for it.
func TestHeadlessPlatform(t *testing.T) {
	t.Parallel()
	notes, win := &fakeNotes{}, &fakeLauncher{}
	quit := 0
	svc := service.New(service.Config{})
	defer svc.Close()
	p := &HeadlessPlatform{Notes: notes, Window: win, OnQuit: func() { quit++ }, svc: svc}
	p.Notify(Notification{ID: "k1", Title: "Approve?", Body: "rm -rf ./b", Actions: [][2]string{{"once", "Approve once"}, {"deny", "Deny"}}})
	p.Notify(Notification{ID: "run:x", Title: "Run finished"})
	p.Withdraw("k1")
	if len(notes.shown) != 2 || !notes.shown[0].Urgent || notes.shown[1].Urgent || len(notes.shown[0].Actions) != 2 {
		t.Fatalf("notifications: %+v", notes.shown)
	}
	if len(notes.gone) != 1 || notes.gone[0] != "k1" {
		t.Fatalf("withdrawn: %v", notes.gone)
	}
	var got string
	p.OnNotificationAction(func(id, action string) { got = id + "/" + action })
	notes.fn("k1", "once")
	if got != "k1/once" {
		t.Fatalf("action reached the app as %q", got)
	}

	// No window yet: the snapshot is dropped (the window fetches its own),
	// the approval to open waits.
	p.Emit(EventSnapshot, Snapshot{Version: "1"})
	p.ShowWindow()
	p.Emit(EventOpenApproval, "k1")
	if win.starts != 1 || !win.Running() {
		t.Fatalf("ShowWindow started %d windows", win.starts)
	}
	events, cancel := windowEvents(t, svc)
	want := []service.WindowEvent{{Name: EventOpenApproval, Data: json.RawMessage(`"k1"`)}}
	p.ShowWindow() // running: raise it
	want = append(want, service.WindowEvent{Name: EventShow})
	p.Emit(EventSnapshot, Snapshot{Version: "2"})
	p.Quit()
	for i, w := range want {
		ev := <-events
		if ev.Name != w.Name || string(ev.Data) != string(w.Data) {
			t.Fatalf("event %d = %s %s, want %s %s", i, ev.Name, ev.Data, w.Name, w.Data)
		}
	}
	if ev := <-events; ev.Name != EventSnapshot || !strings.Contains(string(ev.Data), `"version":"2"`) {
		t.Fatalf("snapshot event %s %s", ev.Name, ev.Data)
	}
	if ev := <-events; ev.Name != EventQuit || quit != 1 {
		t.Fatalf("quit: event %s, OnQuit %d times", ev.Name, quit)
	}
	cancel()
	cancel()
	if win.starts != 2 {
		t.Fatalf("Start called %d times", win.starts)
	}
}

// TestHeadlessPlatformSnapshotsMerge: a window that has not read a
// snapshot yet gets the newest one in its place, not a queue of them.
func TestHeadlessPlatformSnapshotsMerge(t *testing.T) {
	t.Parallel()
	svc := service.New(service.Config{})
	defer svc.Close()
	p := &HeadlessPlatform{svc: svc}
	sub := svc.Subscribe(service.WatchWindow, 0)
	defer sub.Close()
	for i := range 5 {
		p.Emit(EventSnapshot, Snapshot{Version: fmt.Sprint(i)})
	}
	p.Emit(EventOpenApproval, "k1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, want := range []string{`"version":"4"`, `"k1"`} {
		n, err := sub.Next(ctx)
		if err != nil || n.Window == nil || !strings.Contains(string(n.Window.Data), want) || n.Lagged != 0 {
			t.Fatalf("got %+v, %v; want %s", n, err, want)
		}
	}
}

// TestHeadlessPlatformStaleAndFailed: a request to open an approval does
// not wait forever for a window that never came; a window that cannot
// start is reported in a notification.
func TestHeadlessPlatformStaleAndFailed(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC))
	notes := &fakeNotes{}
	svc := service.New(service.Config{Clock: clk})
	defer svc.Close()
	p := &HeadlessPlatform{Notes: notes, Window: failingLauncher{}, svc: svc}
	p.Emit(EventOpenApproval, "old")
	clk.Advance(service.WindowHoldAge + time.Second)
	p.Emit(EventOpenApproval, "new")
	events, cancel := windowEvents(t, svc)
	defer cancel()
	if ev := <-events; string(ev.Data) != `"new"` {
		t.Fatalf("first event for a late window: %s %s, want the new approval only", ev.Name, ev.Data)
	}
	p.Emit(EventQuit, nil) // a marker: whatever came before it was held
	if ev := <-events; ev.Name != EventQuit {
		t.Fatalf("a stale event reached the window: %s %s", ev.Name, ev.Data)
	}
	p.ShowWindow()
	if len(notes.shown) != 1 || notes.shown[0].ID != windowErrorID || !strings.Contains(notes.shown[0].Body, "herald-window") {
		t.Fatalf("a window that cannot start was reported as %+v", notes.shown)
	}
}

type failingLauncher struct{}

func (failingLauncher) Running() bool        { return false }
func (failingLauncher) Start() (bool, error) { return false, native.ErrNoWindow }
