package source

import (
	"encoding/json"
	"sync"

	"github.com/herald-desktop/herald/backend/wire"
)

// queue sits between the socket reader and the consumer's callback, so a
// slow consumer never stalls the reader (which must keep answering pings and
// matching responses). It has two lanes: approvals, prompts and their cancellations
// go first, so a prompt is never queued behind a flood of streaming text;
// everything else keeps its order. Under a backlog, consecutive
// message.delta events of one session are merged (their text concatenated,
// nothing lost), which bounds memory during a flood.
type queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	urgent []wire.Event
	items  []wire.Event
	head   int
	closed bool
}

// coalesceAfter is the backlog beyond which deltas are merged, into events
// of up to mergeMax bytes of text.
const (
	coalesceAfter = 1024
	mergeMax      = 16 << 10
)

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func urgent(ev wire.Event) bool {
	return ev.IsApproval() || ev.IsPrompt() || ev.IsPromptExpire() || ev.Kind == wire.RequestCancel
}

func (q *queue) push(evs ...wire.Event) {
	if len(evs) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	for _, ev := range evs {
		switch {
		case urgent(ev):
			q.urgent = append(q.urgent, ev)
		case len(q.items)-q.head >= coalesceAfter && q.merge(ev):
		default:
			q.items = append(q.items, ev)
		}
	}
	q.cond.Signal()
}

// merge folds a delta into the queued delta before it, if they belong
// together. Caller holds q.mu.
func (q *queue) merge(ev wire.Event) bool {
	if ev.Kind != wire.MessageDelta || len(q.items) == q.head {
		return false
	}
	last := &q.items[len(q.items)-1]
	if last.Kind != wire.MessageDelta || last.Gateway != ev.Gateway || last.Session != ev.Session || last.Replayed != ev.Replayed {
		return false
	}
	a, ok1 := last.Data.(*wire.DeltaPayload)
	b, ok2 := ev.Data.(*wire.DeltaPayload)
	if !ok1 || !ok2 || len(a.Text) >= mergeMax {
		return false // past mergeMax a new event starts: copying stays linear
	}
	// The payload is re-encoded once, when the merged event leaves the
	// queue (see pop), not on every merge: that would be quadratic.
	last.Data, last.Payload = &wire.DeltaPayload{Text: a.Text + b.Text}, nil
	if ev.Seq > last.Seq {
		last.Seq = ev.Seq
	}
	return true
}

// pop blocks until an event is available or the queue is closed and empty.
func (q *queue) pop() (wire.Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.urgent) == 0 && q.head == len(q.items) && !q.closed {
		q.cond.Wait()
	}
	if len(q.urgent) > 0 {
		ev := q.urgent[0]
		q.urgent[0] = wire.Event{}
		q.urgent = q.urgent[1:]
		return ev, true
	}
	if q.head == len(q.items) {
		return wire.Event{}, false
	}
	ev := q.items[q.head]
	if ev.Payload == nil && ev.Kind == wire.MessageDelta {
		if d, ok := ev.Data.(*wire.DeltaPayload); ok {
			ev.Payload, _ = json.Marshal(d)
		}
	}
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
	return len(q.urgent) + len(q.items) - q.head
}

// close lets pop drain what is queued, then report false.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}
