package bridge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/bridge"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// eagerRoute answers every poll at once with something new (a churning or
// hostile route), unless hold is set: then a poll waits until released.
type eagerRoute struct {
	mu      sync.Mutex
	polls   int
	cursor  int64
	hold    chan struct{}
	changed chan struct{}
}

func (e *eagerRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.polls++
	e.cursor++
	cur, hold := e.cursor, e.hold
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
	if hold != nil && r.URL.Query().Get("wait") != "0" {
		<-hold
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"protocol": 1, "instance": "i1", "cursor": cur, "watchers": 1, "recent": []any{},
		"items": []map[string]any{{"kind": "approval", "id": "a" + strconv.FormatInt(cur, 10), "digest": "d", "command": "ls", "allowed_choices": []string{"once", "deny"}}}})
}

func (e *eagerRoute) count() (int, <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.polls, e.changed
}

// waitPolls waits until the route has had n polls.
func (e *eagerRoute) waitPolls(t *testing.T, n int) {
	t.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		got, ch := e.count()
		if got >= n {
			if got > n {
				t.Fatalf("%d polls, want %d", got, n)
			}
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("%d polls, want %d", got, n)
		}
	}
}

// TestPollPacing: a long-poll the route answers at once (without waiting
// for a change) is followed by the next only MinPollInterval after it was
// sent, on the clock; one that held until something changed is followed
// at once. On a fake clock.
func TestPollPacing(t *testing.T) {
	t.Parallel()
	route := &eagerRoute{changed: make(chan struct{})}
	url := httptestServer(t, route)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	events := make(chan wire.Event, 1024)
	c, err := bridge.New(bridge.Config{Name: "eager", URL: url, Token: "tok", Clock: clk, OnEvent: func(ev wire.Event) { events <- ev }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	// The first poll asks not to wait; the second is a long-poll the
	// route answers at once: the third waits for the clock.
	route.waitPolls(t, 2)
	clk.BlockUntil(1)
	clk.Advance(bridge.MinPollInterval - time.Millisecond)
	if n, _ := route.count(); n != 2 {
		t.Fatalf("%d polls before the interval passed", n)
	}
	clk.Advance(time.Millisecond)
	route.waitPolls(t, 3)
	clk.BlockUntil(1)
	if c.Status().State != source.StateConnected {
		t.Fatalf("status %+v", c.Status())
	}

	// A long-poll that held until something changed: the next goes at
	// once, without waiting for the clock.
	release := make(chan struct{})
	route.mu.Lock()
	route.hold = release
	route.mu.Unlock()
	clk.Advance(bridge.MinPollInterval) // the paced fourth poll is sent and held
	route.waitPolls(t, 4)
	clk.Advance(bridge.MinPollInterval) // it holds a whole interval
	route.mu.Lock()
	route.hold = nil
	route.mu.Unlock()
	close(release)
	route.waitPolls(t, 5) // at once: no clock advance needed
}
