package clock_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
)

// Both clocks satisfy the interface production code takes.
var (
	_ clock.Clock = clock.Real{}
	_ clock.Clock = (*clock.Fake)(nil)
)

// guard bounds how long a test waits for another goroutine before failing.
// It is a deadlock guard, never a timing assumption.
const guard = 10 * time.Second

var start = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// recvNow receives from ch without blocking. A Fake delivers inside Advance
// (and inside NewTimer/Reset for non-positive durations), so after those
// return a tick is either buffered or was never sent.
func recvNow(ch <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
		return time.Time{}, false
	}
}

// recvGuard waits for a value produced by another goroutine.
func recvGuard[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func TestFakeNow(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(start)
	if got := fc.Now(); !got.Equal(start) {
		t.Fatalf("Now = %v, want %v", got, start)
	}
	steps := []time.Duration{0, time.Nanosecond, time.Second, 90 * time.Minute, 0}
	want := start
	for _, d := range steps {
		fc.Advance(d)
		want = want.Add(d)
		if got := fc.Now(); !got.Equal(want) {
			t.Fatalf("after Advance(%v): Now = %v, want %v", d, got, want)
		}
	}
}

func TestFakeTimerFiresAtDeadline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		d        time.Duration
		steps    []time.Duration
		firesAt  int // index of the step after which the timer has fired
		deadline time.Duration
	}{
		{"exact single step", 10 * time.Second, []time.Duration{10 * time.Second}, 0, 10 * time.Second},
		{"approach then reach", 10 * time.Second, []time.Duration{9 * time.Second, 999 * time.Millisecond, time.Millisecond - 1, 1}, 3, 10 * time.Second},
		{"overshoot", time.Second, []time.Duration{400 * time.Millisecond, 5 * time.Second}, 1, time.Second},
		{"one nanosecond", 1, []time.Duration{0, 1}, 1, 1},
		{"zero advances do nothing", time.Minute, []time.Duration{0, 0, time.Minute}, 2, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fc := clock.NewFake(start)
			tm := fc.NewTimer(tt.d)
			for i, step := range tt.steps {
				fc.Advance(step)
				v, fired := recvNow(tm.C())
				if i < tt.firesAt && fired {
					t.Fatalf("fired after step %d (now %v), before its deadline", i, fc.Now().Sub(start))
				}
				if i == tt.firesAt {
					if !fired {
						t.Fatalf("did not fire after step %d (now %v)", i, fc.Now().Sub(start))
					}
					// The tick carries the deadline, not the time Advance
					// ended at.
					if want := start.Add(tt.deadline); !v.Equal(want) {
						t.Errorf("tick = %v, want %v", v, want)
					}
				}
			}
			// One-shot: it never fires again.
			fc.Advance(10 * tt.d)
			if _, fired := recvNow(tm.C()); fired {
				t.Errorf("timer fired twice")
			}
			if n := fc.Waiters(); n != 0 {
				t.Errorf("Waiters = %d after the timer fired", n)
			}
		})
	}
}

func TestFakeTimerZeroOrNegativeDurationFiresImmediately(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{0, -time.Nanosecond, -time.Hour} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			fc := clock.NewFake(start)
			tm := fc.NewTimer(d)
			v, fired := recvNow(tm.C())
			if !fired {
				t.Fatal("did not fire without Advance")
			}
			if !v.Equal(start) {
				t.Errorf("tick = %v, want %v (the clock does not move)", v, start)
			}
			if got := fc.Now(); !got.Equal(start) {
				t.Errorf("Now = %v, want %v", got, start)
			}
			if n := fc.Waiters(); n != 0 {
				t.Errorf("Waiters = %d", n)
			}
			if tm.Stop() {
				t.Error("Stop reported an already fired timer as active")
			}
		})
	}
}

func TestFakeTimerStop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		advance    time.Duration // before Stop
		wantActive bool
	}{
		{"before any advance", 0, true},
		{"just before deadline", time.Second - 1, true},
		{"after firing", time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fc := clock.NewFake(start)
			other := fc.NewTimer(time.Hour) // must be unaffected
			tm := fc.NewTimer(time.Second)
			fc.Advance(tt.advance)
			fired := false
			if _, ok := recvNow(tm.C()); ok {
				fired = true
			}
			if got := tm.Stop(); got != tt.wantActive {
				t.Errorf("Stop = %v, want %v", got, tt.wantActive)
			}
			if tm.Stop() {
				t.Error("second Stop reported active")
			}
			if n := fc.Waiters(); n != 1 {
				t.Errorf("Waiters = %d after Stop, want 1", n)
			}
			fc.Advance(time.Hour)
			if _, ok := recvNow(tm.C()); ok {
				t.Error("stopped timer fired")
			}
			if fired == tt.wantActive {
				t.Errorf("fired before Stop = %v, but Stop reported active = %v", fired, tt.wantActive)
			}
			if _, ok := recvNow(other.C()); !ok {
				t.Error("stopping one timer prevented another from firing")
			}
		})
	}
}

func TestFakeTimerReset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prepare func(t *testing.T, fc *clock.Fake, tm clock.Timer) // runs after NewTimer(time.Second)
		reset   time.Duration
	}{
		{"after firing", func(t *testing.T, fc *clock.Fake, tm clock.Timer) {
			fc.Advance(time.Second)
			if _, ok := recvNow(tm.C()); !ok {
				t.Fatal("timer did not fire")
			}
		}, 5 * time.Second},
		{"while active extends the deadline", func(t *testing.T, fc *clock.Fake, tm clock.Timer) {
			fc.Advance(500 * time.Millisecond)
		}, 10 * time.Second},
		{"while active shortens the deadline", func(t *testing.T, fc *clock.Fake, tm clock.Timer) {}, time.Millisecond},
		{"after Stop", func(t *testing.T, fc *clock.Fake, tm clock.Timer) {
			tm.Stop()
		}, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fc := clock.NewFake(start)
			tm := fc.NewTimer(time.Second)
			tt.prepare(t, fc, tm)
			armedAt := fc.Now()
			tm.Reset(tt.reset)
			if n := fc.Waiters(); n != 1 {
				t.Fatalf("Waiters = %d after Reset, want 1 (no duplicate arming)", n)
			}
			fc.Advance(tt.reset - 1)
			if _, ok := recvNow(tm.C()); ok {
				t.Fatal("fired before the reset deadline")
			}
			fc.Advance(1)
			v, ok := recvNow(tm.C())
			if !ok {
				t.Fatal("did not fire at the reset deadline")
			}
			if want := armedAt.Add(tt.reset); !v.Equal(want) {
				t.Errorf("tick = %v, want %v", v, want)
			}
			fc.Advance(time.Hour)
			if _, ok := recvNow(tm.C()); ok {
				t.Error("fired twice after one Reset")
			}
		})
	}
}

func TestFakeTimerResetZeroFiresImmediately(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(start)
	tm := fc.NewTimer(time.Hour)
	tm.Reset(0)
	if _, ok := recvNow(tm.C()); !ok {
		t.Fatal("Reset(0) did not fire")
	}
	if n := fc.Waiters(); n != 0 {
		t.Errorf("Waiters = %d", n)
	}
}

func TestFakeTimersFireInDeadlineOrder(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(start)
	// Created out of order, one duplicate deadline.
	ds := []time.Duration{3 * time.Second, time.Second, 5 * time.Second, 2 * time.Second, time.Second, 4 * time.Second}
	timers := make([]clock.Timer, len(ds))
	for i, d := range ds {
		timers[i] = fc.NewTimer(d)
	}
	fc.Advance(10 * time.Second)
	// The fake moves Now to each deadline as it fires it and never moves it
	// back, so every timer carrying exactly its own deadline proves they
	// fired in deadline order within the single Advance.
	for i, tm := range timers {
		v, ok := recvNow(tm.C())
		if !ok {
			t.Errorf("timer %d (%v) did not fire", i, ds[i])
			continue
		}
		if want := start.Add(ds[i]); !v.Equal(want) {
			t.Errorf("timer %d (%v) tick = %v, want %v", i, ds[i], v.Sub(start), ds[i])
		}
	}
	if got, want := fc.Now(), start.Add(10*time.Second); !got.Equal(want) {
		t.Errorf("Now = %v, want %v", got, want)
	}
}

// A ticker sharing an Advance with timers fires at its own period, in order
// with them.
func TestFakeTickerAndTimersInterleave(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(start)
	tk := fc.NewTicker(time.Second)
	defer tk.Stop()
	tm := fc.NewTimer(1500 * time.Millisecond)
	fc.Advance(1200 * time.Millisecond)
	if v, ok := recvNow(tk.C()); !ok || !v.Equal(start.Add(time.Second)) {
		t.Fatalf("tick = %v, %v; want %v", v, ok, start.Add(time.Second))
	}
	fc.Advance(time.Second) // to 2.2s: timer at 1.5s, tick at 2s
	if v, ok := recvNow(tm.C()); !ok || !v.Equal(start.Add(1500*time.Millisecond)) {
		t.Errorf("timer = %v, %v; want 1.5s", v.Sub(start), ok)
	}
	if v, ok := recvNow(tk.C()); !ok || !v.Equal(start.Add(2*time.Second)) {
		t.Errorf("tick = %v, %v; want 2s", v.Sub(start), ok)
	}
}

func TestFakeTicker(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(start)
	tk := fc.NewTicker(time.Second)
	for i := 1; i <= 5; i++ {
		fc.Advance(999 * time.Millisecond)
		if _, ok := recvNow(tk.C()); ok {
			t.Fatalf("period %d: ticked early", i)
		}
		fc.Advance(time.Millisecond)
		v, ok := recvNow(tk.C())
		if !ok {
			t.Fatalf("period %d: no tick", i)
		}
		if want := start.Add(time.Duration(i) * time.Second); !v.Equal(want) {
			t.Errorf("period %d: tick = %v, want %v", i, v, want)
		}
		// The clock keeps its 1s grid: the next tick is a full period away.
		fc.Advance(0)
		if _, ok := recvNow(tk.C()); ok {
			t.Fatalf("period %d: extra tick", i)
		}
	}
	if n := fc.Waiters(); n != 1 {
		t.Errorf("Waiters = %d for a running ticker, want 1", n)
	}
	tk.Stop()
	if n := fc.Waiters(); n != 0 {
		t.Errorf("Waiters = %d after Stop, want 0", n)
	}
	fc.Advance(time.Minute)
	if _, ok := recvNow(tk.C()); ok {
		t.Error("stopped ticker ticked")
	}
	tk.Stop() // idempotent
}

// Like time.Ticker, a ticker whose reader falls behind delivers one tick and
// drops the rest instead of queueing them or bursting afterwards.
func TestFakeTickerDropsTicksForSlowReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps []time.Duration // advanced without reading
	}{
		{"one big advance", []time.Duration{5 * time.Second}},
		{"many small advances", []time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second}},
		{"uneven advances", []time.Duration{1500 * time.Millisecond, 2 * time.Second, 1500 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fc := clock.NewFake(start)
			tk := fc.NewTicker(time.Second)
			defer tk.Stop()
			for _, d := range tt.steps {
				fc.Advance(d)
			}
			// now = start+5s: five ticks were due, one is delivered.
			v, ok := recvNow(tk.C())
			if !ok {
				t.Fatal("no tick buffered")
			}
			if off := v.Sub(start); off <= 0 || off > 5*time.Second || off%time.Second != 0 {
				t.Errorf("tick at %v, want one of the due 1s-grid instants", off)
			}
			if _, ok := recvNow(tk.C()); ok {
				t.Fatal("more than one tick buffered: ticks were queued, not dropped")
			}
			// No catch-up burst: the next tick is the next grid instant.
			fc.Advance(999 * time.Millisecond)
			if _, ok := recvNow(tk.C()); ok {
				t.Fatal("ticked before the next period")
			}
			fc.Advance(time.Millisecond)
			v, ok = recvNow(tk.C())
			if !ok || !v.Equal(start.Add(6*time.Second)) {
				t.Errorf("next tick = %v, %v; want 6s", v.Sub(start), ok)
			}
		})
	}
}

func TestFakeTickerNonPositivePanics(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{0, -time.Second} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			fc := clock.NewFake(start)
			defer func() {
				if recover() == nil {
					t.Errorf("NewTicker(%v) did not panic", d)
				}
			}()
			fc.NewTicker(d)
		})
	}
}

func TestFakeWaiters(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(start)
	check := func(step string, want int) {
		t.Helper()
		if got := fc.Waiters(); got != want {
			t.Fatalf("%s: Waiters = %d, want %d", step, got, want)
		}
	}
	check("new clock", 0)
	t1 := fc.NewTimer(time.Second)
	check("one timer", 1)
	t2 := fc.NewTimer(time.Hour)
	check("two timers", 2)
	tk := fc.NewTicker(time.Minute)
	check("two timers and a ticker", 3)
	fc.NewTimer(0)
	check("zero timer fires at once", 3)
	fc.Advance(time.Second)
	check("t1 fired", 2)
	fc.Advance(time.Minute)
	check("ticker ticked, stays armed", 2)
	t1.Reset(time.Second)
	check("t1 re-armed", 3)
	t1.Reset(time.Second)
	check("t1 reset while armed", 3)
	t2.Stop()
	check("t2 stopped", 2)
	t2.Stop()
	check("t2 stopped twice", 2)
	tk.Stop()
	check("ticker stopped", 1)
	fc.Advance(time.Second)
	check("t1 fired again", 0)
}

func TestFakeBlockUntilAlreadySatisfied(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(start)
	fc.BlockUntil(0) // must not block
	fc.NewTimer(time.Second)
	fc.NewTicker(time.Second)
	fc.BlockUntil(1)
	fc.BlockUntil(2)
}

// The usual pattern: code under test arms a timer in its own goroutine and
// waits on it; the test uses BlockUntil to know when to Advance. If
// BlockUntil returned before the timer was armed, Advance would run first and
// the timer would never fire, and the guard would trip.
func TestFakeBlockUntilThenAdvance(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			fc := clock.NewFake(start)
			got := make(chan time.Time, n)
			for i := 0; i < n; i++ {
				go func(d time.Duration) {
					tm := fc.NewTimer(d)
					got <- <-tm.C()
				}(time.Duration(i+1) * time.Second)
			}
			fc.BlockUntil(n)
			if w := fc.Waiters(); w < n {
				t.Fatalf("BlockUntil(%d) returned with %d waiters", n, w)
			}
			fc.Advance(time.Duration(n) * time.Second)
			seen := map[time.Time]bool{}
			for i := 0; i < n; i++ {
				seen[recvGuard(t, got, "a timer armed before BlockUntil returned")] = true
			}
			for i := 1; i <= n; i++ {
				if !seen[start.Add(time.Duration(i)*time.Second)] {
					t.Errorf("no tick at %ds: %v", i, seen)
				}
			}
		})
	}
}

// BlockUntil must keep waiting while fewer than n waiters are armed, and
// wake when the n-th arrives (here through Reset of a fired timer).
func TestFakeBlockUntilWaitsForNth(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(start)
	first := fc.NewTimer(time.Second)
	fc.Advance(time.Second) // first fires: 0 waiters
	<-first.C()

	returned := make(chan struct{})
	go func() {
		fc.BlockUntil(2)
		close(returned)
	}()

	// Drive the clock through states with fewer than two waiters. Each
	// step that changes the waiter set wakes BlockUntil, which must go
	// back to waiting.
	second := fc.NewTimer(time.Minute)
	select {
	case <-returned:
		t.Fatal("BlockUntil(2) returned with one waiter")
	default:
	}
	second.Stop()
	fc.NewTimer(0) // arms and fires at once: still one-or-fewer
	select {
	case <-returned:
		t.Fatal("BlockUntil(2) returned with no waiters")
	default:
	}
	second.Reset(time.Minute)
	first.Reset(time.Minute)
	recvGuard(t, returned, "BlockUntil(2) after two timers were armed")
}

// Many goroutines arming, stopping and advancing at once: checks the Fake's
// locking under -race and that no armed timer is lost.
func TestFakeConcurrentUse(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(start)
	const n = 32
	var tickersDone, wg sync.WaitGroup
	tickersDone.Add(n)
	wg.Add(n)
	fired := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			defer wg.Done()
			// A short-lived ticker first, concurrently with other
			// goroutines' timers; it is gone before BlockUntil counts.
			tk := fc.NewTicker(time.Millisecond)
			_ = fc.Now()
			tk.Stop()
			tickersDone.Done()
			tm := fc.NewTimer(time.Duration(i+1) * time.Millisecond)
			<-tm.C()
			fired <- struct{}{}
		}(i)
	}
	tickersDone.Wait()
	fc.BlockUntil(n)
	var adv sync.WaitGroup
	for i := 0; i < 4; i++ {
		adv.Add(1)
		go func() {
			defer adv.Done()
			fc.Advance(10 * time.Millisecond)
		}()
	}
	adv.Wait()
	for i := 0; i < n; i++ {
		recvGuard(t, fired, "every timer to fire")
	}
	wg.Wait()
	if got, want := fc.Now(), start.Add(40*time.Millisecond); !got.Equal(want) {
		t.Errorf("Now = %v, want %v", got, want)
	}
	if w := fc.Waiters(); w != 0 {
		t.Errorf("Waiters = %d, want 0", w)
	}
}

// Real is the wall clock: these use real (short) time but never sleep.
func TestReal(t *testing.T) {
	t.Parallel()
	var c clock.Clock = clock.Real{}

	before := time.Now()
	now := c.Now()
	after := time.Now()
	if now.Before(before) || now.After(after) {
		t.Errorf("Now = %v, not within [%v, %v]", now, before, after)
	}

	t.Run("timer fires", func(t *testing.T) {
		t.Parallel()
		tm := c.NewTimer(time.Millisecond)
		recvGuard(t, tm.C(), "a 1ms real timer")
		if tm.Stop() {
			t.Error("Stop after firing reported active")
		}
	})
	t.Run("timer stop", func(t *testing.T) {
		t.Parallel()
		tm := c.NewTimer(time.Hour)
		if !tm.Stop() {
			t.Error("Stop of a pending timer reported inactive")
		}
		if tm.Stop() {
			t.Error("second Stop reported active")
		}
	})
	t.Run("timer reset", func(t *testing.T) {
		t.Parallel()
		tm := c.NewTimer(time.Hour)
		tm.Reset(time.Millisecond)
		recvGuard(t, tm.C(), "a real timer reset to 1ms")
	})
	t.Run("ticker", func(t *testing.T) {
		t.Parallel()
		tk := c.NewTicker(time.Millisecond)
		defer tk.Stop()
		a := recvGuard(t, tk.C(), "a real tick")
		b := recvGuard(t, tk.C(), "a second real tick")
		if !b.After(a) {
			t.Errorf("ticks not increasing: %v then %v", a, b)
		}
	})
}
