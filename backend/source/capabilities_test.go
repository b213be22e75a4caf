package source

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

func TestStopWait(t *testing.T) {
	t.Parallel()
	type got struct {
		res  Stopped
		done bool
		err  error
	}
	tests := []struct {
		name string
		// endedAt is the poll that finds the end (-1: none); act drives
		// the wait.
		endedAt int
		act     func(f *clock.Fake, ended chan wire.Event, cancel context.CancelFunc)
		want    got
	}{
		{"end event", -1, func(_ *clock.Fake, ended chan wire.Event, _ context.CancelFunc) {
			ended <- wire.Event{Kind: "run.cancelled"}
		}, got{Stopped{Outcome: "run.cancelled"}, true, nil}},
		{"poll finds the end", 1, func(f *clock.Fake, _ chan wire.Event, _ context.CancelFunc) {
			f.Advance(time.Second)
		}, got{Stopped{Outcome: "polled"}, true, nil}},
		{"confirm passes", -1, func(f *clock.Fake, _ chan wire.Event, _ context.CancelFunc) {
			f.Advance(10 * time.Second)
		}, got{Stopped{}, false, nil}},
		{"ctx ends", -1, func(_ *clock.Fake, _ chan wire.Event, cancel context.CancelFunc) {
			cancel()
		}, got{Stopped{}, false, context.Canceled}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := clock.NewFake(time.Unix(0, 0))
			ended := make(chan wire.Event, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := StopWait{Ended: ended, Confirm: 10 * time.Second, Poll: time.Second, Clock: f}
			polls := 0
			out := make(chan got, 1)
			go func() {
				res, done, err := w.Wait(ctx, func(ev wire.Event) Stopped { return Stopped{Outcome: ev.Kind} }, func() (Stopped, bool) {
					polls++
					if polls == tt.endedAt {
						return Stopped{Outcome: "polled"}, true
					}
					return Stopped{}, false
				})
				out <- got{res, done, err}
			}()
			f.BlockUntil(2) // the timer and the ticker
			tt.act(f, ended, cancel)
			g := <-out
			if g.res != tt.want.res || g.done != tt.want.done || !errors.Is(g.err, tt.want.err) || (g.err == nil) != (tt.want.err == nil) {
				t.Errorf("Wait = %+v, %v, %v; want %+v, %v, %v", g.res, g.done, g.err, tt.want.res, tt.want.done, tt.want.err)
			}
		})
	}
}
