package source

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

func qev(kind, session, id string, payload any) wire.Event {
	ev := wire.Event{Gateway: "g1", Session: session, Kind: kind, RequestID: id}
	ev.Payload, _ = json.Marshal(payload)
	_ = ev.DecodeData()
	return ev
}

func srqEv(session, id, cmd string) wire.Event {
	return qev(wire.ApprovalServerRequest, session, id, wire.ApprovalPayload{SessionID: session, Command: cmd})
}

// drain pops everything queued (the queue is closed first, so pop ends).
func drain(q *queue) []wire.Event {
	q.close()
	var out []wire.Event
	for {
		ev, ok := q.pop()
		if !ok {
			return out
		}
		out = append(out, ev)
	}
}

// TestQueueBoundsRequests: past the urgent lane's count or bytes, requests
// are refused into one Refused event per session, placed where the first
// refusal would have been, and nothing is lost without a trace.
func TestQueueBoundsRequests(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 20<<10)
	tests := []struct {
		name string
		lim  QueueLimits
		n    int
		cmd  string
		want int // requests taken in
	}{
		{"by count", QueueLimits{Requests: 8}, 50, "rm -rf ./junk", 8},
		{"by bytes", QueueLimits{RequestBytes: 10 * (2*(20<<10) + 400)}, 50, big, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := newBoundedQueue(tt.lim, nil)
			for i := range tt.n {
				q.push(srqEv("s1", fmt.Sprint("srq-", i), tt.cmd))
			}
			q.push(qev(wire.MessageDelta, "s1", "", wire.DeltaPayload{Text: "hi"}))
			if q.urgentBytes > q.lim.RequestBytes+1024 {
				t.Fatalf("urgent lane holds ~%d bytes, bound %d", q.urgentBytes, q.lim.RequestBytes)
			}
			evs := drain(q)
			var taken, refused int
			for i, ev := range evs {
				switch ev.Kind {
				case wire.ApprovalServerRequest:
					if ev.RequestID != fmt.Sprint("srq-", taken) {
						t.Fatalf("event %d is %s, want srq-%d: order changed", i, ev.RequestID, taken)
					}
					taken++
				case wire.Refused:
					var p wire.RefusedPayload
					if err := json.Unmarshal(ev.Payload, &p); err != nil {
						t.Fatal(err)
					}
					if ev.Session != "s1" || p.Method != wire.ApprovalServerRequest || p.Unkeyed || p.AllSessions || !strings.Contains(p.Reason, "queue") || !strings.HasPrefix(tt.cmd, p.LastCommand) || len(p.LastCommand) > 200 {
						t.Fatalf("refused event %+v %+v", ev, p)
					}
					if i != tt.want {
						t.Fatalf("the refusal came at %d, want %d (where the first refused request was)", i, tt.want)
					}
					refused += p.Count
				}
			}
			if taken != tt.want || taken+refused != tt.n {
				t.Fatalf("%d taken, %d refused of %d; want %d taken and the rest refused", taken, refused, tt.n, tt.want)
			}
			if last := evs[len(evs)-1]; last.Kind != wire.MessageDelta {
				t.Fatalf("last event %s, want the delta", last.Kind)
			}
		})
	}
}

// TestQueueRefusalMarks: an unkeyed event-form approval marks its refusal
// Unkeyed; past Marks distinct sessions, refusals merge into one event for
// all sessions; a mark that left the queue is not merged into again.
func TestQueueRefusalMarks(t *testing.T) {
	t.Parallel()
	q := newBoundedQueue(QueueLimits{Requests: 1, Marks: 3}, nil)
	q.push(srqEv("s0", "srq-0", "ls")) // fills the lane
	q.push(qev(wire.ApprovalRequest, "s1", "", wire.ApprovalPayload{Command: "rm a"}))
	for i := range 5 {
		q.push(srqEv(fmt.Sprint("t", i), fmt.Sprint("srq-t", i), "rm b"))
	}
	q.push(qev(wire.ApprovalRequest, "s9", "", wire.ApprovalPayload{Command: "rm c"}))
	if ev, _ := q.pop(); ev.RequestID != "srq-0" {
		t.Fatalf("first %+v", ev)
	}
	got := map[string]wire.RefusedPayload{}
	for range 5 {
		ev, _ := q.pop()
		var p wire.RefusedPayload
		json.Unmarshal(ev.Payload, &p)
		got[ev.Session+"/"+p.Method] = p
	}
	if p := got["s1/"+wire.ApprovalRequest]; !p.Unkeyed || p.Count != 1 {
		t.Fatalf("s1: %+v", got)
	}
	if p := got["t0/"+wire.ApprovalServerRequest]; p.Unkeyed || p.Count != 1 {
		t.Fatalf("t0: %+v", got)
	}
	// Past Marks, one merged event per method stands for every session.
	if p := got["/"+wire.ApprovalServerRequest]; !p.AllSessions || p.Unkeyed || p.Count != 3 {
		t.Fatalf("merged: %+v (want t2..t4)", got)
	}
	if p := got["/"+wire.ApprovalRequest]; !p.AllSessions || !p.Unkeyed || p.Count != 1 || p.LastCommand != "rm c" {
		t.Fatalf("merged unkeyed: %+v (want s9's approval)", got)
	}
	if len(q.marks) != 0 {
		t.Fatalf("%d marks left after they were popped", len(q.marks))
	}
	// Room again: taken in; over again: a new mark behind it.
	q.push(srqEv("s1", "srq-new", "ls"), srqEv("s1", "srq-over", "ls"))
	evs := drain(q)
	if len(evs) != 2 || evs[0].RequestID != "srq-new" || evs[1].Kind != wire.Refused {
		t.Fatalf("after draining: %+v", evs)
	}
}

// TestQueueBoundsEvents: past the other lane's bounds events are dropped
// and their session gets one overflow Resync ahead of them; deltas still
// merge first, so streamed text alone does not overflow.
func TestQueueBoundsEvents(t *testing.T) {
	t.Parallel()
	q := newBoundedQueue(QueueLimits{Events: 10}, nil)
	for i := range 30 {
		q.push(qev(wire.ToolComplete, "s1", "", map[string]any{"tool_id": fmt.Sprint(i)}))
		q.push(qev(wire.ToolComplete, "s2", "", map[string]any{"tool_id": fmt.Sprint(i)}))
	}
	evs := drain(q)
	resyncs := map[string]int{}
	kept := 0
	for _, ev := range evs {
		switch ev.Kind {
		case wire.Resync:
			var p wire.ResyncPayload
			json.Unmarshal(ev.Payload, &p)
			if p.Reason != "overflow" {
				t.Fatalf("resync %+v", p)
			}
			resyncs[ev.Session]++
		case wire.ToolComplete:
			kept++
		}
	}
	if kept != 10 || resyncs["s1"] != 1 || resyncs["s2"] != 1 || evs[0].Kind != wire.Resync {
		t.Fatalf("kept %d, resyncs %v, first %s", kept, resyncs, evs[0].Kind)
	}
}

// TestQueueByteCountExact: the lanes' byte counts stay exact however
// events were merged and popped (checked while one event is left, before
// the count is reset), so a long backlog never drifts into refusing or
// dropping early.
func TestQueueByteCountExact(t *testing.T) {
	t.Parallel()
	q := newBoundedQueue(QueueLimits{}, nil)
	for round := range 3 {
		for i := range coalesceAfter + 500 {
			q.push(qev(wire.MessageDelta, "s1", "", wire.DeltaPayload{Text: strings.Repeat("x", i%7+1)}))
			if i%100 == 0 {
				q.push(srqEv("s1", fmt.Sprint("srq-", round, i), "ls"))
				q.push(qev(wire.ToolComplete, "s1", "", map[string]any{"n": i}))
			}
		}
		for range 300 { // pop part of the backlog: it never empties
			q.pop()
		}
	}
	for q.len() > 1 {
		q.pop()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.urgent) != 0 || len(q.items)-q.head != 1 {
		t.Fatalf("%d urgent, %d items left", len(q.urgent), len(q.items)-q.head)
	}
	if want := cost(q.items[q.head]); q.itemBytes != want || q.urgentBytes != 0 {
		t.Fatalf("one event of %d bytes left, counted %d (urgent %d)", want, q.itemBytes, q.urgentBytes)
	}
}
