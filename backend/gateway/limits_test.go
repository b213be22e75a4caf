package gateway

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestTrackedSessionsBounded: a gateway that sends sequenced events for
// endless session ids cannot make the client track (and re-attach on
// every reconnect) more than MaxTrackedSessions; every event is still
// delivered.
func TestTrackedSessionsBounded(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := start(t, srv, nil)
	h.rec.waitState(t, source.StateConnected)
	const n = MaxTrackedSessions + 200
	for i := range n {
		h.client.dispatch(wire.Event{Gateway: "gw", Session: fmt.Sprintf("junk-%d", i), Kind: wire.StatusUpdate, Seq: 1})
	}
	h.rec.waitFor(t, "every event delivered", func(evs []wire.Event, _ []source.Status) bool { return len(kinds(h, wire.StatusUpdate)) == n })
	if got := len(h.client.Sessions()); got != MaxTrackedSessions {
		t.Fatalf("tracking %d sessions, want the bound %d", got, MaxTrackedSessions)
	}
}

// TestOpenServerRequestsBounded: past MaxOpenServerRequests a new server
// request is refused (one wire.Refused stands for them, not delivered,
// not answered), repeats of open ones are still recognised, each open one
// is kept as a 32-byte digest of its params, and room comes back when
// requests end.
func TestOpenServerRequestsBounded(t *testing.T) {
	t.Parallel()
	// A queue large enough that only the open-request bound refuses.
	c, err := New(Config{URL: "ws://127.0.0.1:1", Name: "gw", Queue: source.QueueLimits{Requests: 2 * MaxOpenServerRequests, RequestBytes: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 20<<10)
	mk := func(id string) wire.Event {
		p, _ := json.Marshal(wire.ApprovalPayload{SessionID: "s1", Command: big})
		ev := wire.Event{Gateway: "gw", Session: "s1", Kind: wire.ApprovalServerRequest, RequestID: id, Payload: p}
		ev.DecodeData()
		return ev
	}
	const over = 50
	go func() {
		for i := range MaxOpenServerRequests + over {
			c.emitServerRequest(mk(fmt.Sprint("srq-", i)), nil)
		}
		c.emitServerRequest(mk("srq-0"), nil) // a repeat of an open one: not delivered again
		c.closeSRQ("srq-1")
		c.emitServerRequest(mk("srq-after"), nil) // room again
		c.out.Close()
	}()
	delivered, refused := 0, 0
	var last wire.Event
	for {
		ev, ok := c.out.Pop()
		if !ok {
			break
		}
		switch ev.Kind {
		case wire.ApprovalServerRequest:
			delivered++
		case wire.Refused:
			var p wire.RefusedPayload
			json.Unmarshal(ev.Payload, &p)
			if !strings.Contains(p.Reason, "server requests open") || ev.Session != "s1" {
				t.Fatalf("refusal %+v", p)
			}
			refused += p.Count
		}
		last = ev
	}
	if delivered != MaxOpenServerRequests+1 || refused != over || last.RequestID != "srq-after" {
		t.Fatalf("%d delivered, %d refused, last %q; want %d, %d, srq-after", delivered, refused, last.RequestID, MaxOpenServerRequests+1, over)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, d := range c.srqParams {
		if len(d) != sha256.Size {
			t.Fatalf("%s keeps %d bytes of params", id, len(d))
		}
	}
}

// TestParkedDuringReplayBounded: live events that arrive while a
// session's replay runs are parked up to maxParked; past it a request is
// refused (a wire.Refused event, not open here) and other events are
// dropped, the session marked for a resync notice.
func TestParkedDuringReplayBounded(t *testing.T) {
	t.Parallel()
	c, err := New(Config{URL: "ws://127.0.0.1:1", Name: "gw"})
	if err != nil {
		t.Fatal(err)
	}
	s := c.track("s1", "st1")
	c.mu.Lock()
	s.replaying = true
	c.mu.Unlock()
	for i := range maxParked + 10 {
		c.dispatch(wire.Event{Gateway: "gw", Session: "s1", Kind: wire.MessageDelta, Seq: uint64(i + 1), Payload: []byte(`{"text":"x"}`)})
	}
	p, _ := json.Marshal(wire.ApprovalPayload{SessionID: "s1", Command: "rm -rf ./late"})
	ev := wire.Event{Gateway: "gw", Session: "s1", Kind: wire.ApprovalServerRequest, RequestID: "srq-late", Payload: p}
	ev.DecodeData()
	c.emitServerRequest(ev, nil)
	c.mu.Lock()
	parked, dropped, open := len(s.parked), s.parkDropped, len(c.openSRQ)
	c.mu.Unlock()
	if parked != maxParked || !dropped || open != 0 {
		t.Fatalf("%d parked (bound %d), dropped %v, %d open", parked, maxParked, dropped, open)
	}
	c.out.Close()
	got, ok := c.out.Pop()
	var rp wire.RefusedPayload
	if ok {
		json.Unmarshal(got.Payload, &rp)
	}
	if got.Kind != wire.Refused || rp.Count != 1 || !strings.Contains(rp.Reason, "replayed") {
		t.Fatalf("queued %s %+v, want the approval refused", got.Kind, rp)
	}
}
