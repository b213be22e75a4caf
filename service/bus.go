package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Every surface (the window, tray, notifications, `herald watch`) learns
// what happened from one typed stream: Subscribe with a mask of what it
// wants, then Next in a loop. Each subscriber has a bounded queue of its
// own; publishing never blocks, so a slow surface can never stall the
// inbox or a gateway's reader. When a queue is full its oldest entry is
// dropped and the next Notify says how many were lost (Lagged); every
// Notify is numbered within its subscription (Seq), so a loss also shows
// as a gap. The subscriber then re-reads View, which is always whole.
// With WatchInitial the first Notify is that View, so a surface never
// stitches a separate read to a position in the stream. The same stream
// is served over the control socket (op watch, see watch.go): `herald
// watch` beside a running Herald and the window process read it there.
// This is tailscale's ipn.Notify with a watch mask and NotifyInitial*,
// and syncthing's numbered events.

// Watch is a mask of what a subscriber wants. Its bits cross the control
// socket (ControlRequest.Watch): their values never change.
type Watch uint

const (
	// WatchEvents: every event a source delivered, after the inbox and
	// the live view took it in.
	WatchEvents Watch = 1 << 0
	// WatchApprovals: every inbox change, in order.
	WatchApprovals Watch = 1 << 1
	// WatchNotices: sessions found, offered, followed, taken elsewhere.
	WatchNotices Watch = 1 << 2
	// WatchProblems: failures no call returns.
	WatchProblems Watch = 1 << 3
	// WatchChanges: something visible changed; re-read View. Consecutive
	// changes not yet read are merged into one.
	WatchChanges Watch = 1 << 4
	// WatchStatus: a source's status changed (connected, retrying,
	// refused).
	WatchStatus Watch = 1 << 5
	// WatchWindow: the desktop app's events for its window
	// (PublishWindow), which the window process follows.
	WatchWindow Watch = 1 << 6
	// WatchInitial is an option, not a kind: the subscription's first
	// Notify is View (Notify.View), taken once the subscription is
	// registered, so whatever changes after it is in the stream. It
	// replaces the backlog kept for subscribers that come before the
	// first source (see Subscribe).
	WatchInitial Watch = 1 << 7

	// WatchAll is every kind a surface shows (not WatchWindow, the
	// window process's own, nor the WatchInitial option).
	WatchAll = WatchEvents | WatchApprovals | WatchNotices | WatchProblems | WatchChanges | WatchStatus

	watchKnown = WatchAll | WatchWindow | WatchInitial
)

// DefaultQueue is a subscriber's queue length unless it asks otherwise.
const DefaultQueue = 4096

// Notify is one thing that happened. Exactly one of View, Event,
// Approval, Notice, Problem, Status, Window and Changed is set.
type Notify struct {
	// Seq numbers the notifications of one subscription: 1, 2, 3… (the
	// View of WatchInitial is 1). A number skipped is a notification
	// lost (Lagged says how many); merged changes take no number.
	Seq uint64
	// View is the first Notify of a WatchInitial subscription.
	View  *View
	Event *wire.Event
	// Name is the one name of Event's session (SessionNames), given to a
	// watcher in another process, which has no service to ask (op watch
	// fills it; in the process, SessionName says it).
	Name     string
	Approval *approval.Change
	Notice   *SessionNotice
	Problem  *Problem
	Status   *source.Status
	Window   *WindowEvent
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
	seq    uint64 // the Seq of the latest notification queued
	closed bool
	ready  chan struct{} // signalled when q becomes non-empty or closed
}

type bus struct {
	now func() time.Time // the service's clock

	mu   sync.Mutex
	subs map[*Subscription]struct{}
	shut bool
	// boot keeps what was published before the first source started
	// (approvals restored from the audit log, in New), for subscribers
	// that subscribe before then without WatchInitial.
	boot    []booted
	started bool
	// held keeps window events published while no window watched (see
	// WindowEvent.Hold), for the next one.
	held []booted
	// moved is closed (and replaced) when a subscription comes or goes.
	moved chan struct{}
}

type booted struct {
	w  Watch
	n  Notify
	at time.Time
}

// Window events that wait for a window (WindowEvent.Hold): at most
// maxHeld, for at most WindowHoldAge.
const (
	maxHeld = 16
	// WindowHoldAge: a window that opens later than this after the
	// click that asked for it does not act on it (the window failed to
	// start).
	WindowHoldAge = 30 * time.Second
)

// Subscribe starts a subscription to what mask selects, with a queue of
// size entries (<= 0: DefaultQueue). Close it when done; the service's
// Close ends it too.
//
// With WatchInitial its first Notify is View. The View is taken just
// after the subscription is registered, not under the bus's lock: the
// inbox publishes from the goroutine that reads it (a snapshot may expire
// a request and publish that), so taking it under the lock would
// deadlock. Nothing is lost that way: a change published before the
// registration was made before the View; one published after is queued,
// behind the View. A change made just before the View and published just
// after it is in both, so a surface must take an arrival it already shows
// as the same request (by key).
//
// Without WatchInitial, a subscription made before the first source
// starts also gets what was published since New (the approvals restored
// from the audit log). A subscription to WatchWindow gets the window
// events held for a window (WindowEvent.Hold) for at most WindowHoldAge.
func (s *Service) Subscribe(mask Watch, size int) *Subscription {
	if size <= 0 {
		size = DefaultQueue
	}
	sub := &Subscription{bus: &s.bus, mask: mask, max: size, ready: make(chan struct{}, 1)}
	initial := mask&WatchInitial != 0
	s.bus.mu.Lock()
	if s.bus.shut {
		s.bus.mu.Unlock()
		sub.closed = true
		return sub
	}
	if s.bus.subs == nil {
		s.bus.subs = map[*Subscription]struct{}{}
	}
	s.bus.subs[sub] = struct{}{}
	s.bus.movedLocked()
	if initial {
		sub.seq = 1 // the View's
	} else {
		for _, b := range s.bus.boot {
			sub.push(b.w, b.n)
		}
	}
	if mask&WatchWindow != 0 {
		now := s.bus.now()
		for _, h := range s.bus.held {
			if now.Sub(h.at) <= WindowHoldAge {
				sub.push(h.w, h.n)
			}
		}
		s.bus.held = nil
	}
	s.bus.mu.Unlock()
	if initial {
		v := s.View()
		sub.mu.Lock()
		sub.q = append([]Notify{{Seq: 1, View: &v}}, sub.q...)
		sub.mu.Unlock()
		sub.signal()
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
	if _, ok := sub.bus.subs[sub]; ok {
		delete(sub.bus.subs, sub)
		sub.bus.movedLocked()
	}
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

// push queues n without blocking, if the subscriber watches w, and
// reports whether it does. A change right after a change not yet read is
// merged, and so is a window event that only matters as the latest
// (WindowEvent.Latest) right after one of its name: neither takes a
// number. A full queue drops its oldest entry (never the View) and counts
// it.
func (sub *Subscription) push(w Watch, n Notify) bool {
	if sub.mask&w == 0 {
		return false
	}
	sub.mu.Lock()
	if sub.closed {
		sub.mu.Unlock()
		return true
	}
	if len(sub.q) > 0 {
		last := &sub.q[len(sub.q)-1]
		if n.Changed && last.Changed {
			sub.mu.Unlock()
			return true
		}
		if n.Window != nil && n.Window.Latest && last.Window != nil && last.Window.Latest && last.Window.Name == n.Window.Name {
			last.Window = n.Window // its Seq and Lagged stay
			sub.mu.Unlock()
			return true
		}
	}
	if len(sub.q) >= sub.max {
		i := 0 // where the entry after the dropped one is now
		lost := 1 + sub.q[0].Lagged
		if sub.q[0].View != nil && len(sub.q) > 1 {
			// The View stays first: the entry after it goes.
			i, lost = 1, 1+sub.q[1].Lagged
			sub.q[1] = sub.q[0]
		}
		sub.q[0] = Notify{}
		sub.q = sub.q[1:] // O(1): never a copy of the queue per publish
		if len(sub.q) > i {
			sub.q[i].Lagged += lost // the subscriber learns it at its next read
		} else {
			n.Lagged += lost
		}
	}
	sub.seq++
	n.Seq = sub.seq
	sub.q = append(sub.q, n)
	sub.mu.Unlock()
	sub.signal()
	return true
}

// publish hands n to every subscriber that watches w.
func (b *bus) publish(w Watch, n Notify) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.started && w != WatchWindow && len(b.boot) < DefaultQueue {
		b.boot = append(b.boot, booted{w: w, n: n})
	}
	watched := false
	for sub := range b.subs {
		if sub.push(w, n) {
			watched = true
		}
	}
	if !watched && n.Window != nil && n.Window.Hold && len(b.held) < maxHeld {
		b.held = append(b.held, booted{w: w, n: n, at: b.now()})
	}
}

// movedLocked says that the subscriptions changed.
func (b *bus) movedLocked() {
	if b.moved != nil {
		close(b.moved)
	}
	b.moved = make(chan struct{})
}

// subscriptions counts the subscriptions, with a channel closed when that
// changes (for tests: testwait.Until).
func (b *bus) subscriptions() (int, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.moved == nil {
		b.moved = make(chan struct{})
	}
	return len(b.subs), b.moved
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
