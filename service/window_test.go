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
)

// fakeHost is a WindowHost that echoes calls and streams what the test
// sends.
type fakeHost struct {
	mu     sync.Mutex
	calls  []string
	shows  int
	events chan WindowEvent
	subbed chan struct{}
	gone   chan struct{}
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

func (h *fakeHost) SubscribeWindow() (<-chan WindowEvent, func()) {
	close(h.subbed)
	return h.events, func() { close(h.gone) }
}

func (h *fakeHost) ShowWindow() error {
	h.mu.Lock()
	h.shows++
	h.mu.Unlock()
	return nil
}

// TestWindowOverControl: a window process calls bound methods, raises the
// window and follows events over the control socket; without a host (the
// terminal's `herald watch`) it is told why not.
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
	h := &fakeHost{events: make(chan WindowEvent, 4), subbed: make(chan struct{}), gone: make(chan struct{})}
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
	got := make(chan WindowEvent, 4)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- WindowEvents(sctx, path, func() { close(ready) }, func(ev WindowEvent) { got <- ev })
	}()
	<-h.subbed
	<-ready
	sent := []WindowEvent{{Name: "herald:snapshot", Data: json.RawMessage(`{"version":"x"}`)}, {Name: "herald:show"}}
	for _, ev := range sent {
		h.events <- ev
	}
	for i, want := range sent {
		select {
		case ev := <-got:
			if ev.Name != want.Name || string(ev.Data) != string(want.Data) {
				t.Fatalf("event %d = %+v, want %+v", i, ev, want)
			}
		case <-ctx.Done():
			t.Fatal("event not delivered")
		}
	}
	// The window goes away: the host's subscription ends.
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("WindowEvents after cancel: %v", err)
	}
	select {
	case <-h.gone:
	case <-ctx.Done():
		t.Fatal("the subscription outlived the window")
	}
	// Herald goes away: the window is told.
	h2 := &fakeHost{events: make(chan WindowEvent), subbed: make(chan struct{}), gone: make(chan struct{})}
	s.SetWindowHost(h2)
	go func() { done <- WindowEvents(ctx, path, nil, func(WindowEvent) {}) }()
	<-h2.subbed
	close(h2.events)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "Herald stopped") {
		t.Fatalf("WindowEvents after Herald left: %v", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shows != 1 || len(h.calls) != 2 {
		t.Fatalf("host saw %d shows and calls %v", h.shows, h.calls)
	}
}
