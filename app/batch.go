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
// once more after gap for any pokes that came while it ran: a change
// reaches the tray without waiting for a batch, and a burst of events
// costs at most one run per gap.
type pump struct {
	clk clock.Clock
	gap time.Duration
	fn  func()

	mu      sync.Mutex
	busy    bool
	again   bool
	stopped bool
}

func newPump(clk clock.Clock, gap time.Duration, fn func()) *pump {
	return &pump{clk: clk, gap: gap, fn: fn}
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

func (p *pump) run() {
	for {
		p.fn()
		p.mu.Lock()
		if !p.again || p.stopped {
			p.busy, p.again = false, false
			p.mu.Unlock()
			return
		}
		p.again = false
		p.mu.Unlock()
		<-p.clk.NewTimer(p.gap).C()
	}
}

// stop ends running fn (a run under way finishes).
func (p *pump) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
}
