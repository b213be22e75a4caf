package source

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// backoffTopR is the largest r a uniform [0,1) source can produce.
var backoffTopR = math.Nextafter(1, 0)

// backoffRs is a spread of valid random inputs, including both ends of [0,1).
func backoffRs() []float64 {
	out := []float64{0, math.SmallestNonzeroFloat64, 1e-9, 0.999999, backoffTopR}
	for i := 1; i < 1000; i++ {
		out = append(out, float64(i)/1000)
	}
	return out
}

func TestBackoffDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Backoff
		want Backoff
	}{
		{"zero value", Backoff{}, Backoff{Base: 500 * time.Millisecond, Cap: 20 * time.Second, StableAfter: time.Minute, Fast: 800 * time.Millisecond, FastFor: 30 * time.Second, Settled: 10 * time.Second}},
		{"negative values", Backoff{Base: -1, Cap: -time.Second, StableAfter: -time.Hour}, Backoff{Base: 500 * time.Millisecond, Cap: 20 * time.Second, StableAfter: time.Minute, Fast: 800 * time.Millisecond, FastFor: 30 * time.Second, Settled: 10 * time.Second}},
		{"custom kept", Backoff{Base: time.Second, Cap: time.Minute, StableAfter: 5 * time.Second}, Backoff{Base: time.Second, Cap: time.Minute, StableAfter: 5 * time.Second, Fast: 800 * time.Millisecond, FastFor: 30 * time.Second, Settled: 10 * time.Second}},
		{"partial", Backoff{Cap: 3 * time.Second}, Backoff{Base: 500 * time.Millisecond, Cap: 3 * time.Second, StableAfter: time.Minute, Fast: 800 * time.Millisecond, FastFor: 30 * time.Second, Settled: 10 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.in.WithDefaults(); got != tt.want {
				t.Errorf("WithDefaults() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBackoffFirstDelayBelowBase(t *testing.T) {
	t.Parallel()
	var b Backoff
	for _, r := range backoffRs() {
		d := b.Delay(0, r)
		if d < 0 || d >= 500*time.Millisecond {
			t.Errorf("Delay(0, %v) = %v, want in [0, 500ms)", r, d)
		}
	}
}

// backoffCeiling is the expected upper bound of a delay: base doubled per attempt,
// capped.
func backoffCeiling(base, limit time.Duration, attempt int) time.Duration {
	c := base
	for i := 0; i < attempt && c < limit; i++ {
		c *= 2
	}
	return min(c, limit)
}

func TestBackoffCeilingDoublesToCap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attempt int
		ceil    time.Duration
	}{
		{0, 500 * time.Millisecond},
		{1, time.Second},
		{2, 2 * time.Second},
		{3, 4 * time.Second},
		{4, 8 * time.Second},
		{5, 16 * time.Second},
		{6, 20 * time.Second}, // 32s capped
		{7, 20 * time.Second},
		{50, 20 * time.Second},
	}
	var b Backoff
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.attempt), func(t *testing.T) {
			t.Parallel()
			// r=0.5 lands exactly on half the ceiling.
			if got := b.Delay(tt.attempt, 0.5); got != tt.ceil/2 {
				t.Errorf("Delay(%d, 0.5) = %v, want %v", tt.attempt, got, tt.ceil/2)
			}
			// The largest r approaches the ceiling without reaching it.
			got := b.Delay(tt.attempt, backoffTopR)
			if got >= tt.ceil || got < tt.ceil-tt.ceil/1000 {
				t.Errorf("Delay(%d, 1-ε) = %v, want just below %v", tt.attempt, got, tt.ceil)
			}
		})
	}
}

func TestBackoffNeverExceedsCap(t *testing.T) {
	t.Parallel()
	configs := []Backoff{
		{},
		{Base: time.Nanosecond, Cap: time.Hour},
		{Base: time.Hour, Cap: 24 * time.Hour},
		{Base: 300 * time.Millisecond, Cap: time.Second},
		{Base: time.Minute, Cap: time.Second},
	}
	for _, b := range configs {
		t.Run(fmt.Sprintf("%v-%v", b.Base, b.Cap), func(t *testing.T) {
			t.Parallel()
			limit := b.WithDefaults().Cap
			for _, r := range []float64{0, 0.25, 0.5, 0.999999, backoffTopR} {
				prev := time.Duration(0)
				for attempt := 0; attempt <= 1000; attempt++ {
					d := b.Delay(attempt, r)
					if d < 0 || d > limit {
						t.Fatalf("Delay(%d, %v) = %v, want in [0, %v]", attempt, r, d, limit)
					}
					if d < prev {
						t.Fatalf("Delay(%d, %v) = %v shrank from %v", attempt, r, d, prev)
					}
					prev = d
				}
			}
		})
	}
}

func TestBackoffZeroRandomIsZero(t *testing.T) {
	t.Parallel()
	for _, b := range []Backoff{{}, {Base: time.Second, Cap: time.Minute}} {
		for _, attempt := range []int{0, 1, 5, 100, 1000} {
			if d := b.Delay(attempt, 0); d != 0 {
				t.Errorf("%+v.Delay(%d, 0) = %v, want 0 (full jitter)", b, attempt, d)
			}
		}
	}
}

func TestBackoffCustomBaseAndCap(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		name  string
		b     Backoff
		ceils []time.Duration // per attempt from 0
	}{
		{"100ms to 1s", Backoff{Base: 100 * ms, Cap: time.Second}, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}},
		{"cap not a power of two multiple", Backoff{Base: 300 * ms, Cap: time.Second}, []time.Duration{300 * ms, 600 * ms, time.Second, time.Second}},
		{"base above cap", Backoff{Base: 2 * time.Second, Cap: time.Second}, []time.Duration{time.Second, time.Second}},
		{"base equals cap", Backoff{Base: time.Second, Cap: time.Second}, []time.Duration{time.Second, time.Second}},
		{"custom base default cap", Backoff{Base: 4 * time.Second}, []time.Duration{4 * time.Second, 8 * time.Second, 16 * time.Second, 20 * time.Second, 20 * time.Second}},
		{"default base custom cap", Backoff{Cap: 5 * time.Second}, []time.Duration{500 * ms, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second}},
		{"one nanosecond base", Backoff{Base: 1, Cap: 16}, []time.Duration{1, 2, 4, 8, 16, 16}},
		{"long cap", Backoff{Base: time.Second, Cap: time.Hour}, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for attempt, ceil := range tt.ceils {
				if got := tt.b.Delay(attempt, 0.5); got != ceil/2 {
					t.Errorf("Delay(%d, 0.5) = %v, want %v (ceiling %v)", attempt, got, ceil/2, ceil)
				}
				if got := tt.b.Delay(attempt, backoffTopR); got >= ceil && ceil > 1 {
					t.Errorf("Delay(%d, 1-ε) = %v, want < %v", attempt, got, ceil)
				}
			}
		})
	}
}

func TestBackoffClampsRandom(t *testing.T) {
	t.Parallel()
	var b Backoff
	for _, attempt := range []int{0, 3, 10} {
		ceil := backoffCeiling(500*time.Millisecond, 20*time.Second, attempt)
		for _, r := range []float64{-1e-12, -0.5, -1, -1e300, math.Inf(-1)} {
			if d := b.Delay(attempt, r); d != 0 {
				t.Errorf("Delay(%d, %v) = %v, want 0 (clamped to 0)", attempt, r, d)
			}
		}
		top := b.Delay(attempt, backoffTopR)
		for _, r := range []float64{1, 1.5, 2, 1e300, math.Inf(1)} {
			d := b.Delay(attempt, r)
			if d < 0 || d >= ceil {
				t.Errorf("Delay(%d, %v) = %v, want in [0, %v)", attempt, r, d, ceil)
			}
			if d < top-ceil/1000 {
				t.Errorf("Delay(%d, %v) = %v, want near the top of the range (%v)", attempt, r, d, top)
			}
		}
	}
}

// A negative attempt (a caller's bug) behaves like the first attempt rather
// than producing a negative or zero ceiling.
func TestBackoffNegativeAttempt(t *testing.T) {
	t.Parallel()
	var b Backoff
	for _, attempt := range []int{-1, -1000, math.MinInt} {
		if got, want := b.Delay(attempt, 0.5), b.Delay(0, 0.5); got != want {
			t.Errorf("Delay(%d, 0.5) = %v, want %v", attempt, got, want)
		}
	}
}
