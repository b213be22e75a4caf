package service

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

func ev(kind, session string, payload any) wire.Event {
	b, _ := json.Marshal(payload)
	e := wire.Event{Gateway: "gw", Session: session, Kind: kind, Payload: b, ReceivedAt: time.Unix(100, 0)}
	e.DecodeData()
	return e
}

func TestLiveViewFollowsToolActivity(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer s.Close()
	steps := []struct {
		ev   wire.Event
		want func(SessionView) bool
		what string
	}{
		{ev(wire.SessionInfo, "s1", map[string]any{"model": "m", "running": false, "title": "t"}), func(v SessionView) bool { return v.Model == "m" && v.Title == "t" && !v.Running }, "session.info"},
		{ev(wire.MessageStart, "s1", nil), func(v SessionView) bool { return v.Running }, "message.start"},
		{ev(wire.ToolStart, "s1", map[string]any{"name": "terminal", "context": "Running ls"}), func(v SessionView) bool { return v.Tool == "terminal: Running ls" }, "tool.start"},
		{ev(wire.ToolComplete, "s1", map[string]any{"name": "terminal"}), func(v SessionView) bool { return v.Tool == "" && v.Running }, "tool.complete"},
		{ev(wire.MessageDelta, "s1", map[string]any{"text": "hi "}), func(v SessionView) bool { return v.LastText == "hi " }, "delta"},
		{ev(wire.MessageComplete, "s1", map[string]any{"text": "done", "status": "complete", "usage": map[string]any{"total": 42}}), func(v SessionView) bool {
			return !v.Running && v.Status == "complete" && v.LastText == "done" && v.Tokens == 42
		}, "complete"},
		{ev(wire.MessageStart, "s1", nil), func(v SessionView) bool { return v.Running && v.Status == "" && v.LastText == "" }, "the next turn's message.start"},
	}
	for _, st := range steps {
		s.onEvent(st.ev)
		v := s.View()
		if len(v.Sessions) != 1 || !st.want(v.Sessions[0]) {
			t.Fatalf("after %s: %+v", st.what, v.Sessions)
		}
	}
}

// TestLiveViewSaysSinceWhenATurnRuns: Since is when the running turn
// started (its message.start, or the first sign of it); a turn's end
// clears it and the next turn starts it again.
func TestLiveViewSaysSinceWhenATurnRuns(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer s.Close()
	at := func(e wire.Event, sec int64) wire.Event { e.ReceivedAt = time.Unix(sec, 0); return e }
	for _, st := range []struct {
		ev    wire.Event
		since int64 // 0: zero
	}{
		{at(ev(wire.SessionInfo, "s1", map[string]any{"running": false}), 10), 0},
		{at(ev(wire.MessageStart, "s1", nil), 20), 20},
		{at(ev(wire.ToolStart, "s1", map[string]any{"name": "terminal", "context": "Running ls"}), 25), 20},
		{at(ev(wire.MessageDelta, "s1", map[string]any{"text": "hi"}), 30), 20},
		{at(ev(wire.MessageComplete, "s1", map[string]any{"status": "complete"}), 40), 0},
		{at(ev(wire.MessageDelta, "s1", map[string]any{"text": "more"}), 50), 50},
		{at(ev(wire.MessageStart, "s1", nil), 60), 60},
		{at(ev(wire.SessionInfo, "s2", map[string]any{"running": true}), 70), 70},
	} {
		s.onEvent(st.ev)
		var got SessionView
		for _, v := range s.View().Sessions {
			if v.ID == st.ev.Session {
				got = v
			}
		}
		want := time.Time{}
		if st.since != 0 {
			want = time.Unix(st.since, 0)
		}
		if !got.Since.Equal(want) {
			t.Fatalf("after %s at %v: since %v, want %v", st.ev.Kind, st.ev.ReceivedAt.Unix(), got.Since, want)
		}
	}
}

func TestResolveKeyAndControl(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0)), Store: approval.NewMemoryStore()})
	defer s.Close()
	// Two sessions, one approval each: two of one session at once on an
	// id-less connection would accept only deny (approval.TestTwoAtOnce).
	for i, cmd := range []string{"rm -rf ./a", "rm -rf ./b"} {
		s.onEvent(ev(wire.ApprovalRequest, fmt.Sprintf("s%d", i+1), map[string]any{"command": cmd, "choices": []string{"once", "deny"}}))
	}
	pend := s.Inbox().Pending()
	if len(pend) != 2 {
		t.Fatalf("%d pending", len(pend))
	}
	short := ShortKey(pend[0].Key)
	for _, tc := range []struct {
		in, want, err string
	}{
		{short, pend[0].Key, ""},
		{short[:6], pend[0].Key, ""},
		{pend[1].Key, pend[1].Key, ""},
		{"", "", "no approval id"},
		{"zzzz", "", "no approval with id"},
	} {
		got, err := s.resolveKey(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("resolveKey(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("resolveKey(%q) = %q, %v", tc.in, got, err)
		}
	}

	path := filepath.Join(t.TempDir(), "herald", "ctl.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.ServeControl(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := s.ServeControl(ctx, path); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second server on the same socket: %v", err)
	}
	resp, err := Control(ctx, path, ControlRequest{Op: "pending"})
	if err != nil || len(resp.Pending) != 2 {
		t.Fatalf("pending over control: %+v %v", resp, err)
	}
	// No gateway is connected: the answer cannot be sent and the request
	// stays pending with the error visible.
	_, err = Control(ctx, path, ControlRequest{Op: "approve", Key: short, Choice: "once"})
	if err == nil || !strings.Contains(err.Error(), "gw") {
		t.Fatalf("approve without a connected gateway: %v", err)
	}
	t.Logf("user sees: %v", err)
	if r, _ := s.Inbox().Get(pend[0].Key); r.State != approval.StatePending {
		t.Fatalf("after a failed send the request is %s, want pending", r.State)
	}
	if _, err := Control(ctx, path, ControlRequest{Op: "bogus"}); err == nil || !strings.Contains(err.Error(), "unknown operation") {
		t.Fatalf("bogus op: %v", err)
	}
	resp, err = Control(ctx, path, ControlRequest{Op: "log"})
	if err != nil || len(resp.Log) < 2 {
		t.Fatalf("log over control: %d entries, %v", len(resp.Log), err)
	}
	if _, err := Control(ctx, filepath.Join(t.TempDir(), "none.sock"), ControlRequest{Op: "pending"}); err != ErrNoDaemon {
		t.Fatalf("no daemon: %v", err)
	}
}
