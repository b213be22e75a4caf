package service

import (
	"context"
	"errors"
	"sync"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/wire"
)

// Every surface (the window, tray, notifications, `herald watch`) learns
// what happened from one typed stream: Subscribe with a mask of what it
// wants, then Next in a loop. Each subscriber has a bounded queue of its
// own; publishing never blocks, so a slow surface can never stall the
// inbox or a gateway's reader. When a queue is full its oldest entry is
// dropped and the next Notify says how many were lost (Lagged): the
// subscriber then re-reads View, which is always whole. This is
// tailscale's ipn.Notify with a watch mask.

// Watch is a mask of what a subscriber wants.
type Watch uint

const (
	// WatchEvents: every event a source delivered, after the inbox and
	// the live view took it in.
	WatchEvents Watch = 1 << iota
	// WatchApprovals: every inbox change, in order.
	WatchApprovals
	// WatchNotices: sessions found, offered, followed, taken elsewhere.
	WatchNotices
	// WatchProblems: failures no call returns.
	WatchProblems
	// WatchChanges: something visible changed; re-read View. Consecutive
	// changes not yet read are merged into one.
	WatchChanges

	WatchAll = WatchEvents | WatchApprovals | WatchNotices | WatchProblems | WatchChanges
)

// DefaultQueue is a subscriber's queue length unless it asks otherwise.
const DefaultQueue = 4096

// Notify is one thing that happened. Exactly one of Event, Approval,
// Notice, Problem and Changed is set.
type Notify struct {
	Event    *wire.Event
	Approval *approval.Change
	Notice   *SessionNotice
	Problem  *Problem
	Changed  bool
	// Lagged counts the notifications this subscriber lost just before
	// this one because its queue was full: its picture is incomplete and
	// it should re-read View.
	Lagged int
}

// Problem is a failure no call returns, such as following a session once
// its gateway connected.
type Problem struct {
	Source string
	Err    error
}

// ErrUnsubscribed is returned by Next once the subscription was closed
// (or the service was) and its queue is drained.
var ErrUnsubscribed = errors.New("the subscription to Herald's events has ended")

// Subscription is one subscriber's bounded queue.
type Subscription struct {
	bus  *bus
	mask Watch
	max  int

	mu     sync.Mutex
	q      []Notify
	closed bool
	ready  chan struct{} // signalled when q becomes non-empty or closed
}

type bus struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
	shut bool
	// boot keeps what was published before the first source started
	// (approvals restored from the audit log, in New), for subscribers
	// that subscribe before then, as every surface does.
	boot    []booted
	started bool
}

type booted struct {
	w Watch
	n Notify
}

// Subscribe starts a subscription to what mask selects, with a queue of
// size entries (<= 0: DefaultQueue). A subscription made before the first
// source starts also gets what was published since New (the approvals
// restored from the audit log). Close it when done; the service's Close
// ends it too.
func (s *Service) Subscribe(mask Watch, size int) *Subscription {
	if size <= 0 {
		size = DefaultQueue
	}
	sub := &Subscription{bus: &s.bus, mask: mask, max: size, ready: make(chan struct{}, 1)}
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	if s.bus.shut {
		sub.closed = true
		return sub
	}
	if s.bus.subs == nil {
		s.bus.subs = map[*Subscription]struct{}{}
	}
	s.bus.subs[sub] = struct{}{}
	for _, b := range s.bus.boot {
		sub.push(b.w, b.n)
	}
	return sub
}

// Next returns the next notification, waiting for one until ctx ends or
// the subscription is closed and drained (ErrUnsubscribed).
func (sub *Subscription) Next(ctx context.Context) (Notify, error) {
	for {
		sub.mu.Lock()
		if len(sub.q) > 0 {
			n := sub.q[0]
			sub.q[0] = Notify{}
			sub.q = sub.q[1:]
			sub.mu.Unlock()
			return n, nil
		}
		closed := sub.closed
		sub.mu.Unlock()
		if closed {
			return Notify{}, ErrUnsubscribed
		}
		select {
		case <-sub.ready:
		case <-ctx.Done():
			return Notify{}, ctx.Err()
		}
	}
}

// Close ends the subscription; Next drains what is queued first.
func (sub *Subscription) Close() {
	sub.bus.mu.Lock()
	delete(sub.bus.subs, sub)
	sub.bus.mu.Unlock()
	sub.close()
}

func (sub *Subscription) close() {
	sub.mu.Lock()
	sub.closed = true
	sub.mu.Unlock()
	sub.signal()
}

func (sub *Subscription) signal() {
	select {
	case sub.ready <- struct{}{}:
	default:
	}
}

// push queues n without blocking: a change right after a change not yet
// read is merged; a full queue drops its oldest entry and counts it.
func (sub *Subscription) push(w Watch, n Notify) {
	if sub.mask&w == 0 {
		return
	}
	sub.mu.Lock()
	if sub.closed {
		sub.mu.Unlock()
		return
	}
	if n.Changed && len(sub.q) > 0 && sub.q[len(sub.q)-1].Changed {
		sub.mu.Unlock()
		return
	}
	if len(sub.q) >= sub.max {
		lost := 1 + sub.q[0].Lagged
		sub.q[0] = Notify{}
		sub.q = sub.q[1:]
		if len(sub.q) > 0 {
			sub.q[0].Lagged += lost // the subscriber learns it at its next read
		} else {
			n.Lagged += lost
		}
	}
	sub.q = append(sub.q, n)
	sub.mu.Unlock()
	sub.signal()
}

// publish hands n to every subscriber that watches w.
func (b *bus) publish(w Watch, n Notify) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.started && len(b.boot) < DefaultQueue {
		b.boot = append(b.boot, booted{w, n})
	}
	for sub := range b.subs {
		sub.push(w, n)
	}
}

// start drops the boot backlog: from the first source on, a subscriber
// sees only what happens after it subscribed.
func (b *bus) start() {
	b.mu.Lock()
	b.started, b.boot = true, nil
	b.mu.Unlock()
}

// shutdown ends every subscription (the service closed).
func (b *bus) shutdown() {
	b.mu.Lock()
	subs := b.subs
	b.subs, b.shut = nil, true
	b.mu.Unlock()
	for sub := range subs {
		sub.close()
	}
}
