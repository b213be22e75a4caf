package gateway

import (
	"encoding/json"
	"fmt"
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
	h.rec.waitState(t, source.StateConnected)
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
	h.rec.waitFor(t, "approval queued", func([]wire.Event, []source.Status) bool {
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
	h.rec.waitFor(t, "all text", func(evs []wire.Event, _ []source.Status) bool {
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

// TestServerRequestFloodBoundedAndShown: a gateway floods 20 KB approval
// server requests over a real WebSocket while the consumer is stuck. The
// queue holds no more than its bound; every request past it is counted in
// a wire.Refused event (nothing dropped silently), and the consumer gets
// the taken ones first, then the refusal, in arrival order.
func TestServerRequestFloodBoundedAndShown(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	stuck := make(chan struct{})
	const bound, flood = 16, 200
	h := start(t, srv, func(c *Config) {
		c.Queue = source.QueueLimits{Requests: bound}
		inner := c.OnEvent
		blocked := false
		c.OnEvent = func(ev wire.Event) {
			if ev.Kind == wire.ApprovalServerRequest && !blocked {
				blocked = true
				close(stuck)
				<-release // the consumer is stuck
			}
			inner(ev)
		}
	})
	h.rec.waitState(t, source.StateConnected)
	ref, err := h.client.CreateSession(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 20<<10)
	if _, _, err := srv.RequestApproval(ref.ID, hermestest.ApprovalSpec{Command: "first " + big}); err != nil {
		t.Fatal(err)
	}
	<-stuck
	for i := range flood {
		if _, _, err := srv.RequestApproval(ref.ID, hermestest.ApprovalSpec{Command: fmt.Sprint(i, " ", big)}); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until the reader has handled the whole flood: the refusal
	// event counts everything past the bound.
	h.rec.waitFor(t, "the flood read", func([]wire.Event, []source.Status) bool { return h.client.out.RefusedQueued() == flood-bound })
	if n := h.client.out.UrgentLen(); n != bound+1 {
		t.Fatalf("%d queued, want the bound %d and one refusal", n, bound)
	}
	releaseOnce.Do(func() { close(release) })
	evs := h.rec.waitKind(t, wire.Refused, 1)
	var p wire.RefusedPayload
	json.Unmarshal(evs[0].Payload, &p)
	if p.Count != flood-bound || evs[0].Session != ref.ID || p.Method != wire.ApprovalServerRequest || !strings.HasPrefix(p.LastCommand, fmt.Sprint(flood-1, " ")) {
		t.Fatalf("refusal %+v on %s", p, evs[0].Session)
	}
	if got := h.rec.waitKind(t, wire.ApprovalServerRequest, bound+1); len(got) != bound+1 {
		t.Fatalf("%d approvals delivered, want %d", len(got), bound+1)
	}
}
