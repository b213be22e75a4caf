package gateway

import (
	"fmt"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
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
	h.rec.waitState(t, StateConnected)
	const n = MaxTrackedSessions + 200
	for i := range n {
		h.client.dispatch(wire.Event{Gateway: "gw", Session: fmt.Sprintf("junk-%d", i), Kind: wire.StatusUpdate, Seq: 1})
	}
	h.rec.waitFor(t, "every event delivered", func(evs []wire.Event, _ []Status) bool { return len(kinds(h, wire.StatusUpdate)) == n })
	if got := len(h.client.Sessions()); got != MaxTrackedSessions {
		t.Fatalf("tracking %d sessions, want the bound %d", got, MaxTrackedSessions)
	}
}
