package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestResyncSessionDecides: after a reconnect, resyncSession asks the
// gateway what one followed session missed and decides whether the user
// may have missed events (so perhaps an approval). One row per decision,
// with the gateway's answers scripted: the questions asked, the reasons
// said (Resync notices, in order), and what is delivered.
func TestResyncSessionDecides(t *testing.T) {
	t.Parallel()
	const live, stored = "live-1", "stored-1"
	openReq := func(id string) string {
		return `{"id": "` + id + `", "method": "approval", "params": {"session_id": "` + live + `", "command": "rm -rf ./` + id + `"}}`
	}
	delta := `{"type": "message.delta", "session_id": "` + live + `", "payload": {"text": "hi"}, "seq": 6}`
	notFound := &wire.RPCError{Code: -32601, Message: "method not found"}
	type reply struct {
		raw string
		err error
	}
	tests := []struct {
		name         string
		stored       string // "" : known only by its live id
		epochChanged bool
		replay       tri // c.feat.replay before
		activate     bool
		lists        bool     // approval.pending exists
		before       []string // server requests open before the reconnect
		replies      map[string]reply
		calls        []string // the questions asked, in order
		reasons      []string // Resync notices, in order
		delivered    []string // other events delivered, in order (kind or kind:id)
		live         string   // the session's live id after
		watchQuiet   bool
	}{
		{name: "replayed, nothing missed", stored: stored,
			replies: map[string]reply{"session.resume": {raw: `{"session_id": "live-1", "open_requests": []}`}, "session.events.since": {raw: `{"events": [` + delta + `]}`}},
			calls:   []string{"session.resume", "session.events.since"}, delivered: []string{wire.MessageDelta}},
		{name: "the gateway restarted", stored: stored, epochChanged: true,
			replies: map[string]reply{"session.resume": {raw: `{}`}, "session.events.since": {raw: `{"events": []}`}},
			calls:   []string{"session.resume", "session.events.since"}, reasons: []string{"epoch"}},
		{name: "resume refused", stored: stored,
			replies: map[string]reply{"session.resume": {err: &wire.RPCError{Code: 4007, Message: "no such session"}}},
			calls:   []string{"session.resume"}, reasons: []string{"resume-failed"}},
		{name: "cold resume", stored: stored,
			replies: map[string]reply{"session.resume": {raw: `{"session_id": "live-2"}`}, "session.events.since": {raw: `{"events": []}`}},
			calls:   []string{"session.resume", "session.events.since"}, reasons: []string{"new-runtime"},
			delivered: []string{wire.SessionGone + ":live-1"}, live: "live-2"},
		{name: "no replay on this gateway", stored: stored, replay: no,
			replies: map[string]reply{"session.resume": {raw: `{}`}},
			calls:   []string{"session.resume"}, reasons: []string{"no-replay"}},
		{name: "replay unknown to the gateway", stored: stored,
			replies: map[string]reply{"session.resume": {raw: `{}`}, "session.events.since": {err: notFound}},
			calls:   []string{"session.resume", "session.events.since"}, reasons: []string{"no-replay"}},
		{name: "replay failed", stored: stored,
			replies: map[string]reply{"session.resume": {raw: `{}`}, "session.events.since": {err: errors.New("link lost")}},
			calls:   []string{"session.resume", "session.events.since"}, reasons: []string{"replay-failed"}},
		{name: "replay unreadable", stored: stored,
			replies: map[string]reply{"session.resume": {raw: `{}`}, "session.events.since": {raw: `"nope"`}},
			calls:   []string{"session.resume", "session.events.since"}, reasons: []string{"replay-failed"}},
		{name: "replay cut", stored: stored, epochChanged: true,
			replies: map[string]reply{"session.resume": {raw: `{}`}, "session.events.since": {raw: `{"events": [` + delta + `], "truncated": true}`}},
			calls:   []string{"session.resume", "session.events.since"}, reasons: []string{"epoch", "truncated"}, delivered: []string{wire.MessageDelta}},
		{name: "one request settled while away", stored: stored, before: []string{"srq-1", "srq-2"},
			replies:   map[string]reply{"session.resume": {raw: `{"open_requests": [` + openReq("srq-2") + `]}`}, "session.events.since": {raw: `{"events": []}`}},
			calls:     []string{"session.resume", "session.events.since"},
			delivered: []string{wire.RequestCancel + ":srq-1", wire.ApprovalServerRequest + ":srq-2"}},
		{name: "running, open requests not listed (0.18.2)", stored: stored, before: []string{"srq-1"},
			replies: map[string]reply{"session.resume": {raw: `{"running": true}`}, "session.events.since": {err: notFound}},
			calls:   []string{"session.resume", "session.events.since"}, reasons: []string{"no-replay"}, watchQuiet: true},
		{name: "waiting approvals listed", stored: stored, lists: true,
			replies: map[string]reply{"session.resume": {raw: `{}`}, "approval.pending": {raw: `{"approvals": []}`}, "session.events.since": {raw: `{"events": []}`}},
			calls:   []string{"session.resume", "approval.pending", "session.events.since"}, delivered: []string{wire.ApprovalsListed}},
		{name: "known by live id, activated", activate: true, before: []string{"srq-1"},
			replies: map[string]reply{"session.activate": {raw: `{"open_requests": []}`}, "session.events.since": {raw: `{"events": []}`}},
			calls:   []string{"session.activate", "session.events.since"}, delivered: []string{wire.RequestCancel + ":srq-1"}},
		{name: "known by live id, no activate", before: []string{"srq-1"},
			replies: map[string]reply{"session.events.since": {raw: `{"events": []}`}},
			calls:   []string{"session.events.since"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(Config{URL: "http://127.0.0.1:1", Clock: clock.NewFake(time.Unix(1_700_000_000, 0))})
			if err != nil {
				t.Fatal(err)
			}
			c.feat.replay = tt.replay
			if tt.activate {
				c.feat.capabilities = yes
			}
			if tt.lists {
				c.cf.approvalPending = yes
			}
			s := c.track(live, tt.stored)
			s.watermark, s.replaying = 5, true
			for _, id := range tt.before {
				c.openSRQ[id] = live
			}
			var calls []string
			call := func(_ context.Context, method string, params any) (json.RawMessage, error) {
				calls = append(calls, method)
				r, ok := tt.replies[method]
				if !ok {
					t.Fatalf("unexpected call %s", method)
				}
				return json.RawMessage(r.raw), r.err
			}
			missed := c.resyncSession(context.Background(), call, s, tt.epochChanged)

			c.out.Close()
			var reasons, delivered []string
			for {
				ev, ok := c.out.Pop()
				if !ok {
					break
				}
				switch {
				case ev.Kind == wire.Resync:
					reasons = append(reasons, ev.Data.(*wire.ResyncPayload).Reason)
				case ev.Kind == wire.RequestCancel || ev.Kind == wire.ApprovalServerRequest:
					delivered = append(delivered, ev.Kind+":"+ev.RequestID)
				case ev.Kind == wire.SessionGone:
					delivered = append(delivered, ev.Kind+":"+ev.Session)
				default:
					delivered = append(delivered, ev.Kind)
				}
			}
			wantMissed := ""
			if len(tt.reasons) > 0 {
				wantMissed = tt.reasons[len(tt.reasons)-1]
			}
			if missed != wantMissed || !slices.Equal(reasons, tt.reasons) {
				t.Errorf("missed %q, reasons %v; want %q, %v", missed, reasons, wantMissed, tt.reasons)
			}
			if !slices.Equal(calls, tt.calls) {
				t.Errorf("asked %v, want %v", calls, tt.calls)
			}
			if !slices.Equal(delivered, tt.delivered) {
				t.Errorf("delivered %v, want %v", delivered, tt.delivered)
			}
			wantLive := tt.live
			if wantLive == "" {
				wantLive = live
			}
			if s.live != wantLive || s.replaying || c.sessions[wantLive] != s {
				t.Errorf("session live %q (replaying %v), want %q", s.live, s.replaying, wantLive)
			}
			if quiet := !s.quietSince.IsZero(); quiet != tt.watchQuiet {
				t.Errorf("watched for silence %v, want %v", quiet, tt.watchQuiet)
			}
			if strings.Contains(tt.name, "unknown to the gateway") && c.feat.replay != no {
				t.Error("a gateway without replay is asked again next time")
			}
		})
	}
}
