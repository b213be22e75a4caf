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
