package source

// Event kinds for an approval Herald can see but not answer: it waits on
// another surface of Hermes (its CLI, a chat on a messaging platform) and
// is answered there. A transport that sees such approvals (the Herald
// bridge on a Hermes without approval transports) reports them with these.
const (
	// EventWaitingElsewhere: an approval waits on another surface.
	EventWaitingElsewhere = "herald.approval.elsewhere"
	// EventWaitingElsewhereEnd: it ended there (Outcome says how).
	EventWaitingElsewhereEnd = "herald.approval.elsewhere_end"
)

// WaitingPayload is the payload of EventWaitingElsewhere and
// EventWaitingElsewhereEnd. Every string comes from Hermes: show it
// through approval.Visible like any other.
type WaitingPayload struct {
	// ID identifies the approval on its transport.
	ID          string `json:"id"`
	Command     string `json:"command"`
	Description string `json:"description,omitempty"`
	// Where names the surface for people ("Telegram", "the CLI").
	Where string `json:"where"`
	// Chat is the chat's name on a messaging platform; Title the
	// session's title.
	Chat  string `json:"chat,omitempty"`
	Title string `json:"title,omitempty"`
	// SessionKey is Hermes' session key; SessionID the dashboard's live
	// session id, for an approval of the dashboard's own sessions, which
	// Herald may also see on /api/ws (the same request).
	SessionKey string `json:"session_key,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	Dashboard  bool   `json:"dashboard,omitempty"`
	// Outcome is how it ended (End only): a choice, "timeout", ...
	Outcome string `json:"outcome,omitempty"`
}
