package gateway

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/hermestest"
)

// countingClock counts every timer and ticker firing that reaches the
// client: each is one wake-up of an otherwise idle process.
type countingClock struct {
	*clock.Fake
	fires atomic.Int64
	fired chan struct{} // one send per firing
}

type countingTicker struct {
	clock.Ticker
	c    chan time.Time
	done chan struct{}
}

func (t *countingTicker) C() <-chan time.Time { return t.c }
func (t *countingTicker) Stop()               { t.Ticker.Stop(); close(t.done) }

func (k *countingClock) NewTicker(d time.Duration) clock.Ticker {
	inner := k.Fake.NewTicker(d)
	t := &countingTicker{Ticker: inner, c: make(chan time.Time, 1), done: make(chan struct{})}
	go func() {
		for {
			select {
			case v := <-inner.C():
				k.fires.Add(1)
				select {
				case t.c <- v:
				case <-t.done:
					return
				}
				k.fired <- struct{}{}
			case <-t.done:
				return
			}
		}
	}()
	return t
}

// TestIdleWakeupsPerMinute: one connected, idle gateway wakes Herald only
// for its heartbeat: the 5 s liveness check and the 15 s ping, nothing else.
func TestIdleWakeupsPerMinute(t *testing.T) {
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	k := &countingClock{Fake: clock.NewFake(time.Unix(0, 0)), fired: make(chan struct{}, 64)}
	h := start(t, srv, func(c *Config) { c.Clock = k })
	h.clk = k.Fake
	h.rec.waitState(t, StateConnected)
	k.BlockUntil(1)
	base := k.fires.Load()
	pings := count(srv.Methods(), "gateway.ping")
	for i := 0; i < 12; i++ { // one minute in 5 s steps, each step fully handled
		k.Advance(watchInterval)
		select {
		case <-k.fired:
		case <-time.After(guard):
			t.Fatal("the liveness tick never fired")
		}
		if (i+1)%3 == 0 { // every 15 s a ping goes out: wait for its reply
			h.waitHeard(t)
		}
	}
	fires := k.fires.Load() - base
	pinged := count(srv.Methods(), "gateway.ping") - pings
	t.Logf("idle wake-ups per minute: %d liveness checks + %d pings", fires, pinged)
	if fires != 12 || pinged != 4 {
		t.Fatalf("idle minute: %d timer wake-ups and %d pings, want 12 and 4", fires, pinged)
	}
}
