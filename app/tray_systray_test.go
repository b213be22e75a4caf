package app

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestForwardClicksIgnoresAClosedChannel: fyne.io/systray closes an
// item's click channel when the menu is reset; that is no click. (Read as
// one, every rebuild answered the requests of the old menu again.)
func TestForwardClicksIgnoresAClosedChannel(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	clicked, gen := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() { forwardClicks(clicked, gen, func() { n.Add(1) }); close(done) }()
	clicked <- struct{}{}
	clicked <- struct{}{}
	close(clicked) // the menu was reset
	<-done
	if n.Load() != 2 {
		t.Fatalf("%d actions, want the 2 clicks", n.Load())
	}
	// A rebuild begun wins: gen closed first, then the channel.
	var m atomic.Int32
	clicked, gen = make(chan struct{}), make(chan struct{})
	done = make(chan struct{})
	close(gen)
	close(clicked)
	go func() { forwardClicks(clicked, gen, func() { m.Add(1) }); close(done) }()
	select {
	case <-done:
	case <-time.After(guard):
		t.Fatal("forwardClicks did not end")
	}
	if m.Load() != 0 {
		t.Fatalf("%d actions after the rebuild", m.Load())
	}
}
