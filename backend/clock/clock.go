// Package clock abstracts time so that Herald's timing logic (backoff,
// heartbeats, expiry) can be driven by tests without sleeping.
//
// Production code takes a Clock and uses Real; tests use a Fake and move it
// forward with Advance, or Suspend it to play a laptop's sleep.
//
// Running time and wall time differ across a suspend: Go's monotonic clock
// (and every timer) stops while the machine sleeps, the wall clock does not.
// Jumped compares the two so that code can tell that the machine slept (or
// the wall clock was stepped) between two readings.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock is the subset of the time package that Herald's packages use.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that fires every d.
	NewTicker(d time.Duration) Ticker
}

// Timer is a one-shot timer, like *time.Timer.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing. It reports whether it was active.
	Stop() bool
	// Reset re-arms the timer to fire after d.
	Reset(d time.Duration)
}

// ResetAt re-arms t to fire when c reaches at. On the fake clock the
// deadline is absolute even if the clock moves while this runs (a real
// timer is re-armed for at minus now, the best it can do).
func ResetAt(c Clock, t Timer, at time.Time) {
	if ft, ok := t.(*fakeTimer); ok {
		ft.f.disarm(ft.w)
		ft.f.armAt(ft.w, at)
		return
	}
	t.Stop()
	t.Reset(max(at.Sub(c.Now()), 0))
}

// Ticker is a repeating timer, like *time.Ticker.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Monotonic is implemented by clocks that can tell running time from wall
// time: Real (Go's monotonic clock reading) and Fake (see Suspend).
type Monotonic interface {
	// Running returns the running time between two readings of this
	// clock's Now: the wall time between them minus any suspend.
	Running(from, to time.Time) time.Duration
}

// Jumped reports how much more wall time than running time passed between
// two readings of c.Now: about zero normally, the length of the sleep after
// a suspend, and the size of the step when the wall clock was set. A clock
// that does not implement Monotonic never jumps.
func Jumped(c Clock, from, to time.Time) time.Duration {
	m, ok := c.(Monotonic)
	if !ok {
		return 0
	}
	return to.Round(0).Sub(from.Round(0)) - m.Running(from, to)
}

// Real is the wall clock.
type Real struct{}

// Running uses the monotonic clock readings time.Now attaches (on Linux
// CLOCK_MONOTONIC, which stops during a suspend).
func (Real) Running(from, to time.Time) time.Duration { return to.Sub(from) }

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// NewTicker wraps time.NewTicker.
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time   { return r.t.C }
func (r realTimer) Stop() bool            { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) { r.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// Fake is a manually driven clock. Timers and tickers fire only when Advance
// moves the clock past their deadline. It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*fakeWaiter
	changed chan struct{} // closed and replaced whenever a waiter is added
	fired   int64         // timer and ticker firings so far
	sleeps  []sleep       // every Suspend, in order
}

// sleep is one simulated suspend: the wall clock went from end-d to end.
type sleep struct {
	end time.Time
	d   time.Duration
}

type fakeWaiter struct {
	at     time.Time
	period time.Duration // 0 for timers
	ch     chan time.Time
	active bool
}

// NewFake returns a fake clock set to start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the clock reaches Now()+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	w := &fakeWaiter{ch: make(chan time.Time, 1)}
	f.arm(w, d)
	return &fakeTimer{f: f, w: w}
}

// NewTicker returns a ticker that fires each time the clock passes a
// multiple of d from now. Like time.Ticker, it drops ticks for a slow reader.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive ticker interval")
	}
	w := &fakeWaiter{ch: make(chan time.Time, 1), period: d}
	f.arm(w, d)
	return &fakeTicker{f: f, w: w}
}

// armAt arms w for an absolute deadline; one already reached fires now.
func (f *Fake) armAt(w *fakeWaiter, at time.Time) {
	f.mu.Lock()
	w.at = at
	if !w.active {
		w.active = true
		f.waiters = append(f.waiters, w)
	}
	due := !at.After(f.now)
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
	if due {
		f.Advance(0)
	}
}

func (f *Fake) arm(w *fakeWaiter, d time.Duration) {
	f.mu.Lock()
	w.at = f.now.Add(d)
	if !w.active {
		w.active = true
		f.waiters = append(f.waiters, w)
	}
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
	if d <= 0 {
		f.Advance(0)
	}
}

func (f *Fake) disarm(w *fakeWaiter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	was := w.active
	w.active = false
	// Like time.Timer since Go 1.23: a stopped timer delivers no stale tick.
	select {
	case <-w.ch:
		was = true
	default:
	}
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			break
		}
	}
	return was
}

// Advance moves the clock forward by d, firing every timer and ticker whose
// deadline is reached, in deadline order.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	end := f.now.Add(d)
	for {
		sort.SliceStable(f.waiters, func(i, j int) bool { return f.waiters[i].at.Before(f.waiters[j].at) })
		if len(f.waiters) == 0 || f.waiters[0].at.After(end) {
			break
		}
		w := f.waiters[0]
		if w.at.After(f.now) {
			f.now = w.at
		}
		f.fired++
		select {
		case w.ch <- f.now:
		default:
		}
		if w.period > 0 {
			w.at = w.at.Add(w.period)
		} else {
			w.active = false
			f.waiters = f.waiters[1:]
		}
	}
	f.now = end
	f.mu.Unlock()
}

// Suspend plays a laptop's sleep of d: the wall clock moves forward by d
// but running time does not, so no timer fires and every armed timer and
// ticker still has the same time to run as before, exactly as Go's timers
// behave across a real suspend. Jumped reports d across it.
func (f *Fake) Suspend(d time.Duration) {
	if d <= 0 {
		panic("clock: non-positive suspend")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	for _, w := range f.waiters {
		w.at = w.at.Add(d)
	}
	f.sleeps = append(f.sleeps, sleep{end: f.now, d: d})
}

// Running returns to-from minus every Suspend that happened between the two
// readings.
func (f *Fake) Running(from, to time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := to.Sub(from)
	for _, s := range f.sleeps {
		if from.Before(s.end) && !to.Before(s.end) {
			d -= s.d
		}
	}
	return d
}

// Fired reports how many times a timer or ticker has fired so far: each is
// one wake-up of the code that waits on it.
func (f *Fake) Fired() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// Waiters reports how many timers and tickers are armed.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// BlockUntil waits until at least n timers or tickers are armed. Tests use it
// to know that the code under test has reached its wait before advancing.
func (f *Fake) BlockUntil(n int) {
	for {
		f.mu.Lock()
		if len(f.waiters) >= n {
			f.mu.Unlock()
			return
		}
		ch := f.changed
		f.mu.Unlock()
		<-ch
	}
}

type fakeTimer struct {
	f *Fake
	w *fakeWaiter
}

func (t *fakeTimer) C() <-chan time.Time { return t.w.ch }
func (t *fakeTimer) Stop() bool          { return t.f.disarm(t.w) }
func (t *fakeTimer) Reset(d time.Duration) {
	t.f.disarm(t.w)
	t.f.arm(t.w, d)
}

type fakeTicker struct {
	f *Fake
	w *fakeWaiter
}

func (t *fakeTicker) C() <-chan time.Time { return t.w.ch }
func (t *fakeTicker) Stop()               { t.f.disarm(t.w) }
