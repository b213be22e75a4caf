package gateway

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
	"github.com/herald-desktop/herald/backend/wire"
)

// guard bounds how long a test waits for a condition before failing. It is a
// deadlock guard, never a timing assumption: conditions are signalled.
const guard = 20 * time.Second

// recorder collects what a client reports and lets tests wait for it.
type recorder struct {
	mu       sync.Mutex
	events   []wire.Event
	statuses []source.Status
	changed  chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) onEvent(ev wire.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *recorder) onStatus(s source.Status) {
	r.mu.Lock()
	r.statuses = append(r.statuses, s)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *recorder) poke() {
	r.mu.Lock()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// waitHeard waits until the client has heard from the gateway at or after
// the fake clock's current time, with no liveness ping outstanding.
func (h *harness) waitHeard(t testing.TB) {
	t.Helper()
	at := h.clk.Now().UnixNano()
	h.rec.waitFor(t, "traffic from the gateway", func([]wire.Event, []source.Status) bool {
		cn := h.client.current()
		return cn != nil && cn.lastRead.Load() >= at && !cn.pinging.Load()
	})
}

func (r *recorder) snapshot() ([]wire.Event, []source.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wire.Event(nil), r.events...), append([]source.Status(nil), r.statuses...)
}

// waitFor blocks until cond holds over the recorded events and statuses.
func (r *recorder) waitFor(t testing.TB, what string, cond func([]wire.Event, []source.Status) bool) {
	t.Helper()
	deadline := time.NewTimer(guard)
	defer deadline.Stop()
	for {
		// Evaluate outside the lock: conditions may read the recorder.
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		evs, sts := r.snapshot()
		ok := cond(evs, sts)
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			evs, sts := r.snapshot()
			last := source.Status{}
			if len(sts) > 0 {
				last = sts[len(sts)-1]
			}
			t.Fatalf("timed out waiting for %s; %d events, last status %+v", what, len(evs), last)
		}
	}
}

func (r *recorder) waitKind(t testing.TB, kind string, n int) []wire.Event {
	t.Helper()
	var got []wire.Event
	r.waitFor(t, kind, func(evs []wire.Event, _ []source.Status) bool {
		got = got[:0]
		for _, e := range evs {
			if e.Kind == kind {
				got = append(got, e)
			}
		}
		return len(got) >= n
	})
	return got
}

// mark returns a position in the status history for waitStateAfter.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.statuses)
}

// waitStateAfter waits until some status reported after mark is st.
func (r *recorder) waitStateAfter(t testing.TB, mark int, st source.State) source.Status {
	t.Helper()
	got, _ := r.nextState(t, mark, st)
	return got
}

// nextState waits for the first status reported after mark that is st,
// and returns it with the mark just past it: statuses reported since then
// are still after that mark.
func (r *recorder) nextState(t testing.TB, mark int, st source.State) (got source.Status, next int) {
	t.Helper()
	r.waitFor(t, string(st), func(_ []wire.Event, sts []source.Status) bool {
		for i := min(mark, len(sts)); i < len(sts); i++ {
			if sts[i].State == st {
				got, next = sts[i], i+1
				return true
			}
		}
		return false
	})
	return got, next
}

// waitReconnected waits for a drop (reconnecting) after mark and then a
// fresh connected state after that drop.
func (r *recorder) waitReconnected(t testing.TB, mark int) {
	t.Helper()
	r.waitFor(t, "reconnect", func(_ []wire.Event, sts []source.Status) bool {
		dropped := false
		for _, s := range sts[min(mark, len(sts)):] {
			switch {
			case s.State == source.StateReconnecting:
				dropped = true
			case dropped && s.State == source.StateConnected:
				return true
			}
		}
		return false
	})
}

// waitState waits until the client has reported st at least once.
func (r *recorder) waitState(t testing.TB, st source.State) source.Status {
	t.Helper()
	return r.waitStateAfter(t, 0, st)
}

// waitServer blocks until cond holds on the fake gateway.
func waitServer(t testing.TB, srv *hermestest.Server, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, guard, "the gateway: "+what, srv.Changed, cond)
}

type harness struct {
	t      testing.TB
	srv    *hermestest.Server
	client *Client
	rec    *recorder
	clk    *clock.Fake
	cancel context.CancelFunc
	done   chan error
	// manual, when set, stops the harness from skipping backoff waits.
	manual atomic.Bool
}

// start runs a client against srv on a fake clock. Backoff waits are
// skipped by advancing the fake clock as soon as the client announces them.
func start(t testing.TB, srv *hermestest.Server, mod func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, srv: srv, rec: newRecorder(), clk: clock.NewFake(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)), done: make(chan error, 1)}
	cfg := Config{
		Name:    "gw",
		URL:     srv.URL,
		Token:   srv.Token(),
		Clock:   h.clk,
		OnEvent: h.rec.onEvent,
		Rand:    func() float64 { return 0.5 },
	}
	cfg.OnStatus = func(s source.Status) {
		h.rec.onStatus(s)
		if s.State == source.StateReconnecting && !h.manual.Load() {
			h.clk.Advance(s.NextRetry.Sub(h.clk.Now()))
		}
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.client = c
	c.heard = h.rec.poke
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- c.Run(ctx) }()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	select {
	case <-h.done:
	case <-time.After(guard):
		h.t.Errorf("client did not stop")
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}
