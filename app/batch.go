package app

import (
	"sync"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
)

// Batcher coalesces change signals into at most one flush per interval, so
// a burst of events becomes one UI push instead of hundreds.
type Batcher struct {
	clk      clock.Clock
	interval time.Duration
	flush    func()

	mu      sync.Mutex
	pending bool
	stopped bool
}

// NewBatcher calls flush at most once per interval after Poke.
func NewBatcher(clk clock.Clock, interval time.Duration, flush func()) *Batcher {
	return &Batcher{clk: clk, interval: interval, flush: flush}
}

// Poke says something changed. The first poke after a flush arms a timer;
// pokes until it fires are folded into that one flush.
func (b *Batcher) Poke() {
	b.mu.Lock()
	if b.pending || b.stopped {
		b.mu.Unlock()
		return
	}
	b.pending = true
	b.mu.Unlock()
	t := b.clk.NewTimer(b.interval)
	go func() {
		<-t.C()
		b.mu.Lock()
		b.pending = false
		stopped := b.stopped
		b.mu.Unlock()
		if !stopped {
			b.flush()
		}
	}()
}

// Stop ends flushing (an armed timer then flushes nothing).
func (b *Batcher) Stop() {
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
}

// pump runs fn at once on a poke (the leading edge, unlike Batcher), and
// once more for any pokes that came while it ran. Runs are rate-limited
// by a token bucket: up to burst at once, then one per gap: a change
// reaches the tray without waiting for a batch, and a stream of events
// (a reply being written) costs at most one run per gap.
type pump struct {
	clk   clock.Clock
	gap   time.Duration
	burst float64
	fn    func()

	mu      sync.Mutex
	busy    bool
	again   bool
	stopped bool
	tokens  float64
	filled  time.Time
}

// pumpBurst is how many runs a pump makes at once before its gap applies.
const pumpBurst = 4

func newPump(clk clock.Clock, gap time.Duration, fn func()) *pump {
	return &pump{clk: clk, gap: gap, burst: pumpBurst, fn: fn, tokens: pumpBurst, filled: clk.Now()}
}

// poke says something changed.
func (p *pump) poke() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	if p.busy {
		p.again = true
		return
	}
	p.busy = true
	go p.run()
}

// takeLocked takes a token, or says how long until one is there.
func (p *pump) takeLocked() time.Duration {
	now := p.clk.Now()
	p.tokens = min(p.burst, p.tokens+float64(now.Sub(p.filled))/float64(p.gap))
	p.filled = now
	if p.tokens >= 1 {
		p.tokens--
		return 0
	}
	return time.Duration((1 - p.tokens) * float64(p.gap))
}

func (p *pump) run() {
	for {
		p.mu.Lock()
		wait := p.takeLocked()
		if wait == 0 {
			p.again = false // this run covers every poke so far
		}
		p.mu.Unlock()
		if wait > 0 {
			<-p.clk.NewTimer(wait).C()
			continue
		}
		p.fn()
		p.mu.Lock()
		if !p.again || p.stopped {
			p.busy, p.again = false, false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}

// stop ends running fn (a run under way finishes).
func (p *pump) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
}
