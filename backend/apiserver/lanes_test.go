package apiserver_test

import (
	"sync"
	"testing"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestApprovalJumpsAheadOfStreamedText: behind a slow consumer, an
// API-server approval is delivered before the streamed text queued ahead
// of it, like on the WebSocket (the gateway's two-lane queue).
func TestApprovalJumpsAheadOfStreamedText(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var mu sync.Mutex
	var order []string
	first := true
	var h *harness
	h = start(t, apiservertest.LastEventID, setup{client: func(c *apiserver.Config) {
		rec := c.OnEvent
		c.OnEvent = func(ev wire.Event) {
			mu.Lock()
			block := first
			first = false
			order = append(order, ev.Kind)
			mu.Unlock()
			rec(ev)
			if block {
				<-release // a slow consumer: everything else queues
			}
		}
	}})
	run := h.startRun("approve-me: rm -rf ./build")
	// The approval is queued once the client counts it pending.
	h.rec.waitFor(t, "the approval queued", func(_ []wire.Event, sts []apiserver.Status) bool {
		for _, s := range sts {
			for _, ri := range s.Runs {
				if ri.ID == run && ri.PendingApprovals == 1 {
					return true
				}
			}
		}
		return false
	})
	close(release)
	h.rec.waitKind(t, run, wire.ApprovalRequest, 1)
	mu.Lock()
	defer mu.Unlock()
	// The server streamed 5 deltas and a tool start before the approval.
	before := 0
	for _, k := range order {
		if k == wire.ApprovalRequest {
			break
		}
		before++
	}
	if before > 1 {
		t.Fatalf("delivery order %v: the approval waited behind streamed text", order)
	}
}

// streamOrder undoes the approval lane for tests of stream contents: the
// client delivers an approval.request ahead of queued text (see
// TestApprovalJumpsAheadOfStreamedText), so each one is put back just
// before its run's approval.responded, where the stream had it.
func streamOrder(evs []wire.Event) []wire.Event {
	var out, held []wire.Event
	for _, e := range evs {
		switch e.Kind {
		case wire.ApprovalRequest:
			held = append(held, e)
			continue
		case apiserver.ApprovalResponded:
			for i, h := range held {
				if h.Session == e.Session {
					out = append(out, h)
					held = append(held[:i:i], held[i+1:]...)
					break
				}
			}
		}
		out = append(out, e)
	}
	return append(out, held...)
}
