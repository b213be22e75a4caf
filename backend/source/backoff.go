package source

import "time"

// Backoff computes reconnect delays: exponential with full jitter, so that
// many Herald instances reconnecting to one restarted gateway spread out.
type Backoff struct {
	// Base is the ceiling of the first delay (default 500ms).
	Base time.Duration
	// Cap bounds every delay (default 20s).
	Cap time.Duration
	// StableAfter is how long a connection must last before the attempt
	// counter resets (default 1 minute).
	StableAfter time.Duration
}

// WithDefaults fills the zero fields with their defaults.
func (b Backoff) WithDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = 500 * time.Millisecond
	}
	if b.Cap <= 0 {
		b.Cap = 20 * time.Second
	}
	if b.StableAfter <= 0 {
		b.StableAfter = time.Minute
	}
	return b
}

// Delay returns the delay before retry number attempt (0-based), given a
// uniform random number r in [0,1).
func (b Backoff) Delay(attempt int, r float64) time.Duration {
	b = b.WithDefaults()
	ceil := b.Base
	for i := 0; i < attempt && ceil < b.Cap; i++ {
		if ceil > b.Cap/2 {
			ceil = b.Cap // doubling would pass the cap (or overflow)
			break
		}
		ceil *= 2
	}
	if ceil > b.Cap {
		ceil = b.Cap
	}
	if !(r >= 0) { // also catches NaN
		r = 0
	}
	if r >= 1 {
		r = 0.999999
	}
	return time.Duration(float64(ceil) * r)
}
