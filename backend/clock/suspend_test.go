package clock_test

import (
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
)

var (
	_ clock.Monotonic = clock.Real{}
	_ clock.Monotonic = (*clock.Fake)(nil)
)

// TestFakeSuspend: a suspend moves the wall clock but not running time, so
// timers keep their remaining time and Jumped sees exactly the sleep.
func TestFakeSuspend(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(start)
	tm := fc.NewTimer(15 * time.Second)
	tk := fc.NewTicker(10 * time.Second)
	defer tk.Stop()
	fc.Advance(5 * time.Second)
	before := fc.Now()
	fc.Suspend(time.Hour)
	after := fc.Now()
	if got := after.Sub(before); got != time.Hour {
		t.Fatalf("wall clock moved %v across a 1h suspend", got)
	}
	if _, ok := recvNow(tm.C()); ok {
		t.Fatal("a timer fired during a suspend")
	}
	if _, ok := recvNow(tk.C()); ok {
		t.Fatal("a ticker fired during a suspend")
	}
	if got := clock.Jumped(fc, before, after); got != time.Hour {
		t.Fatalf("Jumped across the suspend = %v, want 1h", got)
	}
	// The ticker still had 5 s to run, the timer 10 s.
	fc.Advance(5*time.Second - 1)
	if _, ok := recvNow(tk.C()); ok {
		t.Fatal("the ticker fired before its remaining running time")
	}
	fc.Advance(1)
	if _, ok := recvNow(tk.C()); !ok {
		t.Fatal("the ticker did not fire after its remaining running time")
	}
	fc.Advance(5 * time.Second)
	if _, ok := recvNow(tm.C()); !ok {
		t.Fatal("the timer did not fire after its remaining running time")
	}
	end := fc.Now()
	tests := []struct {
		name     string
		from, to time.Time
		want     time.Duration
	}{
		{"before the suspend", start, before, 0},
		{"after the suspend", after, end, 0},
		{"across it", start, end, time.Hour},
		{"same reading", before, before, 0},
	}
	for _, tc := range tests {
		if got := clock.Jumped(fc, tc.from, tc.to); got != tc.want {
			t.Errorf("%s: Jumped = %v, want %v", tc.name, got, tc.want)
		}
		if got, want := fc.Running(tc.from, tc.to), tc.to.Sub(tc.from)-tc.want; got != want {
			t.Errorf("%s: Running = %v, want %v", tc.name, got, want)
		}
	}
}

func TestFakeSuspendNonPositivePanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("Suspend(0) did not panic")
		}
	}()
	clock.NewFake(start).Suspend(0)
}

// TestFakeFired counts every firing, dropped ticks included: each is a
// wake-up of whoever waits on the channel.
func TestFakeFired(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(start)
	tk := fc.NewTicker(time.Second)
	defer tk.Stop()
	tm := fc.NewTimer(3 * time.Second)
	defer tm.Stop()
	if got := fc.Fired(); got != 0 {
		t.Fatalf("Fired = %d before any Advance", got)
	}
	fc.Advance(4 * time.Second)
	if got := fc.Fired(); got != 5 {
		t.Fatalf("Fired = %d after 4 ticks and one timer, want 5", got)
	}
}

// TestRealJumped: two readings of the real clock in a row show no jump;
// readings without a monotonic part (a clock without Monotonic) never do.
func TestRealJumped(t *testing.T) {
	t.Parallel()
	a := clock.Real{}.Now()
	b := clock.Real{}.Now()
	if got := clock.Jumped(clock.Real{}, a, b); got < -time.Second || got > time.Second {
		t.Fatalf("Jumped between two readings = %v", got)
	}
	// A wall-clock step shows as a jump: strip the monotonic reading of the
	// later time and move it by an hour, as settimeofday would.
	stepped := b.Add(time.Hour)
	if got := clock.Jumped(clock.Real{}, a, stepped.Round(0)); got != 0 {
		// Without a monotonic reading on one side Go compares wall times.
		t.Fatalf("Jumped without a monotonic reading = %v, want 0", got)
	}
	if got := clock.Jumped(wallOnly{}, a, stepped); got != 0 {
		t.Fatalf("a clock without Monotonic jumped %v", got)
	}
}

type wallOnly struct{ clock.Real }

func (wallOnly) Running() {} // shadows Real.Running: no longer Monotonic
