package source

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
)

// step is what one connect attempt of the fake transport does: come up
// (up), then end with err at once, or (hold) serve until its context
// ends, hearing network changes on netHeard.
type step struct {
	up   bool
	err  error
	hold bool
}

var (
	errRefused = fmt.Errorf("the server refused the token: %w", ErrUnauthorized)
	errConfig  = errors.New("no such endpoint here")
	errDown    = errors.New("connection refused")
	errWoke    = errors.New("the computer was asleep")
	errSlow    = errors.New("try again later")
)

// classifyFake reads the fake transport's errors.
func classifyFake(err error) (Fault, time.Duration) {
	switch {
	case errors.Is(err, errConfig):
		return FaultConfig, 0
	case errors.Is(err, errWoke):
		return FaultWoke, 0
	case errors.Is(err, errSlow):
		return FaultNetwork, 30 * time.Second
	}
	return DefaultClassify(err)
}

type superHarness struct {
	t        *testing.T
	clk      *clock.Fake
	sup      *Supervisor
	steps    chan step
	started  chan int
	netHeard chan struct{}
	statuses chan Status
	attempts atomic.Int32
	cancel   context.CancelFunc
	done     chan error

	mu sync.Mutex
	st Status
}

func startSupervisor(t *testing.T) *superHarness {
	t.Helper()
	h := &superHarness{t: t, clk: clock.NewFake(time.Unix(1_700_000_000, 0)), steps: make(chan step, 8),
		started: make(chan int, 8), netHeard: make(chan struct{}, 8), statuses: make(chan Status, 256), done: make(chan error, 1)}
	h.sup = NewSupervisor(SupervisorConfig{
		Clock: h.clk, Rand: func() float64 { return 0.5 }, Classify: classifyFake,
		Update: func(f func(*Status)) {
			h.mu.Lock()
			f(&h.st)
			st := h.st
			h.mu.Unlock()
			h.statuses <- st
		},
		Connect: func(ctx context.Context, l *Link) error {
			h.started <- int(h.attempts.Add(1))
			s := <-h.steps
			if s.up {
				l.Up(nil)
			}
			if !s.hold {
				return s.err
			}
			for {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-l.NetworkChanged():
					h.netHeard <- struct{}{}
				}
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.sup.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-h.done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v", err)
		}
		if st := h.status(); st.State != StateStopped {
			t.Errorf("state after Run: %s", st.State)
		}
	})
	return h
}

func (h *superHarness) status() Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.st
}

// attempt waits for attempt n to start and gives it s.
func (h *superHarness) attempt(n int, s step) {
	h.t.Helper()
	select {
	case got := <-h.started:
		if got != n {
			h.t.Fatalf("attempt %d started, want %d", got, n)
		}
	case <-time.After(10 * time.Second):
		h.t.Fatalf("attempt %d never started", n)
	}
	h.steps <- s
}

// state waits for a status in state want.
func (h *superHarness) state(want State) Status {
	h.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case st := <-h.statuses:
			if st.State == want {
				return st
			}
		case <-timeout:
			h.t.Fatalf("no status %s (last %+v)", want, h.status())
		}
	}
}

// TestSupervisorRefusalWaitsForTheUser: refused credentials and a refused
// configuration are not retried on a timer, nor on a network change;
// Kick retries once, at once.
func TestSupervisorRefusalWaitsForTheUser(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want State
	}{
		{errRefused, StateAuthFailed},
		{errConfig, StateConfigError},
		{&RedirectedError{Text: "redirected", Cause: &RedirectError{Status: 307}}, StateConfigError},
	} {
		t.Run(string(tc.want)+"/"+tc.err.Error(), func(t *testing.T) {
			t.Parallel()
			h := startSupervisor(t)
			h.attempt(1, step{err: tc.err})
			st := h.state(tc.want)
			if st.Err != tc.err.Error() || !st.NextRetry.IsZero() {
				t.Fatalf("status %+v", st)
			}
			// Nothing waits on the clock: a day passes, no retry.
			if n := h.clk.Waiters(); n != 0 {
				t.Fatalf("%d timers armed after a refusal", n)
			}
			h.clk.Advance(24 * time.Hour)
			h.sup.NetworkChanged()
			h.sup.Kick()
			h.attempt(2, step{err: tc.err}) // the kick's, not the day's or the network's
			h.state(tc.want)
			if n := h.attempts.Load(); n != 2 {
				t.Fatalf("%d attempts", n)
			}
		})
	}
}

// TestSupervisorBacksOff: a network failure waits out the backoff (quick
// while the outage is young), announced in the status before the wait;
// a kick or a network change ends the wait at once.
func TestSupervisorBacksOff(t *testing.T) {
	t.Parallel()
	for _, cut := range []string{"clock", "kick", "network"} {
		t.Run(cut, func(t *testing.T) {
			t.Parallel()
			h := startSupervisor(t)
			h.attempt(1, step{err: errDown})
			st := h.state(StateReconnecting)
			want := Backoff{}.OutageDelay(0, 0, 0.5)
			if st.Err != errDown.Error() || st.Attempt != 1 || st.NextRetry.Sub(h.clk.Now()) != want {
				t.Fatalf("status %+v, want a retry in %s", st, want)
			}
			switch cut {
			case "clock":
				h.clk.Advance(want - 1)
				if n := h.attempts.Load(); n != 1 {
					t.Fatalf("retried before the delay: %d attempts", n)
				}
				h.clk.Advance(1)
			case "kick":
				h.sup.Kick()
			case "network":
				h.sup.NetworkChanged()
			}
			h.attempt(2, step{err: errDown})
			if st := h.state(StateReconnecting); st.Attempt != 2 {
				t.Fatalf("second failure: %+v", st)
			}
		})
	}
}

// TestSupervisorServerAskedToWait: a Retry-After is the least wait.
func TestSupervisorServerAskedToWait(t *testing.T) {
	t.Parallel()
	h := startSupervisor(t)
	h.attempt(1, step{err: errSlow})
	if st := h.state(StateReconnecting); st.NextRetry.Sub(h.clk.Now()) != 30*time.Second {
		t.Fatalf("retry at %v, want in 30s", st.NextRetry)
	}
}

// TestSupervisorLiveLink: Up is connected; a network change reaches the
// live attempt; a kick ends it and redials at once; a failure found
// elsewhere (Fail) ends it as that failure.
func TestSupervisorLiveLink(t *testing.T) {
	t.Parallel()
	h := startSupervisor(t)
	h.attempt(1, step{up: true, hold: true})
	if st := h.state(StateConnected); st.ConnectedAt != h.clk.Now() || st.Attempt != 0 {
		t.Fatalf("connected %+v", st)
	}
	h.sup.NetworkChanged()
	select {
	case <-h.netHeard:
	case <-time.After(10 * time.Second):
		t.Fatal("the live link never heard of the network change")
	}
	before := h.clk.Now()
	h.sup.Kick()
	if st := h.state(StateReconnecting); st.Err != ErrReconnectAsked.Error() || !st.NextRetry.Equal(before) {
		t.Fatalf("after a kick: %+v", st)
	}
	h.attempt(2, step{up: true, hold: true})
	h.state(StateConnected)
	if !h.clk.Now().Equal(before) {
		t.Fatal("the redial waited on the clock")
	}
	h.sup.Fail(errRefused)
	if st := h.state(StateAuthFailed); st.Err != errRefused.Error() {
		t.Fatalf("after Fail: %+v", st)
	}
}

// TestSupervisorWokeRedialsAtOnce: a link found stale after a sleep is
// redialed without backoff, its attempt count reset.
func TestSupervisorWokeRedialsAtOnce(t *testing.T) {
	t.Parallel()
	h := startSupervisor(t)
	h.attempt(1, step{err: errDown})
	h.state(StateReconnecting)
	h.clk.Advance(time.Second)
	h.attempt(2, step{up: true, err: errWoke})
	if st := h.state(StateReconnecting); st.Attempt != 0 || !st.NextRetry.Equal(h.clk.Now()) {
		t.Fatalf("after a sleep: %+v", st)
	}
	h.attempt(3, step{err: errDown})
	if st := h.state(StateReconnecting); st.Attempt != 1 {
		t.Fatalf("after the redial failed: %+v", st)
	}
}

// TestSupervisorSettledLinkResetsAttempts: drops of short links grow the
// attempt count; a link that lasted Settled resets it.
func TestSupervisorSettledLinkResetsAttempts(t *testing.T) {
	t.Parallel()
	h := startSupervisor(t)
	settled := Backoff{}.WithDefaults().Settled
	n := 1
	for i := 1; i <= 3; i++ {
		h.attempt(n, step{up: true, err: errDown})
		if st := h.state(StateReconnecting); st.Attempt != i {
			t.Fatalf("short link %d: attempt %d", i, st.Attempt)
		}
		n++
		h.sup.Kick()
	}
	h.attempt(n, step{up: true, hold: true})
	h.state(StateConnected)
	h.clk.Advance(settled)
	h.sup.Fail(errDown)
	if st := h.state(StateReconnecting); st.Attempt != 1 {
		t.Fatalf("after a settled link: attempt %d, want 1", st.Attempt)
	}
}
