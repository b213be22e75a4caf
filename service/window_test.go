package service

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/testwait"
	"github.com/herald-desktop/herald/backend/wire"
)

// fakeHost is a WindowHost that echoes calls.
type fakeHost struct {
	mu    sync.Mutex
	calls []string
	shows int
}

func (h *fakeHost) CallWindow(_ context.Context, method string, args []json.RawMessage) (json.RawMessage, error) {
	h.mu.Lock()
	h.calls = append(h.calls, method)
	h.mu.Unlock()
	if method == "Fail" {
		return nil, errors.New("no approval with id abc")
	}
	return json.Marshal(map[string]any{"method": method, "args": args})
}

func (h *fakeHost) ShowWindow() error {
	h.mu.Lock()
	h.shows++
	h.mu.Unlock()
	return nil
}

// TestWindowOverControl: a window process calls bound methods, raises the
// window and follows the window's events on the one event stream over the
// control socket; without a host (the terminal's `herald watch`) it is
// told why not.
func TestWindowOverControl(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer s.Close()
	path := filepath.Join(t.TempDir(), "herald", "ctl.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.ServeControl(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, err := WindowCall(ctx, path, "Snapshot", nil); err == nil || !strings.Contains(err.Error(), "no window") {
		t.Fatalf("a window call without a host: %v", err)
	}
	if _, err := WatchControl(ctx, path, WatchWindow, 0); err == nil || !strings.Contains(err.Error(), "no window") {
		t.Fatalf("following the window's events without a host: %v", err)
	}
	h := &fakeHost{}
	s.SetWindowHost(h)

	res, err := WindowCall(ctx, path, "Answer", []json.RawMessage{json.RawMessage(`"k1"`), json.RawMessage(`"once"`), json.RawMessage(`false`)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"args":["k1","once",false],"method":"Answer"}`; string(res) != want {
		t.Fatalf("result %s, want %s", res, want)
	}
	if _, err := WindowCall(ctx, path, "Fail", nil); err == nil || err.Error() != "no approval with id abc" {
		t.Fatalf("the host's error did not reach the window as is: %v", err)
	}
	if err := ShowWindow(ctx, path); err != nil {
		t.Fatal(err)
	}

	sctx, stop := context.WithCancel(ctx)
	w, err := WatchControl(sctx, path, WatchWindow, 0)
	if err != nil {
		t.Fatal(err)
	}
	// WatchControl returned: the subscription is up, nothing is missed.
	sent := []WindowEvent{{Name: "herald:snapshot", Data: json.RawMessage(`{"version":"x"}`), Latest: true}, {Name: "herald:show", Hold: true}}
	for _, ev := range sent {
		s.PublishWindow(ev)
	}
	s.bus.publish(WatchEvents, Notify{Event: &wire.Event{Kind: "not for the window"}})
	for i, want := range sent {
		n, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev := n.Window; ev == nil || ev.Name != want.Name || string(ev.Data) != string(want.Data) || n.Seq != uint64(i+1) {
			t.Fatalf("event %d = %+v (seq %d), want %+v", i, ev, n.Seq, want)
		}
	}
	// The window goes away: its subscription ends.
	stop()
	if _, err := w.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v", err)
	}
	subs := func() int { n, _ := s.bus.subscriptions(); return n }
	moved := func() <-chan struct{} { _, ch := s.bus.subscriptions(); return ch }
	testwait.Until(t, 10*time.Second, "the window's subscription to end with it", moved, func() bool { return subs() == 0 })
	// Herald goes away: the window is told.
	w2, err := WatchControl(ctx, path, WatchWindow, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := w2.Next(ctx); !errors.Is(err, ErrWatchEnded) || !strings.Contains(err.Error(), "Herald stopped") {
		t.Fatalf("Next after Herald left: %v", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shows != 1 || len(h.calls) != 2 {
		t.Fatalf("host saw %d shows and calls %v", h.shows, h.calls)
	}
}
