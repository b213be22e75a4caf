package wire

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Event kinds Herald knows by name. Any other kind is passed through with
// its raw payload and Data == nil; nothing is dropped.
const (
	GatewayReady    = "gateway.ready"
	MessageStart    = "message.start"
	MessageDelta    = "message.delta"
	MessageComplete = "message.complete"
	ToolStart       = "tool.start"
	ToolComplete    = "tool.complete"
	StatusUpdate    = "status.update"
	SessionInfo     = "session.info"
	SessionsChanged = "sessions.changed"
	ErrorEvent      = "error"
	ApprovalRequest = "approval.request"

	// ApprovalServerRequest is the server-request form of an approval
	// (a JSON-RPC request with an "srq-..." id); answer it with a response.
	ApprovalServerRequest = "approval"
	// RequestCancel withdraws an earlier server request.
	RequestCancel = "request.cancel"
	// ServerRequestUnknown is a server request Herald cannot serve; the
	// client answers it -32601 at once and still reports it.
	ServerRequestUnknown = "server_request.unknown"

	// CancelGatewayRestarted is the reason of the request.cancel the
	// client makes up for every open server request when the gateway's
	// replay epoch changes: the restarted gateway no longer holds them.
	CancelGatewayRestarted = "gateway_restarted"

	// Synthetic kinds produced by the client, not the gateway.

	// Resync tells consumers that events for a session may be missing
	// (replay truncated, epoch changed, or no replay on this gateway) and
	// that state should be refetched rather than trusted.
	Resync = "herald.resync"

	// SessionGone tells consumers that a followed session no longer
	// exists on its gateway (the gateway restarted and does not list it
	// live): Herald stopped following it, and views drop it.
	SessionGone = "herald.session_gone"
)

// Event is Herald's normalized event: one for every gateway event,
// server request or cancellation, whatever the gateway's dialect.
type Event struct {
	Gateway string `json:"gateway"`
	Session string `json:"session,omitempty"`
	// StoredSession is the durable session key (stored_session_id) when
	// the client knows it; it survives a cold resume that changes Session.
	StoredSession string          `json:"stored_session,omitempty"`
	Kind          string          `json:"kind"`
	Seq           uint64          `json:"seq,omitempty"`
	Payload       json.RawMessage `json:"payload,omitempty"`
	ReceivedAt    time.Time       `json:"received_at"`
	// RequestID is the server request id ("srq-...") for server requests
	// and cancellations; empty for plain events.
	RequestID string `json:"request_id,omitempty"`
	// Replayed is true for events recovered through session.events.since.
	Replayed bool `json:"replayed,omitempty"`
	// Epoch is the gateway's replay epoch (gateway.ready's replay_epoch)
	// on the connection that delivered the event; empty where the gateway
	// has none. Ids such as srq ids are unique only within one epoch.
	Epoch string `json:"epoch,omitempty"`
	// Data holds the typed payload for known kinds (one of the *Payload
	// types below); nil for unknown kinds or an undecodable payload.
	Data any `json:"-"`
}

// Usage is token accounting as Hermes reports it.
type Usage struct {
	Model     string `json:"model,omitempty"`
	Input     int64  `json:"input"`
	Output    int64  `json:"output"`
	Reasoning int64  `json:"reasoning"`
	Total     int64  `json:"total"`
	Calls     int64  `json:"calls"`
	Subagents int64  `json:"active_subagents"`
}

// DeltaPayload is message.delta.
type DeltaPayload struct {
	Text string `json:"text"`
}

// CompletePayload is message.complete.
type CompletePayload struct {
	Text   string `json:"text"`
	Status string `json:"status"` // complete, interrupted, error, ...
	Usage  *Usage `json:"usage,omitempty"`
}

// ToolStartPayload is tool.start.
type ToolStartPayload struct {
	ToolID  string `json:"tool_id"`
	Name    string `json:"name"`
	Context string `json:"context"`
}

// ToolCompletePayload is tool.complete.
type ToolCompletePayload struct {
	ToolID   string          `json:"tool_id"`
	Name     string          `json:"name"`
	Args     json.RawMessage `json:"args,omitempty"`
	Duration float64         `json:"duration_s"`
	Result   json.RawMessage `json:"result,omitempty"`
}

// StatusPayload is status.update.
type StatusPayload struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// SessionInfoPayload is session.info (only the fields Herald shows).
type SessionInfoPayload struct {
	Model        string `json:"model"`
	Provider     string `json:"provider"`
	Running      bool   `json:"running"`
	Title        string `json:"title"`
	Cwd          string `json:"cwd"`
	Version      string `json:"version"`
	ApprovalMode string `json:"approval_mode"`
	Yolo         bool   `json:"yolo"`
	Usage        *Usage `json:"usage,omitempty"`
}

// ErrorPayload is the error event.
type ErrorPayload struct {
	Message string `json:"message"`
}

// ApprovalPayload is an approval request, in either form. For the event
// form RequestID is usually empty (0.18.2 answers FIFO per session).
type ApprovalPayload struct {
	RequestID      string   `json:"request_id,omitempty"`
	SessionID      string   `json:"session_id,omitempty"`
	Command        string   `json:"command"`
	Description    string   `json:"description"`
	PatternKey     string   `json:"pattern_key,omitempty"`
	PatternKeys    []string `json:"pattern_keys,omitempty"`
	AllowPermanent *bool    `json:"allow_permanent,omitempty"`
	Choices        []string `json:"choices,omitempty"`
	// ApprovalID mirrors RequestID on newer gateways.
	ApprovalID string `json:"approval_id,omitempty"`
	// ExpiresAt is the gateway's monotonic clock reading at which it
	// stops waiting: comparable only with other readings of the same
	// gateway process, never with wall time.
	ExpiresAt    float64 `json:"expires_at,omitempty"`
	AllowSession *bool   `json:"allow_session,omitempty"`
	ToolName     string  `json:"tool_name,omitempty"`
	// AnswerByOrder is set by Herald's client (never a gateway's field):
	// the answer endpoint has not shown that it honours RequestID, so it
	// may apply an answer to the session's oldest waiting approval (an
	// id on an event is not proof that the endpoint uses it,
	// hermes-desktop#904). The inbox then binds an approving answer by
	// the oldest-first proof, and still sends the id.
	AnswerByOrder bool `json:"answer_by_order,omitempty"`
	// Timestamp is the gateway's wall clock (Unix seconds) when it
	// asked; the API server's events carry it. Raw: one that is not a
	// number is ignored (AskedAt), never a reason to drop the approval.
	Timestamp json.RawMessage `json:"timestamp,omitempty"`
}

// AskedAt is Timestamp as Unix seconds, 0 when it is absent or not a
// finite number.
func (p ApprovalPayload) AskedAt() float64 {
	var f float64
	if len(p.Timestamp) == 0 || json.Unmarshal(p.Timestamp, &f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// CancelPayload is request.cancel.
type CancelPayload struct {
	ID     string `json:"id"`
	Method string `json:"method,omitempty"`
	// Reason is timeout, interrupted, shutdown, resolved or session_closed
	// (or free text from the gateway).
	Reason string `json:"reason,omitempty"`
	// Answered, when the server says who settled a resolved request (the
	// Herald bridge's poll names the client that answered): AnsweredHere
	// (this Herald's own answer, with Choice) or AnsweredElsewhere. Empty:
	// not said. Only a transport sets them, on the event's Data: they are
	// never read from JSON, so a gateway's own request.cancel cannot claim
	// an answer was Herald's.
	Answered string `json:"-"`
	Choice   string `json:"-"`
}

// CancelPayload.Answered values.
const (
	AnsweredHere      = "here"
	AnsweredElsewhere = "elsewhere"
)

// ResyncPayload explains a Resync event.
type ResyncPayload struct {
	// Reason is epoch, truncated, no-replay, new-runtime, resume-failed or
	// replay-failed; overflow (events past a queue's bound were dropped)
	// or unreadable-frame (a frame of the session could not be read).
	Reason string `json:"reason"`
}

// typedPayload returns a new value to decode a kind's payload into.
func typedPayload(kind string) any {
	switch kind {
	case MessageDelta:
		return &DeltaPayload{}
	case MessageComplete:
		return &CompletePayload{}
	case ToolStart:
		return &ToolStartPayload{}
	case ToolComplete:
		return &ToolCompletePayload{}
	case StatusUpdate:
		return &StatusPayload{}
	case SessionInfo:
		return &SessionInfoPayload{}
	case ErrorEvent:
		return &ErrorPayload{}
	case ApprovalRequest, ApprovalServerRequest:
		return &ApprovalPayload{}
	case RequestCancel:
		return &CancelPayload{}
	case Resync:
		return &ResyncPayload{}
	case Refused:
		return &RefusedPayload{}
	case NotificationShow, NotificationLegacy:
		return &NotificationPayload{}
	case NotificationClear:
		return &NotificationClearPayload{}
	case ClarifyRequest, ClarifyServerRequest:
		return &ClarifyPayload{}
	case SudoRequest, SudoServerRequest:
		return &SudoPayload{}
	case SecretRequest, SecretServerRequest:
		return &SecretPayload{}
	case ClarifyExpire, SudoExpire, SecretExpire:
		return &PromptExpirePayload{}
	}
	return nil
}

// DecodeData fills e.Data from e.Payload for known kinds. A payload that does
// not decode leaves Data nil and returns the error; the event itself stays
// usable through Payload.
func (e *Event) DecodeData() error {
	v := typedPayload(e.Kind)
	if v == nil || len(e.Payload) == 0 {
		e.Data = v
		return nil
	}
	if err := json.Unmarshal(e.Payload, v); err != nil {
		e.Data = nil
		return fmt.Errorf("decode %s payload: %w", e.Kind, err)
	}
	e.Data = v
	return nil
}

// DecodeDataFrom fills e.Data from raw, the JSON of e.Data as another
// Herald process marshalled it (the control socket's watch stream): a
// transport may normalise Data apart from Payload (an API server's
// events), so Data travels on its own. Kinds without a typed payload
// here leave Data nil.
func (e *Event) DecodeDataFrom(raw json.RawMessage) error {
	v := typedPayload(e.Kind)
	if v == nil || len(raw) == 0 {
		e.Data = v
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		e.Data = nil
		return fmt.Errorf("decode %s data: %w", e.Kind, err)
	}
	e.Data = v
	return nil
}

// Approval returns the approval payload of an approval event.
func (e *Event) Approval() (*ApprovalPayload, bool) {
	a, ok := e.Data.(*ApprovalPayload)
	return a, ok
}

// IsApproval reports whether the event asks the user for consent.
func (e *Event) IsApproval() bool {
	return e.Kind == ApprovalRequest || e.Kind == ApprovalServerRequest
}
