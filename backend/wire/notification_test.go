package wire_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// The payloads below are the shapes tui_gateway emits (server.py
// _agent_notice_update and the slow agent-build notice; credits_tracker
// AgentNotice), see backend/hermestest/NOTIFICATIONS.md.
func TestNotificationPayloads(t *testing.T) {
	t.Parallel()
	ttl := 8000.0
	tests := []struct {
		name, kind, payload string
		want                any
		key                 string
	}{
		{"sticky credits notice", wire.NotificationShow,
			`{"text":"✕ Credit access paused · run /topup to top up","level":"error","kind":"sticky","ttl_ms":null,"key":"credits.depleted","id":"credits.depleted"}`,
			&wire.NotificationPayload{Text: "✕ Credit access paused · run /topup to top up", Level: "error", Kind: "sticky", Key: "credits.depleted", ID: "credits.depleted"},
			"credits.depleted"},
		{"ttl notice", wire.NotificationShow,
			`{"text":"✓ Credit access restored","level":"success","kind":"ttl","ttl_ms":8000,"key":"credits.restored","id":"credits.restored"}`,
			&wire.NotificationPayload{Text: "✓ Credit access restored", Level: "success", Kind: "ttl", TTLMillis: &ttl, Key: "credits.restored", ID: "credits.restored"},
			"credits.restored"},
		{"the issue's name for it", wire.NotificationLegacy,
			`{"text":"Still starting the agent","level":"info","kind":"agent","ttl_ms":null,"key":"agent.build.slow","id":"agent.build.slow"}`,
			&wire.NotificationPayload{Text: "Still starting the agent", Level: "info", Kind: "agent", Key: "agent.build.slow", ID: "agent.build.slow"},
			"agent.build.slow"},
		{"id only", wire.NotificationShow, `{"text":"x","level":"warn","kind":"sticky","id":"only-id"}`,
			&wire.NotificationPayload{Text: "x", Level: "warn", Kind: "sticky", ID: "only-id"}, "only-id"},
		{"neither key nor id", wire.NotificationShow, `{"text":"x","level":"info","kind":"sticky"}`,
			&wire.NotificationPayload{Text: "x", Level: "info", Kind: "sticky"}, ""},
		{"clear", wire.NotificationClear, `{"key":"credits.usage"}`, &wire.NotificationClearPayload{Key: "credits.usage"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev := wire.Event{Kind: tc.kind, Payload: json.RawMessage(tc.payload)}
			if err := ev.DecodeData(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ev.Data, tc.want) {
				t.Fatalf("Data = %#v, want %#v", ev.Data, tc.want)
			}
			if n, ok := ev.Data.(*wire.NotificationPayload); ok {
				if !wire.IsNotification(tc.kind) {
					t.Fatalf("IsNotification(%q) = false", tc.kind)
				}
				if got := n.DedupeKey(); got != tc.key {
					t.Fatalf("DedupeKey = %q, want %q", got, tc.key)
				}
			}
		})
	}
}

func TestNotificationBadPayloadKeepsEvent(t *testing.T) {
	t.Parallel()
	ev := wire.Event{Kind: wire.NotificationShow, Payload: json.RawMessage(`{"text":5}`)}
	if err := ev.DecodeData(); err == nil || ev.Data != nil {
		t.Fatalf("err=%v Data=%v, want an error and nil Data", err, ev.Data)
	}
}

func TestNormalLevel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"info": "info", "warn": "warn", "WARNING": "warn", "error": "error", "critical": "error",
		"success": "success", "": "info", "\x1b[31mred": "info", "bogus": "info",
	} {
		if got := wire.NormalLevel(in); got != want {
			t.Errorf("NormalLevel(%q) = %q, want %q", in, got, want)
		}
	}
}
