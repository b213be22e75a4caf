package source

import (
	"encoding/json"
	"fmt"
	"log/slog"
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
//
// Both lanes are bounded by count and bytes (QueueLimits). A request over
// the bound is not queued but refused: one small wire.Refused event per
// session stands for every refusal that queues up behind it, in the
// request's place, so the consumer shows the flood (and, for a gateway
// that answers in arrival order, knows a request it never saw came
// first). Any other event over the bound is dropped and its session gets
// one wire.Resync ("overflow"): what Herald knows of it may be incomplete.
// Nothing leaves silently.
type queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	urgent []wire.Event
	items  []wire.Event
	head   int
	closed bool

	lim QueueLimits
	log *slog.Logger
	// urgentBytes and itemBytes are the lanes' estimated sizes (see cost).
	urgentBytes, itemBytes int
	// marks are the queued Refused and overflow Resync events, by what
	// they stand for, so more overflow merges into them.
	// marks maps each to its event's Data (a pointer, shared with the
	// queued event).
	marks map[markKey]any
	// full is set while a lane is over its bound; refused and dropped
	// count this episode's losses for the log.
	full             bool
	refused, dropped int
}

// QueueLimits bounds an EventQueue. Zero fields take the defaults.
type QueueLimits struct {
	// Requests and RequestBytes bound the urgent lane (approvals,
	// prompts, cancellations).
	Requests, RequestBytes int
	// Events and EventBytes bound the other lane.
	Events, EventBytes int
	// Marks bounds the distinct Refused and overflow Resync events
	// queued at once; past it they merge across sessions (one per
	// request method).
	Marks int
}

// Default queue bounds: ~100 MiB at worst with both lanes full (an event
// is counted at twice its payload: the raw bytes and what they decode to).
const (
	DefaultQueuedRequests     = 512
	DefaultQueuedRequestBytes = 16 << 20
	DefaultQueuedEvents       = 1 << 16
	DefaultQueuedEventBytes   = 32 << 20
	DefaultQueuedMarks        = 1024
)

func (l QueueLimits) withDefaults() QueueLimits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.Requests, DefaultQueuedRequests)
	def(&l.RequestBytes, DefaultQueuedRequestBytes)
	def(&l.Events, DefaultQueuedEvents)
	def(&l.EventBytes, DefaultQueuedEventBytes)
	def(&l.Marks, DefaultQueuedMarks)
	return l
}

type markKey struct {
	gateway, session, kind, method string
	unkeyed                        bool
}

// coalesceAfter is the backlog beyond which deltas are merged, into events
// of up to mergeMax bytes of text.
const (
	coalesceAfter = 1024
	mergeMax      = 16 << 10
)

func newQueue() *queue { return newBoundedQueue(QueueLimits{}, nil) }

func newBoundedQueue(lim QueueLimits, log *slog.Logger) *queue {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	q := &queue{lim: lim.withDefaults(), log: log, marks: map[markKey]any{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func urgent(ev wire.Event) bool {
	return ev.IsApproval() || ev.IsPrompt() || ev.IsPromptExpire() || ev.Kind == wire.RequestCancel || ev.Kind == wire.Refused
}

// cost estimates what a queued event holds in memory: its payload twice
// (raw, and decoded into Data) plus its ids and the event itself.
// A delta counts by its text, so merging deltas keeps the count exact.
func cost(ev wire.Event) int {
	n := len(ev.Payload)
	if d, ok := ev.Data.(*wire.DeltaPayload); ok && ev.Kind == wire.MessageDelta {
		n = len(d.Text)
	}
	return 2*n + len(ev.Session) + len(ev.StoredSession) + len(ev.RequestID) + 256
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
		c := cost(ev)
		switch {
		case urgent(ev):
			if len(q.urgent) >= q.lim.Requests || q.urgentBytes+c > q.lim.RequestBytes {
				q.overflowLocked(ev)
				continue
			}
			q.urgent = append(q.urgent, ev)
			q.urgentBytes += c
		case len(q.items)-q.head >= coalesceAfter && q.merge(ev):
		case len(q.items)-q.head >= q.lim.Events || q.itemBytes+c > q.lim.EventBytes:
			q.overflowLocked(ev)
		default:
			q.items = append(q.items, ev)
			q.itemBytes += c
		}
	}
	q.cond.Signal()
}

// refuse counts a request refused by its transport into a Refused event.
func (q *queue) refuse(ev wire.Event, reason string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.markLocked(ev, reason)
	q.cond.Signal()
}

// overflowLocked stands in for an event over the queue's bounds: a
// request becomes (or merges into) a Refused event, anything else is
// dropped and its session marked with an overflow Resync.
func (q *queue) overflowLocked(ev wire.Event) {
	if !q.full {
		q.full = true
		q.log.Warn("Herald's queue for this gateway is full (the gateway sends faster than Herald handles); refusing its requests and dropping other events until it drains",
			"queued_requests", len(q.urgent), "queued_events", len(q.items)-q.head, "request_limit", q.lim.Requests, "request_bytes_limit", q.lim.RequestBytes)
	}
	q.markLocked(ev, fmt.Sprintf("Herald's queue for gateway %s was full (%d requests or %d MiB waiting to be handled)", ev.Gateway, q.lim.Requests, q.lim.RequestBytes>>20))
}

// markLocked counts ev into the queued mark that stands for it, queueing
// a new one if there is none.
func (q *queue) markLocked(ev wire.Event, reason string) {
	request := ev.IsApproval() || ev.IsPrompt()
	k := markKey{gateway: ev.Gateway, session: ev.Session, kind: wire.Resync}
	if request {
		k.kind, k.method = wire.Refused, ev.Kind
		if ev.Kind == wire.ApprovalRequest {
			a, _ := ev.Approval()
			k.unkeyed = a == nil || (a.RequestID == "" && a.ApprovalID == "")
		}
		q.refused++
		q.log.Debug("refused a request", "reason", reason, "kind", ev.Kind, "session", ev.Session, "id", ev.RequestID, "bytes", len(ev.Payload))
	} else {
		q.dropped++
		if ev.Session == "" {
			return // no session whose view it could change: counted and logged
		}
	}
	unkeyed := k.unkeyed
	m := q.marks[k]
	if m == nil && len(q.marks) >= q.lim.Marks {
		k.session, k.unkeyed = "", false
		m = q.marks[k]
	}
	merged := k.session == "" && ev.Session != ""
	if m == nil {
		mk := wire.Event{Gateway: ev.Gateway, Session: k.session, Kind: k.kind, ReceivedAt: ev.ReceivedAt, Epoch: ev.Epoch}
		if k.session != "" {
			mk.StoredSession = ev.StoredSession
		}
		if request {
			mk.Data = &wire.RefusedPayload{Method: ev.Kind}
		} else {
			mk.Data = &wire.ResyncPayload{Reason: "overflow"}
		}
		// Marks bypass the lane's bounds: they are small and bounded by
		// Marks themselves.
		q.urgent = append(q.urgent, mk)
		q.urgentBytes += cost(mk)
		m = mk.Data
		q.marks[k] = m
	}
	if rp, ok := m.(*wire.RefusedPayload); ok {
		rp.Count++
		rp.Unkeyed = rp.Unkeyed || unkeyed
		rp.AllSessions = rp.AllSessions || merged
		rp.Reason = reason
		rp.LastBytes = len(ev.Payload)
		rp.LastCommand = ""
		if a, ok := ev.Approval(); ok {
			rp.LastCommand = prefix(a.Command, 200)
		}
	}
}

// prefix cuts s to at most n bytes, at a character boundary.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
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
	if q.itemBytes+2*len(b.Text) > q.lim.EventBytes {
		return false // over the bound: push drops it, with a Resync
	}
	// The payload is re-encoded once, when the merged event leaves the
	// queue (see pop), not on every merge: that would be quadratic.
	last.Data, last.Payload = &wire.DeltaPayload{Text: a.Text + b.Text}, nil
	q.itemBytes += 2 * len(b.Text)
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
		q.urgentBytes -= cost(ev)
		q.urgent[0] = wire.Event{}
		q.urgent = q.urgent[1:]
		switch d := ev.Data.(type) {
		case *wire.RefusedPayload:
			q.unmarkLocked(ev)
			ev.Payload, _ = json.Marshal(d)
		case *wire.ResyncPayload:
			if ev.Payload == nil {
				q.unmarkLocked(ev)
				ev.Payload, _ = json.Marshal(d)
			}
		}
		if len(q.urgent) == 0 {
			q.urgent, q.urgentBytes = nil, 0 // let the backing array go
		}
		q.settleLocked()
		return ev, true
	}
	if q.head == len(q.items) {
		return wire.Event{}, false
	}
	ev := q.items[q.head]
	q.itemBytes -= cost(ev)
	if ev.Payload == nil && ev.Kind == wire.MessageDelta {
		if d, ok := ev.Data.(*wire.DeltaPayload); ok {
			ev.Payload, _ = json.Marshal(d)
		}
	}
	q.items[q.head] = wire.Event{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head, q.itemBytes = q.items[:0], 0, 0
		if cap(q.items) > 4*coalesceAfter {
			q.items = nil // a flood's array goes with it
		}
	} else if q.head > 1024 && q.head*2 > len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.settleLocked()
	return ev, true
}

// unmarkLocked forgets a mark leaving the queue: overflow after it starts
// a new one, behind whatever was queued meanwhile.
func (q *queue) unmarkLocked(ev wire.Event) {
	for k, m := range q.marks {
		if m == ev.Data {
			delete(q.marks, k)
			return
		}
	}
}

// settleLocked ends an overflow episode once both lanes are below half
// their bounds, logging what it cost.
func (q *queue) settleLocked() {
	if !q.full || len(q.urgent) > q.lim.Requests/2 || q.urgentBytes > q.lim.RequestBytes/2 || len(q.items)-q.head > q.lim.Events/2 || q.itemBytes > q.lim.EventBytes/2 {
		return
	}
	q.log.Warn("Herald's queue for this gateway drained", "requests_refused", q.refused, "events_dropped", q.dropped)
	q.full, q.refused, q.dropped = false, 0, 0
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
