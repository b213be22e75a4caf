package apiserver_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/wire"
)

var epoch = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// normalizeCapture parses a captured stream into wire events.
func normalizeCapture(t *testing.T, name string, n *apiserver.Normalizer) []wire.Event {
	t.Helper()
	if n.Now == nil {
		n.Now = func() time.Time { return epoch }
	}
	var out []wire.Event
	if err := apiserver.ChatStreamEvents(bytes.NewReader(captureBody(t, name)), n, 0, func(ev wire.Event) { out = append(out, ev) }); err != nil {
		t.Fatal(err)
	}
	return out
}

func kinds(evs []wire.Event) []string {
	var k []string
	for _, e := range evs {
		k = append(k, e.Kind)
	}
	return k
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// approvedRunKinds is what an approve-me run answered once looks like.
var approvedRunKinds = concat(
	repeat(wire.MessageDelta, 5),
	[]string{wire.ToolStart, wire.ApprovalRequest, apiserver.ApprovalResponded, wire.ToolComplete},
	repeat(wire.MessageDelta, 5),
	[]string{apiserver.RunCompleted},
)

func TestNormalizeRunCaptures(t *testing.T) {
	t.Parallel()
	const run = "run_adeb66edf855468085f677bf4e83cde7"
	evs := normalizeCapture(t, "10_approval_once.sse.raw.txt", &apiserver.Normalizer{Gateway: "hermes"})
	if got := kinds(evs); !reflect.DeepEqual(got, approvedRunKinds) {
		t.Fatalf("kinds\n got %v\nwant %v", got, approvedRunKinds)
	}
	for _, e := range evs {
		if e.Gateway != "hermes" || e.Session != run || !e.ReceivedAt.Equal(epoch) {
			t.Fatalf("envelope %+v", e)
		}
		if !json.Valid(e.Payload) {
			t.Fatalf("payload %s", e.Payload)
		}
	}
	if d := evs[0].Data.(*wire.DeltaPayload); d.Text != "I " {
		t.Errorf("first delta %q", d.Text)
	}
	ts := evs[5].Data.(*wire.ToolStartPayload)
	if ts.Name != "terminal" || ts.Context != "git reset --hard HEAD" {
		t.Errorf("tool start %+v", ts)
	}
	a, ok := evs[6].Approval()
	if !ok || a.Command != "git reset --hard HEAD" || a.SessionID != run || a.PatternKey != "git reset --hard (destroys uncommitted changes)" ||
		!reflect.DeepEqual(a.Choices, []string{"once", "session", "always", "deny"}) || a.AllowPermanent == nil || !*a.AllowPermanent {
		t.Errorf("approval %+v", a)
	}
	if !evs[6].IsApproval() || evs[6].RequestID != "" {
		t.Errorf("approval envelope %+v", evs[6])
	}
	if r := evs[7].Data.(*apiserver.ApprovalRespondedPayload); r.Choice != "once" || r.Resolved != 1 {
		t.Errorf("responded %+v", r)
	}
	tc := evs[8].Data.(*wire.ToolCompletePayload)
	if tc.Name != "terminal" || tc.Duration != 33.179 {
		t.Errorf("tool complete %+v", tc)
	}
	out := evs[len(evs)-1].Data.(*apiserver.RunOutcomePayload)
	if out.Status != "completed" || !strings.HasPrefix(out.Output, "approved: git reset --hard HEAD") || out.Usage == nil || out.Usage.TotalTokens != 23 {
		t.Errorf("outcome %+v", out)
	}

	// DecodeData on the augmented payload agrees with the Normalizer.
	for _, i := range []int{0, 5, 6} {
		e := evs[i]
		want := e.Data
		if err := e.DecodeData(); err != nil {
			t.Fatal(err)
		}
		if i == 6 {
			// The payload has no session_id; the Normalizer adds the run.
			e.Data.(*wire.ApprovalPayload).SessionID = run
		}
		if !reflect.DeepEqual(e.Data, want) {
			t.Errorf("DecodeData(%s) = %+v, Normalizer said %+v", e.Kind, e.Data, want)
		}
	}
}

func TestNormalizeOutcomesAndUnknownKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		capture string
		last    string
		check   func(t *testing.T, evs []wire.Event)
	}{
		{"11_approval_deny.sse.raw.txt", apiserver.RunCompleted, func(t *testing.T, evs []wire.Event) {
			if r := evs[7].Data.(*apiserver.ApprovalRespondedPayload); r.Choice != "deny" {
				t.Errorf("responded %+v", r)
			}
		}},
		{"14_stop_slow.sse.raw.txt", apiserver.RunCancelled, nil},
		{"16_input_fail.sse.raw.txt", apiserver.RunFailed, func(t *testing.T, evs []wire.Event) {
			if o := evs[0].Data.(*apiserver.RunOutcomePayload); o.Status != "failed" || !strings.Contains(o.Error, "stub agent failure") {
				t.Errorf("failed outcome %+v", o)
			}
		}},
		{"16_input_reason.sse.raw.txt", apiserver.RunCompleted, func(t *testing.T, evs []wire.Event) {
			// Unknown kinds keep their name and payload; nothing is dropped.
			if evs[0].Kind != "reasoning.available" || evs[0].Data != nil || !bytes.Contains(evs[0].Payload, []byte("stub reasoning")) {
				t.Errorf("unknown kind %+v", evs[0])
			}
		}},
		{"32_approve_par_all.sse.raw.txt", apiserver.RunCompleted, func(t *testing.T, evs []wire.Event) {
			n := 0
			for _, e := range evs {
				if e.Kind == wire.ApprovalRequest {
					n++
				}
			}
			if n != 2 {
				t.Errorf("%d approvals", n)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.capture, func(t *testing.T) {
			t.Parallel()
			evs := normalizeCapture(t, tt.capture, &apiserver.Normalizer{Gateway: "g"})
			if last := evs[len(evs)-1].Kind; last != tt.last {
				t.Fatalf("last kind %s, want %s", last, tt.last)
			}
			if tt.check != nil {
				tt.check(t, evs)
			}
		})
	}
}

func TestNormalizeChatStreams(t *testing.T) {
	t.Parallel()
	t.Run("chat completions", func(t *testing.T) {
		t.Parallel()
		evs := normalizeCapture(t, "21_chat_completions_stream_tool.sse.raw.txt", &apiserver.Normalizer{Gateway: "g", Session: "api-f3ab0dd29e0edbef"})
		want := concat([]string{wire.MessageStart}, repeat(wire.MessageDelta, 5), []string{wire.ToolStart, wire.ToolComplete}, repeat(wire.MessageDelta, 3), []string{wire.MessageComplete})
		if got := kinds(evs); !reflect.DeepEqual(got, want) {
			t.Fatalf("kinds\n got %v\nwant %v", got, want)
		}
		ts := evs[6].Data.(*wire.ToolStartPayload)
		if ts.ToolID != "call_881d60b4ea41" || ts.Name != "read_file" || ts.Context != "example.txt" {
			t.Errorf("tool start %+v", ts)
		}
		if evs[0].Session != "chatcmpl-b5c81aeaf05b44fbaec9592a38eac" || evs[6].Session != evs[0].Session || evs[6].StoredSession != "api-f3ab0dd29e0edbef" {
			t.Errorf("sessions %q %q %q", evs[0].Session, evs[6].Session, evs[6].StoredSession)
		}
		c := evs[len(evs)-1].Data.(*wire.CompletePayload)
		if c.Status != "complete" || c.Usage == nil || c.Usage.Input != 2 || c.Usage.Output != 3 || c.Usage.Total != 5 {
			t.Errorf("complete %+v %+v", c, c.Usage)
		}
	})
	t.Run("approval event in a chat stream", func(t *testing.T) {
		t.Parallel()
		// Newer servers send approvals inside chat-completion streams as
		// "event: approval.request" (api_server.py _write_sse_chat_completion).
		stream := "data: {\"id\": \"chatcmpl-9f\", \"object\": \"chat.completion.chunk\", \"choices\": [{\"index\": 0, \"delta\": {\"role\": \"assistant\"}, \"finish_reason\": null}]}\r\n\r\n" +
			": keepalive\r\n\r\n" +
			"event: approval.request\r\ndata: {\"command\": \"rm -rf ./build\", \"description\": \"recursive delete\", \"pattern_key\": \"recursive delete\", \"request_id\": \"req_1\", \"run_id\": \"chatcmpl-9f\", \"session_id\": \"api-5bd1\", \"gateway_session_key\": null, \"timestamp\": 1796199034.5, \"choices\": [\"once\", \"session\", \"always\", \"deny\"]}\r\n\r\n" +
			"data: [DONE]\r\n\r\n" +
			"data: {\"after\": \"done\"}\r\n\r\n"
		var evs []wire.Event
		err := apiserver.ChatStreamEvents(strings.NewReader(stream), &apiserver.Normalizer{Gateway: "g"}, 0, func(e wire.Event) { evs = append(evs, e) })
		if err != nil {
			t.Fatal(err)
		}
		if got := kinds(evs); !reflect.DeepEqual(got, []string{wire.MessageStart, wire.ApprovalRequest}) {
			t.Fatalf("kinds %v", got)
		}
		a, _ := evs[1].Approval()
		if evs[1].Session != "chatcmpl-9f" || evs[1].StoredSession != "api-5bd1" || evs[1].RequestID != "req_1" || a.RequestID != "req_1" || a.SessionID != "chatcmpl-9f" || a.Command != "rm -rf ./build" {
			t.Errorf("approval %+v %+v", evs[1], a)
		}
	})
	t.Run("session chat stream", func(t *testing.T) {
		t.Parallel()
		evs := normalizeCapture(t, "25_session_chat_stream_tool.sse.raw.txt", &apiserver.Normalizer{Gateway: "g"})
		want := concat([]string{"run.started", wire.MessageStart}, repeat(wire.MessageDelta, 5), []string{wire.ToolStart, wire.ToolComplete}, repeat(wire.MessageDelta, 3), []string{wire.MessageComplete, apiserver.RunCompleted, "done"})
		if got := kinds(evs); !reflect.DeepEqual(got, want) {
			t.Fatalf("kinds\n got %v\nwant %v", got, want)
		}
		for i, e := range evs {
			if e.Seq != uint64(i+1) {
				t.Fatalf("event %d has seq %d", i, e.Seq)
			}
		}
		if evs[0].Session != "run_9cb8795b3d44486fa3f269228db0c38d" || evs[0].StoredSession != "api_1796199035_9457ba7d" {
			t.Errorf("sessions %q %q", evs[0].Session, evs[0].StoredSession)
		}
		if c := evs[len(evs)-3].Data.(*wire.CompletePayload); c.Text != "tool read_file done" {
			t.Errorf("complete %+v", c)
		}
		if ts := evs[7].Data.(*wire.ToolStartPayload); ts.Name != "read_file" || ts.Context != "/srv/example.txt" {
			t.Errorf("tool start %+v", ts)
		}
	})
	t.Run("responses stream", func(t *testing.T) {
		t.Parallel()
		evs := normalizeCapture(t, "27_responses_stream_approve.sse.raw.txt", &apiserver.Normalizer{Gateway: "g"})
		deltas := 0
		for _, e := range evs {
			if e.Kind == wire.MessageDelta {
				deltas++
			}
		}
		if len(evs) != 14 || deltas != 5 || evs[0].Kind != "response.created" || evs[len(evs)-1].Kind != "response.completed" {
			t.Fatalf("kinds %v", kinds(evs))
		}
	})
}

func TestNormalizeNonJSON(t *testing.T) {
	t.Parallel()
	n := &apiserver.Normalizer{Gateway: "g", Run: "run_1"}
	ev, ok := n.Event(apiserver.SSEEvent{Type: "weird", Data: "not json"})
	if !ok || ev.Kind != "weird" || ev.Session != "run_1" || !json.Valid(ev.Payload) || !bytes.Contains(ev.Payload, []byte("not json")) {
		t.Fatalf("%+v %s", ev, ev.Payload)
	}
	if _, ok := n.Event(apiserver.SSEEvent{Data: "[DONE]"}); ok {
		t.Fatal("[DONE] became an event")
	}
}
