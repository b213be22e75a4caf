// Package approval is Herald's approval inbox: one "needs you" model for
// everything that blocks a Hermes run on a person. It turns the approval
// requests and the clarify, sudo and secret prompts that Hermes gateways
// send (wire events of either dialect) into Requests with a Kind and an
// explicit life cycle, lets a user surface answer each one exactly once
// (Answer by choice, AnswerText for text, passwords and secrets), and keeps
// a durable audit log of every arrival and state change that never holds a
// password or secret value.
//
// A Request's Key names one request of one gateway for good, across
// restarts too: Herald's start number is in every key it makes up or
// builds from a gateway's id (see restart.go), and an arrival that
// carries the id of a request restored from the log is matched to it by
// id and command, never by key alone (see conflict.go): the same command
// is that request again; another command ends the restored one as
// superseded and arrives deny-only under its own key. An answer thus
// always goes by the id of the request it was given on, for the command
// shown with it.
//
// The inbox never answers by itself: the only path that sends a choice to a
// gateway is Inbox.Answer, called by a user surface for a request that is
// still pending. A timeout, an interruption or a withdrawal is recorded as
// what it is, never as a deny.
package approval

import (
	"fmt"
	"slices"
	"time"

	"github.com/herald-desktop/herald/backend/source"
)

// Choices a gateway may offer, in the order Hermes lists them (the one
// list is backend/source's).
const (
	ChoiceOnce    = source.ChoiceOnce
	ChoiceSession = source.ChoiceSession
	ChoiceAlways  = source.ChoiceAlways
	ChoiceDeny    = source.ChoiceDeny
)

var knownChoices = source.Choices()

// Dialect is how a gateway asked, which decides how the answer is sent.
type Dialect string

const (
	// DialectEvent is the approval.request event, answered with the
	// approval.respond method. Hermes 0.18.2 sends it without an id and
	// resolves answers in arrival order per session.
	DialectEvent Dialect = "event"
	// DialectServerRequest is the "approval" JSON-RPC server request
	// ("srq-..." id), answered with a response frame.
	DialectServerRequest Dialect = "server-request"
)

// CancelReason says why a request was cancelled.
type CancelReason string

const (
	// CancelResolvedElsewhere: another client or surface answered it, or
	// the gateway had nothing pending any more when Herald answered.
	CancelResolvedElsewhere CancelReason = "resolved_elsewhere"
	// CancelRequestCancel: the gateway withdrew it for another reason
	// (shown in Outcome.Detail), e.g. it was gone after a reconnect.
	CancelRequestCancel CancelReason = "request_cancel"
	// CancelInterrupted: the agent's turn was interrupted.
	CancelInterrupted CancelReason = "interrupted"
	// CancelSessionClosed: the session closed or the gateway shut down.
	CancelSessionClosed CancelReason = "session_closed"
	// CancelDismissed: the user dismissed an Uncertain request that they
	// believe is no longer waiting; nothing was sent.
	CancelDismissed CancelReason = "dismissed"
	// CancelSuperseded: restored after a restart, its id now names
	// another command at the gateway, so Herald no longer answers it
	// (the gateway may still wait for it; Outcome.Detail says so).
	CancelSuperseded CancelReason = "superseded"
)

// Outcome describes the latest transition. While answering it names the
// answer in flight; in a final state it is final.
type Outcome struct {
	Choice  string       `json:"choice,omitempty"`  // the choice sent or confirmed
	Surface string       `json:"surface,omitempty"` // the surface that answered or dismissed
	At      time.Time    `json:"at"`                // when the state was entered
	Reason  CancelReason `json:"reason,omitempty"`  // cancelled only
	Detail  string       `json:"detail,omitempty"`  // what the gateway reported, for people
	Error   string       `json:"error,omitempty"`   // failed only
}

// Request is one approval request as Herald tracks it.
type Request struct {
	// Key identifies the request: gateway + srq id for server requests,
	// gateway + queue id for events that carry one, and otherwise gateway
	// + stored-or-live session + a per-session arrival number.
	Key string `json:"key"`
	// Kind is what the gateway asks for: a command approval, or a
	// clarify answer, sudo password or secret value (see prompt.go).
	Kind          Kind   `json:"kind"`
	Gateway       string `json:"gateway"`                  // the gateway's name, as in wire.Event
	Session       string `json:"session"`                  // live session id, used to answer the event form
	StoredSession string `json:"stored_session,omitempty"` // durable session key, when known
	Run           string `json:"run,omitempty"`            // API-server run id (not used by the WebSocket dialects)
	RequestID     string `json:"request_id,omitempty"`     // srq id of the server-request form
	QueueID       string `json:"queue_id,omitempty"`       // the gateway's approval-queue id, when given
	// ByOrder: the gateway may apply an answer to the session's oldest
	// waiting approval whatever QueueID says (its answer endpoint has not
	// shown that it honours the id: wire.ApprovalPayload.AnswerByOrder).
	// An approving answer is then bound by the oldest-first proof, like
	// an id-less one, and still names QueueID.
	ByOrder     bool     `json:"by_order,omitempty"`
	Command     string   `json:"command"`                // as sent; see DisplayCommand
	Description string   `json:"description,omitempty"`  // why the gateway asks, for people
	PatternKeys []string `json:"pattern_keys,omitempty"` // the dangerous patterns matched
	// Choices are exactly the answers the gateway offers: approval
	// choices, or a clarify question's choices (free text is accepted
	// too); none for sudo and secret.
	Choices []string `json:"choices"`
	// Question is what a clarify prompt asks.
	Question string `json:"question,omitempty"`
	// Prompt and EnvVar say what a secret prompt wants: its text and the
	// environment variable the value is stored as.
	Prompt string `json:"prompt,omitempty"`
	EnvVar string `json:"env_var,omitempty"`
	// QuestionID is the clarify question's qid (server-request form);
	// Questions is how many questions its request asks (each is its own
	// Request, answered with clarify.lock when there are several).
	QuestionID string    `json:"question_id,omitempty"`
	Questions  int       `json:"questions,omitempty"`
	ReceivedAt time.Time `json:"received_at"` // when Herald first received it
	// ExpiresAt is when the gateway asked plus its configured timeout:
	// ReceivedAt, or the gateway's own timestamp when Herald got the
	// request late (see askedAt). (The gateway's own expires_at reads its
	// monotonic clock, not wall time.)
	ExpiresAt time.Time `json:"expires_at"`
	Dialect   Dialect   `json:"dialect"` // how it is answered
	State     State     `json:"state"`   // where it is in its life cycle
	// Uncertain means Herald cannot know whether the gateway still waits
	// (events may have been missed across a reconnect). The request stays
	// answerable; for the 0.18.2 dialect an answer goes to whatever the
	// gateway holds first for the session, so surfaces should say so, and
	// may Dismiss the request instead.
	Uncertain bool    `json:"uncertain,omitempty"`
	Outcome   Outcome `json:"outcome"` // the latest transition
	// LastError is why the last answer could not be sent; the request is
	// pending again and can be answered again.
	LastError string `json:"last_error,omitempty"`
	// Truncated means the gateway sent a command larger than Herald keeps
	// (Options.MaxCommandBytes): Command holds only its beginning and
	// CommandBytes the size sent. Herald does not approve what it cannot
	// show, so only deny is accepted (see ErrTruncated).
	Truncated    bool `json:"truncated,omitempty"`
	CommandBytes int  `json:"command_bytes,omitempty"`
	// Conflict, when set, says why Herald cannot tell which command an
	// approval would run: the gateway sent a different command under the
	// same id, or refused arrivals broke the session's answer order. Only
	// deny is accepted (see ConflictError).
	Conflict string `json:"conflict,omitempty"`
	// Epoch is the gateway's replay epoch when the request arrived; a
	// request re-listed under a new epoch is a new request.
	Epoch string `json:"epoch,omitempty"`
	// Unbound, when set, says why Herald cannot bind an approval to this
	// request: the gateway takes only an id-less answer, which it applies
	// to the session's oldest waiting approval, and Herald cannot prove
	// that this is it (it did not see the session without a gap, a
	// reconnect or a restart, or another approval of the session waits
	// with it, which the gateway may hold first: see order.go, "Two at
	// once"). Choices are then only deny.
	Unbound string `json:"unbound,omitempty"`
	// Fields are what an approval that carries no command asks, as the
	// gateway sent it (every field of its payload but ids and routing;
	// see fields.go). Only deny is accepted for it.
	Fields []Field `json:"fields,omitempty"`
	// SessionTitle is the title of the request's session when the request
	// arrived (Options.SessionTitle, cut to MaxTitleBytes, raw: surfaces
	// show it through SessionName and VisibleLine). It names the session
	// in the history once the session is gone, also after a restart.
	SessionTitle string `json:"session_title,omitempty"`
}

// DenyOnly says why only deny is accepted for this approval ("" when an
// approving answer may be sent): its command was not shown or not shown
// whole, its id is in conflict, or the answer cannot be bound to it.
func (r Request) DenyOnly() string {
	switch {
	case r.Kind.IsPrompt():
		return ""
	case r.Command == "":
		return ErrCommandUnseen.Error()
	case r.Truncated:
		return (&TruncatedError{Size: r.CommandBytes, Kept: len(r.Command)}).Error()
	case r.Conflict != "":
		return r.Conflict
	case Undecodable(r.Command):
		return UndecodableWhy
	case r.Unbound != "":
		return r.Unbound
	}
	return ""
}

// Offered are the choices a surface offers for r: the gateway's choices,
// or only deny when r accepts only deny (DenyOnly: its command was not
// shown, not shown whole or undecodable, its id is in conflict, or the
// answer cannot be bound), so no surface offers what Herald refuses.
func (r Request) Offered() []string {
	if r.DenyOnly() == "" {
		return r.Choices
	}
	if r.Offers(ChoiceDeny) {
		return []string{ChoiceDeny}
	}
	return []string{}
}

// OneClickApprovable reports whether a surface may offer approving this
// request with one click (a notification or tray action): it offers
// "once", its whole command is known, Hermes hid none of it and nothing
// makes it ambiguous.
func (r Request) OneClickApprovable() bool {
	return r.Offers(ChoiceOnce) && r.DenyOnly() == "" && r.Hidden() == ""
}

// Hidden is HiddenText of the command: what Hermes masked in it before
// Herald saw it ("" when nothing). Surfaces show it with the command, offer
// no one-click approval, and an approving answer needs Confirmed.Hidden.
func (r Request) Hidden() string { return HiddenText(r.Command) }

// DisplayCommand is the command exactly as the gateway sent it, with
// controls, escape sequences and invisible characters shown as markers
// (see Visible). Surfaces where the user decides (approval sheet,
// terminal, window) show this, never a form masked by Herald: masking
// could hide code. Hermes itself may have masked parts of it (see
// Hidden): then it is not what runs, and surfaces say so.
func (r Request) DisplayCommand() string { return VisibleCommand(r.Command) }

// MaskedCommand is DisplayCommand with obvious secrets masked (see Redact,
// which never masks text holding shell code), for display-only contexts
// that others may see: notifications, the tray, logs.
func (r Request) MaskedCommand() string { return VisibleCommand(Redact(r.Command)) }

// DisplayDescription is the gateway's description, shown as Visible.
func (r Request) DisplayDescription() string { return Visible(r.Description) }

// CommandFirstLine is the command's first line, shown as VisibleLine, with
// how many more lines there are; confirmations echo it so the user sees
// which command an answer went to.
func (r Request) CommandFirstLine() string { return FirstLine(r.Command) }

// Offers reports whether choice is one of the request's choices.
func (r Request) Offers(choice string) bool { return slices.Contains(r.Choices, choice) }

func (r Request) clone() Request {
	r.PatternKeys = append([]string(nil), r.PatternKeys...)
	r.Choices = append([]string(nil), r.Choices...)
	r.Fields = append([]Field(nil), r.Fields...)
	return r
}

// AnsweredError is returned by Answer and Dismiss for a request that an
// answer already reached (or is on its way to) the gateway.
type AnsweredError struct {
	Choice, Surface string    // the first answer
	At              time.Time // when it was given
	// InFlight is true while the first answer is still being sent.
	InFlight bool
	// Unknown is true when the first answer was sent and its outcome is
	// unknown (StateSentUnknown or StateOutcomeUnknown).
	Unknown bool
	// Crowded is true when that answer was a deny the gateway applied
	// while two approvals of the session waited at once, and it has not
	// said which one it reached.
	Crowded bool
}

// Error says who answered and what to do.
func (e *AnsweredError) Error() string {
	if e.Crowded {
		return fmt.Sprintf("a deny (from %s at %s) was already sent and applied, but two approvals of this session waited at once, and Hermes has not yet said which one it reached; nothing more was sent", VisibleLine(e.Surface), e.At.Format("15:04:05"))
	}
	if e.Unknown {
		return fmt.Sprintf("an answer (%q from %s at %s) was already sent and the link dropped before the gateway confirmed it, so its outcome is unknown; nothing more was sent, since a second answer could reach another request", e.Choice, e.Surface, e.At.Format("15:04:05"))
	}
	if e.InFlight {
		return fmt.Sprintf("this request is already being answered (%q from %s); wait for the gateway to confirm it", e.Choice, VisibleLine(e.Surface))
	}
	return fmt.Sprintf("this request was already answered: %q from %s at %s; nothing more was sent", e.Choice, VisibleLine(e.Surface), e.At.Format("15:04:05"))
}

// EndedError is returned by Answer and Dismiss for a request that is no
// longer waiting, and by Answer when the gateway turned out to have nothing
// pending any more.
type EndedError struct {
	Kind    Kind    // the request's kind ("" reads as approval)
	State   State   // the final state
	Outcome Outcome // how it ended
	// Sent is true when Herald's answer was sent but had no effect.
	Sent bool
	// Cause is the send error, if the send failed after the deadline.
	Cause error
}

// Error says how the request ended and whether anything was sent; the
// gateway's words in it are shown as VisibleLine.
func (e *EndedError) Error() string {
	what := "this request is no longer waiting"
	switch {
	case e.State == StateExpired && e.Kind.IsPrompt():
		what = "this question timed out, so the agent no longer waits for your answer and went on without it"
	case e.State == StateExpired:
		what = "this request timed out, so the gateway no longer waits for it and did not run the command; ask the agent again if you still want it"
	case e.State == StateFailed:
		what = fmt.Sprintf("Herald cannot answer this request (%s); answer it in Hermes itself", VisibleLine(e.Outcome.Error))
	case e.Outcome.Reason == CancelResolvedElsewhere:
		what = "this request is no longer waiting: it was already settled elsewhere (another client answered it, or it timed out or was interrupted there)"
	case e.Outcome.Reason == CancelInterrupted:
		what = "the agent's turn was interrupted, so this request is no longer waiting"
	case e.Outcome.Reason == CancelSessionClosed:
		what = "the session closed, so this request is no longer waiting"
	case e.Outcome.Reason == CancelDismissed:
		what = fmt.Sprintf("this request was dismissed from %s", VisibleLine(e.Outcome.Surface))
	case e.Outcome.Reason == CancelSuperseded:
		what = fmt.Sprintf("Herald no longer answers this request (%s)", VisibleLine(e.Outcome.Detail))
	case e.Outcome.Reason == CancelRequestCancel:
		what = fmt.Sprintf("the gateway withdrew this request (%s)", VisibleLine(e.Outcome.Detail))
	}
	if e.Sent {
		return what + "; your answer had no effect"
	}
	return what + "; nothing was sent"
}

// Unwrap returns Cause.
func (e *EndedError) Unwrap() error { return e.Cause }

// UnknownOutcomeError is returned by Answer when the answer was written to
// the gateway and the link dropped before it confirmed it: the request is
// in StateSentUnknown, and no retry is invited.
type UnknownOutcomeError struct {
	Gateway, Choice string
	// Kind is the request's kind: a password or secret is named, never
	// quoted ("" reads as an approval).
	Kind Kind
	Err  error // from the Answerer; its text is scrubbed in Error
}

// Error says what is known, and that nothing more will be sent.
func (e *UnknownOutcomeError) Error() string {
	what := fmt.Sprintf("your answer %q", VisibleLine(e.Choice))
	switch e.Kind {
	case KindSudo:
		what = "your password"
	case KindSecret:
		what = "your secret"
	}
	return fmt.Sprintf("%s was sent to gateway %s, but the link dropped before the gateway confirmed it, so whether it took effect is unknown. Herald will not send it again: it shows the outcome once the gateway reports it (check the session in Hermes if it matters now)", what, VisibleLine(e.Gateway))
}

// Unwrap returns Err.
func (e *UnknownOutcomeError) Unwrap() error { return e.Err }

// SendError is returned by Answer when the answer was not sent (nothing
// reached the gateway). The request is pending again and the user can
// retry.
type SendError struct {
	Gateway, Choice string // where the answer was going, and what it was
	Err             error  // from the Answerer; its text is scrubbed in Error
}

// Error says what failed, without credentials, and that a retry is
// possible. The gateway's name and error text are shown as VisibleLine.
func (e *SendError) Error() string {
	return fmt.Sprintf("sending %q to gateway %s failed: %s; the request is still pending, try again", e.Choice, VisibleLine(e.Gateway), VisibleLine(scrub(e.Err.Error())))
}

// Unwrap returns Err.
func (e *SendError) Unwrap() error { return e.Err }
