package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Binding answers to what was shown.
//
// An answer must reach the request whose command the user saw. Most
// gateways let it name that request: a server request by its own id, an
// approval.request event by its queue id. Hermes 0.18/0.19 and the API
// server's /v1/runs/{id}/approval take only an id-less answer and apply it
// to the session's (run's) oldest waiting approval. Herald sends an
// approving id-less answer only while it can prove that the request shown
// is that oldest one: it saw every approval of the session since it
// attached (or since the session was last known to wait on nothing), with
// no gap, reconnect, restart, refused arrival or answer of unknown outcome
// in between. The proof is kept per session (order, see order.go); once
// lost, the session's open id-less approvals and those arriving until it
// is regained are deny-only, with Request.Unbound saying why. Even with
// it, two approvals of a session waiting at once are deny-only until one
// is left and the gateway said which one a deny among them reached
// (order.go, "Two at once").
//
// After a write, "unknown" is a state: an answer whose link dropped after
// it was written is StateSentUnknown. It is never sent again blind: a
// request the gateway lists again by its id (so it still waits) is pending
// again; otherwise what the gateway says next (a cancel, the command's
// tool.complete, the turn's or run's end, the API server's
// approval.responded) settles it, and failing that it ends
// StateOutcomeUnknown at its deadline.

// Kinds of events about the session's consumer, and the API server's
// confirmation of an answer (apiserver.ApprovalResponded).
const (
	sessionFollowed   = source.EventFollowed
	sessionElsewhere  = source.EventElsewhere
	approvalResponded = "approval.responded"
)

// Why the proof of a session's answer order is lost.
const (
	unboundRestart         = "Herald restarted while this request waited, so it cannot prove that this is still the session's oldest waiting approval, and this gateway applies an answer to the oldest one (which Herald may never have shown)"
	unboundRestartID       = "Herald restarted while this request waited and the gateway has not listed it again since, so Herald cannot tell that an answer by its id would reach this command"
	unboundGap             = "events of this session may have been missed (the link dropped or Herald reconnected), so Herald cannot prove that this is the session's oldest waiting approval, and this gateway applies an answer to the oldest one"
	unboundElsewhere       = "another client took this session's events, so Herald cannot prove that this is the session's oldest waiting approval, and this gateway applies an answer to the oldest one"
	unboundMidTurn         = "Herald attached to this session in the middle of a turn, so an earlier approval may be waiting there unseen, and this gateway applies an answer to the session's oldest one"
	unboundElsewhereAnswer = "an approval of this session was settled without Herald's answer (in another client), so Herald cannot prove which approval the gateway holds first, and this gateway applies an answer to the oldest one"
	unboundUnknown         = "an earlier answer in this session was sent and its outcome is unknown, so Herald cannot prove which approval the gateway holds first, and this gateway applies an answer to the oldest one"
	unboundRefused         = "Herald refused earlier approvals from this session while its gateway was flooding, and this gateway applies answers in arrival order, so an approval could reach one of those instead"
)

// UnboundError is returned by Answer for an approving choice on a request
// whose Unbound is set.
type UnboundError struct{ Why string }

// Error says why and what to do.
func (e *UnboundError) Error() string {
	return "Herald will not approve this request: " + e.Why + "; deny it here, or review and answer it in Hermes itself"
}

// ErrNoRequestID is returned by Answer for a server request without an
// id: an answer could not name it.
var ErrNoRequestID = errors.New("this request came without an id, so an answer could not name it and nothing was sent; answer it in Hermes itself")

// idless reports whether the gateway may apply an answer to r to the
// session's oldest waiting approval: r has no id, or one the gateway has
// not shown that it honours (ByOrder).
func idless(r Request) bool {
	return r.Kind == KindApproval && r.Dialect == DialectEvent && (r.QueueID == "" || r.ByOrder)
}

// denyOnlyErr is the error for an approving choice on a request that
// accepts only deny, nil if it may be approved.
func denyOnlyErr(r Request) error {
	switch {
	case r.Kind.IsPrompt():
		return nil
	case r.Command == "":
		return ErrCommandUnseen
	case r.Truncated:
		return &TruncatedError{Size: r.CommandBytes, Kept: len(r.Command)}
	case r.Conflict != "":
		return &ConflictError{Why: r.Conflict}
	case Undecodable(r.Command):
		return &ConflictError{Why: UndecodableWhy}
	case r.Unbound != "":
		return &UnboundError{Why: r.Unbound}
	}
	return nil
}

// unbind makes r deny-only because the answer cannot be bound to it. The
// first reason stands, except that a lost proof replaces the rule of two
// at once (which lifts by itself; the loss does not).
func unbind(r *Request, why string) bool {
	if r.Unbound == why || r.Unbound != "" && r.Unbound != unboundCrowd {
		return false
	}
	r.Unbound = why
	if r.Offers(ChoiceDeny) {
		r.Choices = []string{ChoiceDeny}
	} else {
		r.Choices = []string{}
	}
	return true
}

// followedLocked applies the gateway client's report that Herald now
// receives a session's events (attached, or taken back from another
// client); Running says a turn was under way.
func (in *Inbox) followedLocked(ev wire.Event, now time.Time) {
	var p struct {
		Running bool `json:"running"`
	}
	_ = json.Unmarshal(ev.Payload, &p)
	ns := eventNS(Request{Gateway: ev.Gateway, Session: ev.Session, StoredSession: ev.StoredSession})
	if p.Running {
		in.loseOrderLocked(ns, unboundMidTurn, now)
		return
	}
	in.regainOrderLocked(ns)
}

// learnedLocked settles a request whose answer's outcome was unknown from
// what the gateway reported: ran is whether the command ran (approved),
// how names the evidence.
func (in *Inbox) learnedLocked(it *item, ran bool, how string, now time.Time) {
	approved := it.Outcome.Choice != ChoiceDeny
	e := ending{StateResolved, Outcome{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface, Detail: "confirmed after the link dropped: " + how}}
	if ran != approved {
		e = ending{StateCancelled, Outcome{Reason: CancelResolvedElsewhere, Detail: fmt.Sprintf("Herald's answer %q did not take effect (%s): it was settled elsewhere", it.Outcome.Choice, how)}}
	}
	in.toEnded(it, e, now)
}

// respondedLocked applies the API server's approval.responded, which a
// run's stream sends for every answer to the run's approval, Herald's
// and any other client's: for Herald's answer on its way it is kept
// (settleLocked), for one of unknown outcome it tells the outcome, for
// Herald's answer already confirmed it says nothing new; any other
// settled the run's oldest waiting approval without Herald.
func (in *Inbox) respondedLocked(ev wire.Event, now time.Time) {
	var p struct {
		Choice    string `json:"choice"`
		Resolved  *int   `json:"resolved"`
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(ev.Payload, &p) != nil || p.Choice == "" || (p.Resolved != nil && *p.Resolved < 1) {
		return
	}
	cands := in.sessionLocked(ev, func(it *item) bool {
		if it.crowded && it.State == StateSentUnknown && !it.awaitsResponded {
			// Herald's deny among approvals waiting at once, already
			// reported: the report names no approval, so it cannot
			// place it, and this one is another client's.
			return false
		}
		return (it.State == StateSentUnknown || it.State == StateAnswering || it.awaitsResponded) && (p.RequestID == "" || it.QueueID == "" || it.QueueID == p.RequestID)
	})
	if len(cands) == 0 {
		if p.RequestID == "" {
			n := 1
			if p.Resolved != nil {
				n = *p.Resolved
			}
			in.answeredElsewhereLocked(ev, n, VisibleLine(cut(p.Choice, maxChoiceBytes)), now)
		}
		return
	}
	switch it := cands[0]; it.State {
	case StateAnswering:
		// Reported before the answer's own reply: kept for it, in case
		// that reply is lost (settleLocked).
		if len(p.Choice) <= 16 {
			it.responded, it.respondedHow = p.Choice, ""
		}
	case StateSentUnknown:
		if it.crowded {
			it.awaitsResponded = false // Herald's own deny, reported
			return
		}
		in.learnedLocked(it, p.Choice != ChoiceDeny, "the API server reported the answer "+VisibleLine(p.Choice), now)
	default:
		it.awaitsResponded = false // Herald's own answer, reported after its reply
	}
}

// answeredElsewhereLocked applies an answer that another client gave in
// an id-less session (an API server's run): the gateway settled its n
// oldest waiting approvals. While Herald can prove the session's order,
// those are Herald's n oldest, which end so; otherwise Herald cannot tell
// which, and the order is lost.
func (in *Inbox) answeredElsewhereLocked(ev wire.Event, n int, choice string, now time.Time) {
	open := in.sessionLocked(ev, func(it *item) bool { return it.State.Live() && idless(it.Request) })
	if len(open) == 0 {
		// It settled an approval Herald never saw.
		in.loseOrderLocked(sessionNS(ev), unboundElsewhereAnswer, now)
		return
	}
	ns := eventNS(open[0].Request)
	_, proven := in.order.proven(ns)
	// Two or more waiting at once: the gateway may hold them in another
	// order than Herald shows (order.go), so which it settled is unknown.
	crowd := len(open) > n && len(open) >= 2
	if !proven || crowd || in.order.wasRefused(ns, open[0].Gateway) || len(open) < n || open[0].State != StatePending {
		in.loseOrderLocked(ns, unboundElsewhereAnswer, now)
		return
	}
	for _, it := range open[:n] {
		in.endLocked(it, ending{StateCancelled, Outcome{Reason: CancelResolvedElsewhere, Detail: "another client answered it (" + choice + ")"}}, now)
	}
}

// answeredLocked applies a request.cancel "resolved" that says who
// answered (wire.CancelPayload.Answered: the Herald bridge's poll names
// the client): this Herald, with its choice, settles an answer of
// unknown outcome as Herald's own (or, still answering, keeps the choice
// for its result, as approval.responded does); another client ends the
// request as settled elsewhere, Herald's answer not taken. It reports
// whether it applied.
func (in *Inbox) answeredLocked(it *item, cp *wire.CancelPayload, now time.Time) bool {
	if cp.Answered != wire.AnsweredHere && cp.Answered != wire.AnsweredElsewhere || len(cp.Choice) > 16 {
		return false
	}
	choice := VisibleLine(cp.Choice)
	switch {
	case cp.Answered == wire.AnsweredHere && it.State == StateAnswering:
		it.responded, it.respondedHow = cp.Choice, "the Herald bridge reported this Herald's answer "+choice
		return true
	case cp.Answered == wire.AnsweredHere && it.State == StateSentUnknown && cp.Choice == it.Outcome.Choice:
		in.learnedLocked(it, cp.Choice != ChoiceDeny, "the Herald bridge reported this Herald's answer "+choice, now)
		return true
	case cp.Answered == wire.AnsweredElsewhere && it.State == StateSentUnknown:
		in.toEnded(it, ending{StateCancelled, Outcome{Reason: CancelResolvedElsewhere,
			Detail: fmt.Sprintf("Herald's answer %q did not take effect: another client answered first (%s), as the Herald bridge reported", it.Outcome.Choice, choice)}}, now)
		return true
	}
	return false
}

// errUnconfirmedWrite is why an answer written to a request Herald does
// not know to be still waiting has an unknown outcome.
var errUnconfirmedWrite = errors.New("the answer was written, but Herald did not know whether the gateway still held this request (it was restored after a restart), and the gateway does not confirm such answers")

// answerIsUnknown reports whether a send error means the answer was
// written and may have taken effect.
func answerIsUnknown(err error) bool { return errors.Is(err, wire.ErrOutcomeUnknown) }
