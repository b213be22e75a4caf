package apiserver

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Event kinds of the API server that the wire package has no name for.
// They keep the server's own names.
const (
	// RunCompleted, RunFailed, RunCancelled and RunInterrupted end a run
	// (wire's run ends); Data is a *RunOutcomePayload.
	RunCompleted   = wire.RunCompleted
	RunFailed      = wire.RunFailed
	RunCancelled   = wire.RunCancelled
	RunInterrupted = wire.RunInterrupted
	// ApprovalResponded confirms an approval answer; Data is an
	// *ApprovalRespondedPayload.
	ApprovalResponded = "approval.responded"

	// RunStatusChanged is synthetic (made by Herald, not the server): the
	// polled run status changed while no live stream was available. Data
	// is a *RunStatus.
	RunStatusChanged = wire.RunStatusChanged
)

// RunOutcomePayload is the Data of run.completed, run.failed,
// run.cancelled and run.interrupted.
type RunOutcomePayload struct {
	// Status is "completed", "failed", "cancelled" or "interrupted".
	Status string `json:"status"`
	// Output is the agent's final answer (completed runs).
	Output string `json:"output,omitempty"`
	// Error says why a run failed.
	Error string `json:"error,omitempty"`
	// Usage is the run's token accounting, when reported.
	Usage *Usage `json:"usage,omitempty"`
	// Synthesized is set when Herald built the event from the polled run
	// status because the live stream was lost.
	Synthesized bool `json:"synthesized,omitempty"`
}

// Outcome is the run's status and its answer, or why it failed
// (wire.RunOutcome).
func (p *RunOutcomePayload) Outcome() (status, text string) {
	if p.Output != "" {
		return p.Status, p.Output
	}
	return p.Status, p.Error
}

// ApprovalRespondedPayload is the Data of approval.responded.
type ApprovalRespondedPayload struct {
	// Choice is the answer (once, session, always, deny).
	Choice string `json:"choice"`
	// Resolved is how many pending approvals the answer resolved.
	Resolved int `json:"resolved"`
	// RequestID names the approval answered, when the server gave one.
	RequestID string `json:"request_id,omitempty"`
	// Synthesized is set when Herald built the event from the answer to
	// its own POST because no live stream was available to confirm it.
	Synthesized bool `json:"synthesized,omitempty"`
}

// Usage is token accounting as the API server reports it (runs use
// input/output tokens, chat completions prompt/completion tokens).
type Usage struct {
	InputTokens      int64 `json:"input_tokens,omitempty"`      // runs, responses
	OutputTokens     int64 `json:"output_tokens,omitempty"`     // runs, responses
	TotalTokens      int64 `json:"total_tokens,omitempty"`      // all
	PromptTokens     int64 `json:"prompt_tokens,omitempty"`     // chat completions
	CompletionTokens int64 `json:"completion_tokens,omitempty"` // chat completions
}

// wireUsage converts to the wire model's usage.
func (u *Usage) wireUsage() *wire.Usage {
	if u == nil {
		return nil
	}
	in, out := u.InputTokens, u.OutputTokens
	if in == 0 {
		in = u.PromptTokens
	}
	if out == 0 {
		out = u.CompletionTokens
	}
	return &wire.Usage{Input: in, Output: out, Total: u.TotalTokens}
}

// kindAliases maps API-server event names onto wire kinds where they mean
// the same thing. Names not listed keep their own name.
var kindAliases = map[string]string{
	"message.delta":              wire.MessageDelta,
	"assistant.delta":            wire.MessageDelta,
	"response.output_text.delta": wire.MessageDelta,
	"message.started":            wire.MessageStart,
	"message.start":              wire.MessageStart,
	"assistant.completed":        wire.MessageComplete,
	"message.complete":           wire.MessageComplete,
	"message.completed":          wire.MessageComplete,
	"tool.started":               wire.ToolStart,
	"tool.start":                 wire.ToolStart,
	"tool.completed":             wire.ToolComplete,
	"tool.complete":              wire.ToolComplete,
	"approval.request":           wire.ApprovalRequest,
	"error":                      wire.ErrorEvent,
}

// Normalizer turns the API server's server-sent events into wire.Events.
// It understands the /v1/runs event stream (event name inside the JSON),
// chat-completion streams (chat.completion.chunk data plus "event:" lines
// such as hermes.tool.progress and approval.request), session chat streams
// and Responses API streams. It keeps per-stream context (the run or
// completion id), so use one Normalizer per stream.
//
// Every input becomes an event: kinds Herald knows are mapped and get a
// typed Data; anything else keeps its own name with Data nil. The Payload
// is the server's JSON object, with the wire payload's field names added
// where they differ (text, name, context, tool_id, duration_s), so
// wire.Event.DecodeData still finds the main fields. Data is always set by
// the Normalizer and is the authoritative typed form.
type Normalizer struct {
	// Gateway names the API server in events.
	Gateway string
	// Run is the run (or chat completion) id; learned from the stream
	// when empty.
	Run string
	// Session is Hermes' conversation session id when known (chat streams
	// send it in X-Hermes-Session-Id); it becomes Event.StoredSession.
	Session string
	// Now stamps ReceivedAt (default time.Now).
	Now func() time.Time
	// AnswerByOrder, when set and true, marks approvals that carry a
	// request_id as answerable only by order (wire.ApprovalPayload's
	// AnswerByOrder): the server has not shown that its answer endpoint
	// honours the id.
	AnswerByOrder func() bool
}

// Event converts one server-sent event. ok is false only for stream
// terminators that carry no event ("data: [DONE]").
func (n *Normalizer) Event(se SSEEvent) (ev wire.Event, ok bool) {
	now := time.Now
	if n.Now != nil {
		now = n.Now
	}
	ev = wire.Event{Gateway: n.Gateway, ReceivedAt: now()}
	if bytes.Equal(bytes.TrimSpace([]byte(se.Data)), []byte("[DONE]")) {
		return wire.Event{}, false
	}
	ev.Seq = numericID(se.ID)

	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(se.Data), &obj); err != nil || obj == nil {
		name := se.Type
		if name == "" {
			name = "message"
		}
		ev.Kind = name
		ev.Session = n.Run
		ev.StoredSession = n.storedSession("")
		ev.Payload = mustJSON(map[string]string{"event": name, "data": se.Data})
		return ev, true
	}

	name := se.Type
	if name == "" {
		name = jsonString(obj["event"])
	}
	if name == "" {
		name = jsonString(obj["type"])
	}
	chunk := jsonString(obj["object"]) == "chat.completion.chunk"
	if name == "" && chunk {
		if id := jsonString(obj["id"]); id != "" && n.Run == "" {
			n.Run = id
		}
	}
	run := jsonString(obj["run_id"])
	if run == "" {
		run = n.Run
	} else if n.Run == "" {
		n.Run = run
	}
	if sid := jsonString(obj["session_id"]); sid != "" && n.Session == "" && sid != run {
		n.Session = sid
	}
	ev.Session = run
	ev.StoredSession = n.storedSession(run)
	if ev.Seq == 0 {
		ev.Seq = jsonUint(obj["seq"])
	}
	if _, has := obj["event"]; !has && name != "" {
		obj["event"] = mustJSON(name)
	}

	switch {
	case name == "" && chunk:
		n.chatChunk(&ev, obj)
	case name == "hermes.tool.progress":
		n.toolProgress(&ev, obj)
	default:
		kind := name
		if k, ok := kindAliases[name]; ok {
			kind = k
		}
		if kind == "" {
			kind = "message"
		}
		ev.Kind = kind
		n.typed(&ev, name, obj)
	}
	ev.Payload = mustJSON(obj)
	return ev, true
}

func (n *Normalizer) storedSession(run string) string {
	if n.Session != "" && n.Session != run {
		return n.Session
	}
	return ""
}

// typed fills Data (and the wire field names in obj) for known kinds.
func (n *Normalizer) typed(ev *wire.Event, name string, obj map[string]json.RawMessage) {
	switch ev.Kind {
	case wire.MessageDelta:
		text := jsonString(obj["delta"])
		if text == "" {
			text = jsonString(obj["text"])
		}
		setIfAbsent(obj, "text", text)
		ev.Data = &wire.DeltaPayload{Text: text}
	case wire.MessageStart:
		ev.Data = nil
	case wire.MessageComplete:
		text := jsonString(obj["content"])
		if text == "" {
			text = jsonString(obj["text"])
		}
		status := "complete"
		if b, ok := jsonBool(obj["interrupted"]); ok && b {
			status = "interrupted"
		}
		setIfAbsent(obj, "text", text)
		setIfAbsent(obj, "status", status)
		ev.Data = &wire.CompletePayload{Text: text, Status: status, Usage: decodeUsage(obj["usage"]).wireUsage()}
	case wire.ToolStart:
		name := firstString(obj, "name", "tool", "tool_name")
		ctx := firstString(obj, "context", "preview", "label")
		id := firstString(obj, "tool_id", "tool_call_id", "toolCallId")
		setIfAbsent(obj, "name", name)
		setIfAbsent(obj, "context", ctx)
		if id != "" {
			setIfAbsent(obj, "tool_id", id)
		}
		ev.Data = &wire.ToolStartPayload{ToolID: id, Name: name, Context: ctx}
	case wire.ToolComplete:
		name := firstString(obj, "name", "tool", "tool_name")
		id := firstString(obj, "tool_id", "tool_call_id", "toolCallId")
		dur := jsonFloat(obj["duration_s"])
		if dur == 0 {
			dur = jsonFloat(obj["duration"])
		}
		setIfAbsent(obj, "name", name)
		if id != "" {
			setIfAbsent(obj, "tool_id", id)
		}
		if _, has := obj["duration_s"]; !has {
			obj["duration_s"] = mustJSON(dur)
		}
		p := &wire.ToolCompletePayload{ToolID: id, Name: name, Duration: dur}
		if a := obj["args"]; len(a) > 0 && string(a) != "null" {
			p.Args = a
		}
		if r := obj["result"]; len(r) > 0 && string(r) != "null" {
			p.Result = r
		}
		ev.Data = p
	case wire.ApprovalRequest:
		var a wire.ApprovalPayload
		_ = json.Unmarshal(mustJSON(obj), &a)
		if a.RequestID == "" {
			a.RequestID = a.ApprovalID
		}
		// Answers go to /v1/runs/{run}/approval: the run is the session.
		a.SessionID = ev.Session
		if len(a.Choices) == 0 {
			a.Choices = source.Choices()
		}
		a.AnswerByOrder = false // Herald's to say, never the server's
		delete(obj, "answer_by_order")
		if a.RequestID != "" && n.AnswerByOrder != nil && n.AnswerByOrder() {
			a.AnswerByOrder = true
			obj["answer_by_order"] = mustJSON(true)
		}
		ev.RequestID = a.RequestID
		ev.Data = &a
	case wire.ErrorEvent:
		msg := firstString(obj, "message", "error")
		setIfAbsent(obj, "message", msg)
		ev.Data = &wire.ErrorPayload{Message: msg}
	case RunCompleted, RunFailed, RunCancelled, RunInterrupted:
		p := &RunOutcomePayload{
			Status: ev.Kind[len("run."):],
			Output: jsonString(obj["output"]),
			Error:  firstString(obj, "error", "message"),
			Usage:  decodeUsage(obj["usage"]),
		}
		if b, ok := jsonBool(obj["synthesized"]); ok {
			p.Synthesized = b
		}
		ev.Data = p
	case ApprovalResponded:
		p := &ApprovalRespondedPayload{
			Choice:    jsonString(obj["choice"]),
			Resolved:  int(jsonFloat(obj["resolved"])),
			RequestID: jsonString(obj["request_id"]),
		}
		if b, ok := jsonBool(obj["synthesized"]); ok {
			p.Synthesized = b
		}
		ev.RequestID = p.RequestID
		ev.Data = p
	}
}

// chatChunk maps an OpenAI chat.completion.chunk.
func (n *Normalizer) chatChunk(ev *wire.Event, obj map[string]json.RawMessage) {
	var c struct {
		Choices []struct {
			Delta struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	_ = json.Unmarshal(mustJSON(obj), &c)
	var role, content string
	var finish *string
	if len(c.Choices) > 0 {
		role, content, finish = c.Choices[0].Delta.Role, c.Choices[0].Delta.Content, c.Choices[0].FinishReason
	}
	switch {
	case finish != nil:
		status := "complete"
		if *finish != "stop" {
			status = *finish
		}
		ev.Kind = wire.MessageComplete
		setIfAbsent(obj, "text", content)
		setIfAbsent(obj, "status", status)
		ev.Data = &wire.CompletePayload{Text: content, Status: status, Usage: decodeUsage(obj["usage"]).wireUsage()}
	case content != "":
		ev.Kind = wire.MessageDelta
		setIfAbsent(obj, "text", content)
		ev.Data = &wire.DeltaPayload{Text: content}
	case role != "":
		ev.Kind = wire.MessageStart
	default:
		ev.Kind = "chat.completion.chunk"
	}
	obj["event"] = mustJSON("chat.completion.chunk")
}

// toolProgress maps hermes.tool.progress (chat streams) onto tool events.
func (n *Normalizer) toolProgress(ev *wire.Event, obj map[string]json.RawMessage) {
	switch jsonString(obj["status"]) {
	case "running", "started", "start":
		ev.Kind = wire.ToolStart
	case "completed", "complete", "done", "error", "failed":
		ev.Kind = wire.ToolComplete
	default:
		ev.Kind = "hermes.tool.progress"
		return
	}
	n.typed(ev, "hermes.tool.progress", obj)
}

// ChatStreamEvents reads a streaming chat-completion (or session chat, or
// Responses API) body and calls emit for each event, in order. Approval
// requests (event: approval.request) become wire.ApprovalRequest events
// whose Session is the run id to answer with RespondApproval. It returns
// nil at the end of the stream ("data: [DONE]" or EOF) and the read or
// size error otherwise. maxEventSize <= 0 means DefaultMaxEventSize.
func ChatStreamEvents(r io.Reader, n *Normalizer, maxEventSize int, emit func(wire.Event)) error {
	sr := NewSSEReader(r, maxEventSize)
	for {
		se, err := sr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if bytes.Equal(bytes.TrimSpace([]byte(se.Data)), []byte("[DONE]")) {
			return nil
		}
		if ev, ok := n.Event(se); ok {
			emit(ev)
		}
	}
}

func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage(`null`)
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n"))
}

func setIfAbsent(obj map[string]json.RawMessage, key, val string) {
	if _, has := obj[key]; !has {
		obj[key] = mustJSON(val)
	}
}

func jsonString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func jsonFloat(raw json.RawMessage) float64 {
	var f float64
	if len(raw) == 0 || json.Unmarshal(raw, &f) != nil {
		return 0
	}
	return f
}

func jsonBool(raw json.RawMessage) (bool, bool) {
	var b bool
	if len(raw) == 0 || json.Unmarshal(raw, &b) != nil {
		return false, false
	}
	return b, true
}

func jsonUint(raw json.RawMessage) uint64 {
	var u uint64
	if len(raw) == 0 || json.Unmarshal(raw, &u) != nil {
		return 0
	}
	return u
}

func firstString(obj map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		if s := jsonString(obj[k]); s != "" {
			return s
		}
	}
	return ""
}

func decodeUsage(raw json.RawMessage) *Usage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var u Usage
	if json.Unmarshal(raw, &u) != nil {
		return nil
	}
	return &u
}

// numericID parses an SSE id as a sequence number (0 if not numeric).
func numericID(id string) uint64 {
	u, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return 0
	}
	return u
}
