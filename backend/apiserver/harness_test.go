package apiserver_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
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
	statuses []apiserver.Status
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

func (r *recorder) onStatus(s apiserver.Status) {
	r.mu.Lock()
	r.statuses = append(r.statuses, s)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *recorder) snapshot() ([]wire.Event, []apiserver.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wire.Event(nil), r.events...), append([]apiserver.Status(nil), r.statuses...)
}

// waitFor blocks until cond holds over the recorded events and statuses.
func (r *recorder) waitFor(t testing.TB, what string, cond func([]wire.Event, []apiserver.Status) bool) {
	t.Helper()
	deadline := time.NewTimer(guard)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		evs, sts := r.snapshot()
		if cond(evs, sts) {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			evs, sts := r.snapshot()
			last := apiserver.Status{}
			if len(sts) > 0 {
				last = sts[len(sts)-1]
			}
			t.Fatalf("timed out waiting for %s; events %v; last status %+v", what, kinds(evs), last)
		}
	}
}

// runEvents returns the events of one run.
func runEvents(evs []wire.Event, run string) []wire.Event {
	var out []wire.Event
	for _, e := range evs {
		if e.Session == run {
			out = append(out, e)
		}
	}
	return out
}

// waitKind waits until the run has n events of kind and returns them.
func (r *recorder) waitKind(t testing.TB, run, kind string, n int) []wire.Event {
	t.Helper()
	var got []wire.Event
	r.waitFor(t, kind, func(evs []wire.Event, _ []apiserver.Status) bool {
		got = got[:0]
		for _, e := range runEvents(evs, run) {
			if e.Kind == kind {
				got = append(got, e)
			}
		}
		return len(got) >= n
	})
	return got
}

// waitRun waits until the status shows the run satisfying cond.
func (r *recorder) waitRun(t testing.TB, run, what string, cond func(apiserver.RunInfo) bool) apiserver.RunInfo {
	t.Helper()
	var got apiserver.RunInfo
	r.waitFor(t, what, func(_ []wire.Event, sts []apiserver.Status) bool {
		if len(sts) == 0 {
			return false
		}
		for _, ri := range sts[len(sts)-1].Runs {
			if ri.ID == run && cond(ri) {
				got = ri
				return true
			}
		}
		return false
	})
	return got
}

// waitState waits until the latest status is st.
func (r *recorder) waitState(t testing.TB, st source.State) apiserver.Status {
	t.Helper()
	var got apiserver.Status
	r.waitFor(t, string(st), func(_ []wire.Event, sts []apiserver.Status) bool {
		if len(sts) > 0 && sts[len(sts)-1].State == st {
			got = sts[len(sts)-1]
			return true
		}
		return false
	})
	return got
}

// waitServer blocks until cond holds on the fake server.
func waitServer(t testing.TB, srv *apiservertest.Server, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, guard, "the server: "+what, srv.Changed, cond)
}

type harness struct {
	t      testing.TB
	srv    *apiservertest.Server
	client *apiserver.Client
	rec    *recorder
	clk    *clock.Fake
	cancel context.CancelFunc
	done   chan error
	// manual, when set, stops the harness from skipping retry waits.
	manual atomic.Bool
}

type setup struct {
	server func(*apiservertest.Options)
	client func(*apiserver.Config)
	manual bool
	noRun  bool
}

// start runs a client against a fresh fake server on a fake clock. Retry
// waits are skipped by advancing the clock as soon as the client announces
// them (unless manual); status polls are always left to the test.
func start(t testing.TB, d apiservertest.Dialect, s setup) *harness {
	t.Helper()
	opts := apiservertest.Options{Dialect: d}
	if s.server != nil {
		s.server(&opts)
	}
	srv := apiservertest.NewServer(opts)
	t.Cleanup(srv.Close)
	h := &harness{t: t, srv: srv, rec: newRecorder(), clk: clock.NewFake(epoch), done: make(chan error, 1)}
	h.manual.Store(s.manual)
	cfg := apiserver.Config{
		Name:    "hermes-api",
		URL:     srv.URL,
		Key:     srv.Key(),
		Clock:   h.clk,
		OnEvent: h.rec.onEvent,
		Rand:    func() float64 { return 0.5 },
	}
	cfg.OnStatus = func(st apiserver.Status) {
		h.rec.onStatus(st)
		if st.State == source.StateReconnecting && !h.manual.Load() {
			if d := st.NextRetry.Sub(h.clk.Now()); d > 0 {
				h.clk.Advance(d)
			}
		}
	}
	if s.client != nil {
		s.client(&cfg)
	}
	c, err := apiserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.client = c
	// Herald must never send an Origin header, and must send the key on
	// every request that needs one.
	t.Cleanup(func() {
		if srv.OriginSeen() {
			t.Errorf("a request carried an Origin header")
		}
		if cfg.Key == srv.Key() {
			for _, r := range srv.Requests() {
				if a := r.Header.Get("Authorization"); a != "Bearer [ok]" {
					t.Errorf("%s %s sent Authorization %q", r.Method, r.Path, a)
				}
			}
		}
	})
	if !s.noRun {
		h.run()
		h.rec.waitState(t, source.StateConnected)
	}
	return h
}

func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.client.Run(ctx) }()
	h.t.Cleanup(h.stop)
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

// startRun starts a run and returns its id.
func (h *harness) startRun(input string) string {
	h.t.Helper()
	r, err := h.client.StartRun(ctxT(h.t), apiserver.RunRequest{Input: input})
	if err != nil {
		h.t.Fatal(err)
	}
	return r.ID
}

// pollUntil fires the run's status polls one by one until an event of
// kind arrives, and returns it.
func (h *harness) pollUntil(run, kind string) wire.Event {
	h.t.Helper()
	for {
		var got *wire.Event
		var next time.Time
		h.rec.waitFor(h.t, kind+" or a status poll", func(evs []wire.Event, sts []apiserver.Status) bool {
			for _, e := range runEvents(evs, run) {
				if e.Kind == kind {
					got = &e
					return true
				}
			}
			if len(sts) == 0 {
				return false
			}
			for _, ri := range sts[len(sts)-1].Runs {
				if ri.ID == run && ri.Mode == apiserver.ModePolling && ri.NextPoll.After(h.clk.Now()) {
					next = ri.NextPoll
					return true
				}
			}
			return false
		})
		if got != nil {
			return *got
		}
		h.clk.Advance(next.Sub(h.clk.Now()))
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

// texts returns the concatenated delta text of events.
func texts(evs []wire.Event) string {
	var b strings.Builder
	for _, e := range evs {
		if d, ok := e.Data.(*wire.DeltaPayload); ok {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

var dialects = []apiservertest.Dialect{apiservertest.SingleConsumer, apiservertest.LastEventID}
