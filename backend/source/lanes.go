package source

import (
	"log/slog"

	"github.com/herald-desktop/herald/backend/wire"
)

// EventQueue is the two-lane queue every transport puts between its
// reader and its consumer, so they all deliver the same way: approvals and their cancellations jump ahead of
// streamed text, everything else keeps its order, and a flood of deltas
// is merged without losing text. It is safe for concurrent use.
type EventQueue struct{ q *queue }

// CoalesceAfter is the backlog beyond which queued deltas are merged.
const CoalesceAfter = coalesceAfter

// NewEventQueue returns an empty, open queue with the default bounds.
func NewEventQueue() *EventQueue { return &EventQueue{q: newQueue()} }

// NewBoundedEventQueue returns an empty, open queue bounded by lim (zero
// fields take the defaults) that logs its overflow to log (nil: nowhere).
// See queue for what happens over a bound.
func NewBoundedEventQueue(lim QueueLimits, log *slog.Logger) *EventQueue {
	return &EventQueue{q: newBoundedQueue(lim, log)}
}

// Push queues events; after Close it drops them.
func (e *EventQueue) Push(evs ...wire.Event) { e.q.push(evs...) }

// Pop blocks until an event is available (urgent lane first) or the queue
// is closed and drained, when it reports false.
func (e *EventQueue) Pop() (wire.Event, bool) { return e.q.pop() }

// Refuse stands for a request a transport refuses for one of its own
// bounds (reason says which): it is not delivered, but counted into a
// wire.Refused event, exactly as a request over the queue's bounds.
func (e *EventQueue) Refuse(ev wire.Event, reason string) { e.q.refuse(ev, reason) }

// Len is the number of queued events.
func (e *EventQueue) Len() int { return e.q.len() }

// Close lets Pop drain what is queued, then report false.
func (e *EventQueue) Close() { e.q.close() }

// RefusedQueued is how many requests the queued wire.Refused events stand
// for so far.
func (e *EventQueue) RefusedQueued() int {
	e.q.mu.Lock()
	defer e.q.mu.Unlock()
	n := 0
	for _, m := range e.q.marks {
		if p, ok := m.(*wire.RefusedPayload); ok {
			n += p.Count
		}
	}
	return n
}

// Deliver hands every event to fn (when not nil), in order, from a
// goroutine of its own, until the queue is closed and drained; the
// returned channel is closed then. It is how every transport feeds its
// consumer.
func (e *EventQueue) Deliver(fn func(wire.Event)) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, ok := e.Pop()
			if !ok {
				return
			}
			if fn != nil {
				fn(ev)
			}
		}
	}()
	return done
}

// UrgentLen is the number of queued approvals, prompts and cancellations.
func (e *EventQueue) UrgentLen() int {
	e.q.mu.Lock()
	defer e.q.mu.Unlock()
	return len(e.q.urgent)
}
