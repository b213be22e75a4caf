package service

import (
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
)

// BenchmarkStopRunConfirmed measures what a user waits for after pressing
// Stop: session.interrupt crosses a loopback WebSocket, the fake ends the
// turn, and StopRun returns on the turn's message.complete. Each loop
// starts the turn with Ask (not timed) first.
func BenchmarkStopRunConfirmed(b *testing.B) {
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	ch := newBcast()
	s := New(Config{})
	onChange(s, ch.poke)
	defer s.Close()
	c, err := addGateway(s, gateway.Config{Name: "gw", URL: srv.URL, Token: srv.Token()})
	if err != nil {
		b.Fatal(err)
	}
	testwait.Until(b, 20*time.Second, "connected", srv.Changed, func() bool { return c.Status().State == source.StateConnected })
	ref, err := c.CreateSession(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	running := func() bool {
		for _, r := range s.ActiveRuns() {
			if r.ID == ref.ID {
				return true
			}
		}
		return false
	}
	for b.Loop() {
		b.StopTimer()
		if _, err := s.Ask(b.Context(), AskRequest{Session: ref.ID, Text: "hold"}); err != nil {
			b.Fatal(err)
		}
		testwait.Until(b, 20*time.Second, "running", ch.changed, running)
		b.StartTimer()
		res, err := s.StopRun(b.Context(), "gw", ref.ID)
		if err != nil || res.Outcome != OutcomeInterrupted {
			b.Fatalf("StopRun = %+v, %v", res, err)
		}
	}
}
