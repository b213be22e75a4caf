package service

import (
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// TestGoneSessionLeavesTheView: a session its gateway reports gone (it
// died in a restart, or lives on under a new id) leaves the live view, so
// restarts do not pile up dead rows; other sessions stay.
func TestGoneSessionLeavesTheView(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	t.Cleanup(s.Close)
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	ev := func(session, kind string) wire.Event {
		e := wire.Event{Gateway: "lab", Session: session, StoredSession: "st-" + session, Kind: kind, ReceivedAt: at}
		if kind == wire.MessageDelta {
			e.Payload = []byte(`{"text":"hi"}`)
		}
		e.DecodeData()
		return e
	}
	for _, id := range []string{"a", "b", "c"} {
		s.onEvent(ev(id, wire.MessageDelta))
	}
	s.onEvent(ev("b", wire.SessionGone))
	s.onEvent(ev("zz", wire.SessionGone)) // never seen: nothing to drop
	var ids []string
	for _, v := range s.View().Sessions {
		ids = append(ids, v.ID)
	}
	if len(ids) != 2 || ids[0] == "b" || ids[1] == "b" {
		t.Fatalf("sessions in the view %v, want a and c", ids)
	}
}
