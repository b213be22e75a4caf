package service

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/wire"
)

// dispatch feeds s's notifications that mask selects to fn, in order,
// from one goroutine, until s closes (tests' stand-in for a surface).
func dispatch(s *Service, mask Watch, fn func(Notify)) {
	sub := s.Subscribe(mask, 0)
	go func() {
		for {
			n, err := sub.Next(context.Background())
			if err != nil {
				return
			}
			fn(n)
		}
	}()
}

// onChange pokes fn after anything visible changed.
func onChange(s *Service, fn func()) { dispatch(s, WatchChanges, func(Notify) { fn() }) }

func TestBusOrderMaskAndMergedChanges(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	defer s.Close()
	all := s.Subscribe(WatchAll, 0)
	events := s.Subscribe(WatchEvents, 0)
	s.bus.publish(WatchChanges, Notify{Changed: true})
	s.bus.publish(WatchChanges, Notify{Changed: true}) // merged with the unread one
	s.bus.publish(WatchEvents, Notify{Event: &wire.Event{Kind: "a"}})
	s.bus.publish(WatchChanges, Notify{Changed: true})
	s.bus.publish(WatchApprovals, Notify{Approval: &approval.Change{Kind: approval.ChangeArrived}})
	var got []string
	for range 4 {
		n, err := all.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case n.Changed:
			got = append(got, "changed")
		case n.Event != nil:
			got = append(got, "event "+n.Event.Kind)
		case n.Approval != nil:
			got = append(got, "approval")
		}
	}
	want := []string{"changed", "event a", "changed", "approval"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if n, err := events.Next(context.Background()); err != nil || n.Event == nil || n.Event.Kind != "a" {
		t.Fatalf("events-only subscriber got %+v, %v", n, err)
	}
}

func TestBusSlowSubscriberLagsNeverBlocks(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	defer s.Close()
	slow := s.Subscribe(WatchEvents, 3)
	for i := range 10 { // never read while publishing: must not block
		s.bus.publish(WatchEvents, Notify{Event: &wire.Event{Seq: uint64(i)}})
	}
	n, err := slow.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n.Lagged != 7 || n.Event.Seq != 7 {
		t.Fatalf("first read: seq %d lagged %d, want the 8th event with 7 lost", n.Event.Seq, n.Lagged)
	}
	for want := uint64(8); want < 10; want++ {
		if n, _ := slow.Next(context.Background()); n.Event.Seq != want || n.Lagged != 0 {
			t.Fatalf("read seq %d lagged %d, want %d and 0", n.Event.Seq, n.Lagged, want)
		}
	}
}

func TestBusCloseDrainsThenEnds(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	sub := s.Subscribe(WatchProblems, 0)
	s.problem("gw", errors.New("boom"))
	s.Close()
	if n, err := sub.Next(context.Background()); err != nil || n.Problem == nil || n.Problem.Source != "gw" {
		t.Fatalf("after Close: %+v, %v; want the queued problem first", n, err)
	}
	if _, err := sub.Next(context.Background()); !errors.Is(err, ErrUnsubscribed) {
		t.Fatalf("drained: %v, want ErrUnsubscribed", err)
	}
	if _, err := s.Subscribe(WatchAll, 0).Next(context.Background()); !errors.Is(err, ErrUnsubscribed) {
		t.Fatalf("subscribing to a closed service: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	s2 := New(Config{})
	defer s2.Close()
	if _, err := s2.Subscribe(WatchAll, 0).Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("nothing published: %v, want the context's end", err)
	}
}

// BenchmarkPublishToSlowSubscriber is what one notification costs the
// inbox's goroutine when a subscriber never reads (it only lags).
func BenchmarkPublishToSlowSubscriber(b *testing.B) {
	s := New(Config{})
	defer s.Close()
	s.Subscribe(WatchAll, 0)
	ev := &wire.Event{Kind: wire.MessageDelta}
	for b.Loop() {
		s.bus.publish(WatchEvents, Notify{Event: ev})
	}
}

func TestBusBootBacklogOnlyBeforeTheFirstSource(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	defer s.Close()
	s.bus.publish(WatchApprovals, Notify{Approval: &approval.Change{Kind: approval.ChangeArrived}}) // as a restore does
	early := s.Subscribe(WatchApprovals, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if n, err := early.Next(ctx); err != nil || n.Approval == nil {
		t.Fatalf("early subscriber: %+v, %v; want the restored approval", n, err)
	}
	s.bus.start()
	late := s.Subscribe(WatchApprovals, 0)
	short, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	if n, err := late.Next(short); err == nil {
		t.Fatalf("late subscriber got %+v from before it subscribed", n)
	}
}
