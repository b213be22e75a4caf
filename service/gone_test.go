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

// TestSessionName: one name for a session everywhere: its title, else
// the first words of its first prompt, else "Untitled session, started
// 13:54"; an API run is never named by its id (run_<32 hex> or a cut of
// it).
func TestSessionName(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 4, 13, 54, 0, 0, time.Local)
	for _, tc := range []struct {
		v    SessionView
		want string
	}{
		{SessionView{Title: "fix the tests", StoredID: "20261202_100136_258fb5", ID: "a1b2c3d4e5f6", FirstPrompt: "x"}, "fix the tests"},
		{SessionView{Title: "  ", StoredID: "20261202_100136_258fb5", ID: "a1b2c3d4e5f6", Started: at}, "Untitled session, started 13:54"},
		{SessionView{ID: "run_4f2a9c0e11d84b7f9a6b3c2d1e0f9a8b", FirstPrompt: "clean the build dir", Word: "run"}, "clean the build dir"},
		{SessionView{ID: "run_4f2a9c0e11d84b7f9a6b3c2d1e0f9a8b", Started: at, Word: "run"}, "Untitled run, started 13:54"},
	} {
		if got := tc.v.Naming().Name(); got != tc.want {
			t.Errorf("%+v named %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestStartedRunIsNamedByItsInput: an API run Herald started is named by
// its input's first words, whether its first event came before the
// start returned or after.
func TestStartedRunIsNamedByItsInput(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	t.Cleanup(s.Close)
	ev := func(id string) wire.Event {
		e := wire.Event{Gateway: "api", Session: id, Kind: wire.MessageDelta, Payload: []byte(`{"text":"x"}`)}
		e.DecodeData()
		return e
	}
	s.onEvent(ev("run_early"))
	s.nameRun("api", "run_early", "clean the build dir")
	s.nameRun("api", "run_late", "run the tests and fix every one that fails, then push the branch")
	s.onEvent(ev("run_late"))
	got := map[string]string{}
	v := s.View()
	for _, sv := range v.Sessions {
		got[sv.ID] = v.Names().Of("api", sv.ID, "", "")
	}
	if got["run_early"] != "clean the build dir" || got["run_late"] != "run the tests and fix every one that..." {
		t.Fatalf("run names %q", got)
	}
}
