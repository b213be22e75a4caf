package wire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// typedKinds maps every kind with a typed payload to the zero value Data
// must hold when the payload is empty.
var typedKinds = map[string]any{
	wire.MessageDelta:          &wire.DeltaPayload{},
	wire.MessageComplete:       &wire.CompletePayload{},
	wire.ToolStart:             &wire.ToolStartPayload{},
	wire.ToolComplete:          &wire.ToolCompletePayload{},
	wire.StatusUpdate:          &wire.StatusPayload{},
	wire.SessionInfo:           &wire.SessionInfoPayload{},
	wire.ErrorEvent:            &wire.ErrorPayload{},
	wire.ApprovalRequest:       &wire.ApprovalPayload{},
	wire.ApprovalServerRequest: &wire.ApprovalPayload{},
	wire.RequestCancel:         &wire.CancelPayload{},
	wire.Resync:                &wire.ResyncPayload{},
	wire.NotificationShow:      &wire.NotificationPayload{},
	wire.NotificationLegacy:    &wire.NotificationPayload{},
	wire.NotificationClear:     &wire.NotificationClearPayload{},
	wire.ClarifyRequest:        &wire.ClarifyPayload{},
	wire.ClarifyServerRequest:  &wire.ClarifyPayload{},
	wire.SudoRequest:           &wire.SudoPayload{},
	wire.SudoServerRequest:     &wire.SudoPayload{},
	wire.SecretRequest:         &wire.SecretPayload{},
	wire.SecretServerRequest:   &wire.SecretPayload{},
	wire.ClarifyExpire:         &wire.PromptExpirePayload{},
	wire.SudoExpire:            &wire.PromptExpirePayload{},
	wire.SecretExpire:          &wire.PromptExpirePayload{},
}

// untypedKinds are named kinds (and ones seen from real gateways) whose
// payload Herald passes through raw.
var untypedKinds = []string{
	wire.GatewayReady,
	wire.MessageStart,
	wire.SessionsChanged,
	wire.ServerRequestUnknown,
	"reasoning.delta",
	"vault.code",
	"some.future.event",
	"",
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func ptr[T any](v T) *T { return &v }

func TestDecodeDataKnownKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind    string
		payload string
		want    any
	}{
		{wire.MessageDelta, `{"text":"tick 1/20 "}`, &wire.DeltaPayload{Text: "tick 1/20 "}},
		{wire.MessageComplete,
			`{"text":"done","usage":{"model":"hermes-stub","input":2,"output":4,"reasoning":1,"prompt":2,"completion":4,"total":6,"calls":1,"active_subagents":3},"status":"interrupted"}`,
			&wire.CompletePayload{Text: "done", Status: "interrupted", Usage: &wire.Usage{
				Model: "hermes-stub", Input: 2, Output: 4, Reasoning: 1, Total: 6, Calls: 1, Subagents: 3,
			}}},
		{wire.MessageComplete, `{"text":"x","status":"complete"}`,
			&wire.CompletePayload{Text: "x", Status: "complete"}},
		{wire.ToolStart, `{"tool_id":"call_e3d9dca5c892","name":"terminal","context":"Running ls"}`,
			&wire.ToolStartPayload{ToolID: "call_e3d9dca5c892", Name: "terminal", Context: "Running ls"}},
		{wire.ToolComplete,
			`{"tool_id":"call_1","name":"terminal","args":{"command":"ls"},"duration_s":0.25,"result":{"output":"","exit_code":-1,"status":null}}`,
			&wire.ToolCompletePayload{ToolID: "call_1", Name: "terminal",
				Args:     json.RawMessage(`{"command":"ls"}`),
				Duration: 0.25,
				Result:   json.RawMessage(`{"output":"","exit_code":-1,"status":null}`)}},
		{wire.StatusUpdate, `{"kind":"thinking","text":"pondering"}`,
			&wire.StatusPayload{Kind: "thinking", Text: "pondering"}},
		{wire.SessionInfo,
			`{"model":"hermes-stub","provider":"stub","running":true,"title":"t","cwd":"/w","version":"0.18.2","approval_mode":"manual","yolo":true,"usage":{"total":9},"tools":{"terminal":["terminal"]}}`,
			&wire.SessionInfoPayload{Model: "hermes-stub", Provider: "stub", Running: true, Title: "t", Cwd: "/w",
				Version: "0.18.2", ApprovalMode: "manual", Yolo: true, Usage: &wire.Usage{Total: 9}}},
		{wire.ErrorEvent, `{"message":"stub agent failure"}`, &wire.ErrorPayload{Message: "stub agent failure"}},
		{wire.ApprovalRequest,
			`{"command":"git reset --hard HEAD","pattern_key":"k","pattern_keys":["k"],"description":"d","allow_permanent":true,"choices":["once","session","always","deny"]}`,
			&wire.ApprovalPayload{Command: "git reset --hard HEAD", PatternKey: "k", PatternKeys: []string{"k"},
				Description: "d", AllowPermanent: ptr(true), Choices: []string{"once", "session", "always", "deny"}}},
		{wire.ApprovalServerRequest,
			`{"request_id":"srq-3f9a1c2b7d4e","approval_id":"srq-3f9a1c2b7d4e","session_id":"7f57f239","command":"rm -rf /tmp/x","description":"d","allow_permanent":false,"allow_session":true,"expires_at":12345.5,"tool_name":"terminal","choices":["once","deny"]}`,
			&wire.ApprovalPayload{RequestID: "srq-3f9a1c2b7d4e", ApprovalID: "srq-3f9a1c2b7d4e", SessionID: "7f57f239",
				Command: "rm -rf /tmp/x", Description: "d", AllowPermanent: ptr(false), AllowSession: ptr(true),
				ExpiresAt: 12345.5, ToolName: "terminal", Choices: []string{"once", "deny"}}},
		{wire.RequestCancel, `{"id":"srq-3f9a1c2b7d4e","method":"approval","reason":"timeout"}`,
			&wire.CancelPayload{ID: "srq-3f9a1c2b7d4e", Method: "approval", Reason: "timeout"}},
		{wire.Resync, `{"reason":"epoch"}`, &wire.ResyncPayload{Reason: "epoch"}},
		{wire.NotificationShow, `{"text":"t","level":"warn","kind":"sticky","ttl_ms":null,"key":"k","id":"k"}`,
			&wire.NotificationPayload{Text: "t", Level: "warn", Kind: "sticky", Key: "k", ID: "k"}},
		{wire.NotificationLegacy, `{"text":"t","level":"info","kind":"ttl","ttl_ms":5,"key":"k"}`,
			&wire.NotificationPayload{Text: "t", Level: "info", Kind: "ttl", TTLMillis: ptr(5.0), Key: "k"}},
		{wire.NotificationClear, `{"key":"k"}`, &wire.NotificationClearPayload{Key: "k"}},
		// Prompts: the 0.18.2 events (capture 09) and the newer server requests
		// (tui_gateway/contracts/server_requests.py).
		{wire.ClarifyRequest, `{"question":"Proceed?","choices":["yes","no"],"request_id":"d1b3cb7d"}`,
			&wire.ClarifyPayload{Question: "Proceed?", Choices: []string{"yes", "no"}, RequestID: "d1b3cb7d"}},
		{wire.ClarifyServerRequest, `{"session_id":"7f57f239","questions":[{"qid":"q0","question":"Env?","choices":null,"multi_select":false}]}`,
			&wire.ClarifyPayload{SessionID: "7f57f239", Questions: []wire.ClarifyQuestion{{QID: "q0", Question: "Env?"}}}},
		{wire.SudoRequest, `{"request_id":"0a1b2c3d"}`, &wire.SudoPayload{RequestID: "0a1b2c3d"}},
		{wire.SudoServerRequest, `{"session_id":"7f57f239","command":"sudo apt-get install jq"}`,
			&wire.SudoPayload{SessionID: "7f57f239", Command: "sudo apt-get install jq"}},
		{wire.SecretRequest, `{"prompt":"Enter key","env_var":"API_KEY","request_id":"9e8d7c6b"}`,
			&wire.SecretPayload{Prompt: "Enter key", EnvVar: "API_KEY", RequestID: "9e8d7c6b"}},
		{wire.SecretServerRequest, `{"session_id":"s","env_var":"API_KEY","prompt":"p","metadata":{"skill":"w"}}`,
			&wire.SecretPayload{SessionID: "s", EnvVar: "API_KEY", Prompt: "p", Metadata: json.RawMessage(`{"skill":"w"}`)}},
		{wire.ClarifyExpire, `{"request_id":"d1b3cb7d"}`, &wire.PromptExpirePayload{RequestID: "d1b3cb7d"}},
		{wire.SudoExpire, `{"request_id":"0a1b2c3d"}`, &wire.PromptExpirePayload{RequestID: "0a1b2c3d"}},
		{wire.SecretExpire, `{"request_id":"9e8d7c6b"}`, &wire.PromptExpirePayload{RequestID: "9e8d7c6b"}},
		// JSON null decodes to the zero payload, like an absent one.
		{wire.MessageDelta, `null`, &wire.DeltaPayload{}},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.kind] = true
		t.Run(tt.kind, func(t *testing.T) {
			t.Parallel()
			ev := wire.Event{Kind: tt.kind, Payload: json.RawMessage(tt.payload)}
			if err := ev.DecodeData(); err != nil {
				t.Fatalf("DecodeData: %v", err)
			}
			if !reflect.DeepEqual(ev.Data, tt.want) {
				t.Errorf("Data = %#v\nwant %#v", ev.Data, tt.want)
			}
			if string(ev.Payload) != tt.payload {
				t.Errorf("Payload changed to %s", ev.Payload)
			}
		})
	}
	for k := range typedKinds {
		if !covered[k] {
			t.Errorf("no decode case for typed kind %q", k)
		}
	}
}

// A known kind without a payload (message.start-style frames) still gets a
// typed, zero Data so consumers can type-switch on it.
func TestDecodeDataKnownKindEmptyPayload(t *testing.T) {
	t.Parallel()
	for kind, want := range typedKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ev := wire.Event{Kind: kind}
			if err := ev.DecodeData(); err != nil {
				t.Fatalf("DecodeData: %v", err)
			}
			if !reflect.DeepEqual(ev.Data, want) {
				t.Errorf("Data = %#v, want %#v", ev.Data, want)
			}
		})
	}
}

func TestDecodeDataUnknownKind(t *testing.T) {
	t.Parallel()
	payloads := []string{``, `{"question":"Proceed?","choices":["yes","no"]}`, `[1,2]`, `not json at all`}
	for _, kind := range untypedKinds {
		for _, payload := range payloads {
			t.Run(kind+"/"+payload, func(t *testing.T) {
				t.Parallel()
				ev := wire.Event{Kind: kind, Payload: json.RawMessage(payload), Data: "stale"}
				if err := ev.DecodeData(); err != nil {
					t.Fatalf("DecodeData: %v", err)
				}
				if ev.Data != nil {
					t.Errorf("Data = %#v, want nil", ev.Data)
				}
				if string(ev.Payload) != payload {
					t.Errorf("Payload = %q, want %q", ev.Payload, payload)
				}
			})
		}
	}
}

func TestDecodeDataUndecodable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind    string
		payload string
	}{
		{wire.MessageDelta, `{"text":5}`},
		{wire.MessageDelta, `"just a string"`},
		{wire.MessageComplete, `{"usage":{"total":"many"}}`},
		{wire.ToolStart, `[1,2,3]`},
		{wire.ToolComplete, `{"duration_s":"fast"}`},
		{wire.StatusUpdate, `{"kind":{}}`},
		{wire.SessionInfo, `{"running":"yes"}`},
		{wire.ErrorEvent, `{"message":`},
		{wire.ApprovalRequest, `{"choices":"once"}`},
		{wire.ApprovalServerRequest, `{"allow_session":"maybe"}`},
		{wire.RequestCancel, `{"id":1}`},
		{wire.Resync, `not json`},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.payload, func(t *testing.T) {
			t.Parallel()
			ev := wire.Event{Kind: tt.kind, Payload: json.RawMessage(tt.payload), Data: "stale"}
			err := ev.DecodeData()
			if err == nil {
				t.Fatalf("DecodeData succeeded with Data %#v", ev.Data)
			}
			if !strings.Contains(err.Error(), tt.kind) {
				t.Errorf("error %q does not name the kind", err)
			}
			if ev.Data != nil {
				t.Errorf("Data = %#v, want nil", ev.Data)
			}
			if string(ev.Payload) != tt.payload {
				t.Errorf("Payload = %q, want it preserved", ev.Payload)
			}
		})
	}
}

func TestEventApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind         string
		isApproval   bool
		hasApprovalD bool
	}{
		{wire.ApprovalRequest, true, true},
		{wire.ApprovalServerRequest, true, true},
		{wire.RequestCancel, false, false},
		{wire.MessageDelta, false, false},
		{"clarify.request", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			t.Parallel()
			ev := wire.Event{Kind: tt.kind, Payload: json.RawMessage(`{"command":"ls"}`)}
			if err := ev.DecodeData(); err != nil {
				t.Fatal(err)
			}
			if got := ev.IsApproval(); got != tt.isApproval {
				t.Errorf("IsApproval = %v, want %v", got, tt.isApproval)
			}
			a, ok := ev.Approval()
			if ok != tt.hasApprovalD {
				t.Fatalf("Approval ok = %v, want %v", ok, tt.hasApprovalD)
			}
			if ok && a.Command != "ls" {
				t.Errorf("Approval().Command = %q", a.Command)
			}
			if !ok && a != nil {
				t.Errorf("Approval() = %#v with ok=false", a)
			}
		})
	}
}

// Data is for Go consumers only; the JSON form of an event carries the raw
// payload so nothing is lost for the frontend.
func TestEventJSONOmitsData(t *testing.T) {
	t.Parallel()
	ev := wire.Event{Gateway: "g", Kind: wire.MessageDelta, Payload: json.RawMessage(`{"text":"hi"}`), RequestID: "srq-1"}
	if err := ev.DecodeData(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]json.RawMessage
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if _, ok := back["Data"]; ok {
		t.Errorf("marshalled event has Data: %s", b)
	}
	if !bytes.Equal(back["payload"], ev.Payload) || string(back["kind"]) != `"message.delta"` || string(back["request_id"]) != `"srq-1"` {
		t.Errorf("marshalled event = %s", b)
	}
}
