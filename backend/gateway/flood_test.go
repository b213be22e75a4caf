package gateway

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestFloodKeepsMemoryBoundedAndApprovalsFirst: a gateway floods a session
// with streaming text while the consumer is stuck; the backlog stays
// bounded (deltas merge, no text lost) and an approval sent after the flood
// is the next thing the consumer sees.
func TestFloodKeepsMemoryBoundedAndApprovalsFirst(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	stuck := make(chan struct{})
	h := start(t, srv, func(c *Config) {
		inner := c.OnEvent
		blocked := false
		c.OnEvent = func(ev wire.Event) {
			if ev.Kind == wire.MessageDelta && !blocked {
				blocked = true
				close(stuck)
				<-release // the consumer is stuck
			}
			inner(ev)
		}
	})
	h.rec.waitState(t, StateConnected)
	ref, err := h.client.CreateSession(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	const flood = 20000
	srv.Emit(ref.ID, wire.MessageDelta, map[string]any{"text": "x"})
	<-stuck
	for i := 0; i < flood; i++ {
		srv.Emit(ref.ID, wire.MessageDelta, map[string]any{"text": "x"})
	}
	asked := time.Now()
	id, _, _ := srv.RequestApproval(ref.ID, hermestest.ApprovalSpec{Command: "rm -rf ./after-flood"})
	// Wait until the reader has queued the approval behind the flood.
	h.rec.waitFor(t, "approval queued", func([]wire.Event, []Status) bool {
		return h.client.out.UrgentLen() == 1
	})
	queuedIn := time.Since(asked) // reported, not asserted: timing is for benchmarks
	backlog := h.client.out.Len()
	if backlog > source.CoalesceAfter+2 {
		t.Fatalf("backlog of %d events for a %d-delta flood: memory is not bounded", backlog, flood)
	}
	releaseOnce.Do(func() { close(release) })
	evs := h.rec.waitKind(t, wire.ApprovalServerRequest, 1)
	if evs[0].RequestID != id {
		t.Fatalf("approval %s, want %s", evs[0].RequestID, id)
	}
	// The approval came right after the delta the consumer was stuck on.
	all, _ := h.rec.snapshot()
	for i, e := range all {
		if e.Kind == wire.MessageDelta {
			if all[i+1].Kind != wire.ApprovalServerRequest {
				t.Fatalf("after the stuck delta came %s, want the approval ahead of the flood", all[i+1].Kind)
			}
			break
		}
	}
	// Every character of the flood still arrives, in order.
	h.rec.waitFor(t, "all text", func(evs []wire.Event, _ []Status) bool {
		n := 0
		for _, e := range evs {
			if d, ok := e.Data.(*wire.DeltaPayload); ok {
				n += strings.Count(d.Text, "x")
			}
		}
		return n == flood+1
	})
	t.Logf("backlog %d events for %d deltas; the approval was first in line %s after the gateway sent it", backlog, flood, queuedIn)
}
