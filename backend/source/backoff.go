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

	// Outages (see OutageDelay). Fast is the ceiling of the delays while
	// an outage is young (default 800ms): they are drawn from
	// [Fast/2, Fast), so a gateway that restarts is redialed within Fast
	// of accepting again. FastFor is how long an outage is young (default
	// 30s); after it the delays grow with the outage, up to Cap, so a
	// gateway that stays down is not hammered. Settled is how long a
	// connection must last to end an outage (default 10s): one that a
	// gateway accepts and drops at once does not.
	Fast, FastFor, Settled time.Duration
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
	if b.Fast <= 0 {
		b.Fast = 800 * time.Millisecond
	}
	if b.FastFor <= 0 {
		b.FastFor = 30 * time.Second
	}
	if b.Settled <= 0 {
		b.Settled = 10 * time.Second
	}
	return b
}

// OutageDelay is the delay before retry number attempt (0-based) of an
// outage that began down ago, given a uniform random r in [0,1). The
// first retry comes within Base; while the outage is younger than
// FastFor, every retry within Fast (a restart is over in seconds, and
// the user waits for it); then the ceiling is a quarter of the outage,
// between Fast and Cap, with the delay in its upper half: a gateway down
// for a minute is tried every 8-15 s, one down longer every 10-20 s.
func (b Backoff) OutageDelay(attempt int, down time.Duration, r float64) time.Duration {
	b = b.WithDefaults()
	r = clamp01(r)
	if attempt == 0 {
		return time.Duration(float64(b.Base) * r)
	}
	ceil := b.Fast
	if down >= b.FastFor {
		ceil = min(max(down/4, b.Fast), b.Cap)
	}
	return ceil/2 + time.Duration(float64(ceil/2)*r)
}

func clamp01(r float64) float64 {
	if !(r >= 0) { // also catches NaN
		return 0
	}
	if r >= 1 {
		return 0.999999
	}
	return r
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
	return time.Duration(float64(ceil) * clamp01(r))
}
