package gateway

import (
	"sync"

	"github.com/herald-desktop/herald/backend/wire"
)

// queue is an ordered, unbounded FIFO of events between the socket reader
// and the consumer's callback, so a slow consumer never stalls the reader
// (which must keep answering pings and matching responses).
type queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []wire.Event
	head   int
	closed bool
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) push(evs ...wire.Event) {
	if len(evs) == 0 {
		return
	}
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, evs...)
		q.cond.Signal()
	}
	q.mu.Unlock()
}

// pop blocks until an event is available or the queue is closed and empty.
func (q *queue) pop() (wire.Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) && !q.closed {
		q.cond.Wait()
	}
	if q.head == len(q.items) {
		return wire.Event{}, false
	}
	ev := q.items[q.head]
	q.items[q.head] = wire.Event{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.items) {
		n := copy(q.items, q.items[q.head:])
		q.items, q.head = q.items[:n], 0
	}
	return ev, true
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// close lets pop drain what is queued, then report false.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}
