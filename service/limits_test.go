package service

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestLiveViewSessionsBounded: a gateway that reports endless sessions
// cannot grow the live view past MaxSessionsPerGateway; the running and
// most recent ones stay, other gateways are untouched, and the view says
// what happened.
func TestLiveViewSessionsBounded(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer s.Close()
	at := time.Unix(1000, 0)
	emit := func(gw, sid, kind string, payload any) {
		e := ev(kind, sid, payload)
		e.Gateway, e.ReceivedAt = gw, at
		at = at.Add(time.Second)
		s.onEvent(e)
	}
	emit("gw", "running-one", wire.MessageStart, nil) // the oldest, but running
	emit("other", "o1", wire.StatusUpdate, map[string]any{"text": "fine"})
	const extra = 50
	for i := range MaxSessionsPerGateway + extra {
		emit("gw", fmt.Sprintf("s%04d", i), wire.SessionInfo, map[string]any{"title": strings.Repeat("t", 10000), "running": false})
	}
	v := s.View()
	per := map[string]int{}
	ids := map[string]bool{}
	for _, sv := range v.Sessions {
		per[sv.Gateway]++
		ids[sv.ID] = true
		if len(sv.Title) > maxSessionField+4 {
			t.Fatalf("a %d-byte title kept", len(sv.Title))
		}
	}
	if per["gw"] != MaxSessionsPerGateway || per["other"] != 1 {
		t.Fatalf("sessions per gateway %v", per)
	}
	if !ids["running-one"] || !ids[fmt.Sprintf("s%04d", MaxSessionsPerGateway+extra-1)] || ids["s0000"] {
		t.Fatal("the view kept the wrong sessions: the running one and the newest must stay, the oldest idle go")
	}
	if len(v.Limits) != 1 || !strings.Contains(v.Limits[0], "more than 500 sessions") || !strings.Contains(v.Limits[0], "51 others") {
		t.Fatalf("limits %q", v.Limits)
	}
	t.Logf("user sees: %s", v.Limits[0])
}

// TestViewShowsFloods: a flood of approvals shows in the view.
func TestViewShowsFloods(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer s.Close()
	for i := range 300 {
		s.onEvent(srqEvent("gw", fmt.Sprintf("srq-%d", i), "junk"))
	}
	v := s.View()
	if len(v.Approvals) != 256 || len(v.Floods) != 1 || v.Floods[0].Refused != 44 || len(v.Limits) != 1 || !strings.Contains(v.Limits[0], "flooding") {
		t.Fatalf("%d approvals, floods %+v, limits %q", len(v.Approvals), v.Floods, v.Limits)
	}
}
