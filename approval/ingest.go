package approval

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// Ingest applies one gateway event. Call it for every event, in the order
// the gateway client reports them; kinds that do not concern approvals are
// ignored.
//
// Approval events create requests (a repeated key, e.g. one re-delivered
// after a reconnect, re-arms the existing request instead); request.cancel
// ends a server request; herald.resync marks the session's event-form
// requests Uncertain; and for the event form, which has no cancel, a
// "BLOCKED: Command timed out" or "denied" tool.complete and an
// interrupted message.complete end the session's request that Herald did
// not answer.
func (in *Inbox) Ingest(ev wire.Event) {
	switch {
	case ev.Kind == wire.ApprovalRequest, ev.Kind == wire.ApprovalServerRequest, ev.Kind == wire.RequestCancel, ev.Kind == wire.Resync, ev.Kind == wire.ToolComplete, ev.Kind == wire.MessageComplete:
	case ev.Kind == sessionFollowed, ev.Kind == sessionElsewhere, ev.Kind == approvalResponded, ev.Kind == approvalsListed, ev.Kind == wire.SessionGone:
	case ev.IsPrompt(), ev.IsPromptExpire(), ev.Kind == wire.Refused:
	case wire.IsRunEnd(ev.Kind):
	default:
		return
	}
	decodeErr := error(nil)
	if ev.Data == nil && len(ev.Payload) > 0 {
		decodeErr = ev.DecodeData()
	}
	in.do(func(now time.Time) {
		switch ev.Kind {
		case wire.ApprovalRequest, wire.ApprovalServerRequest:
			in.arriveLocked(ev, decodeErr, now)
		case wire.RequestCancel:
			in.cancelLocked(ev, now)
		case wire.ClarifyRequest, wire.SudoRequest, wire.SecretRequest, wire.ClarifyServerRequest, wire.SudoServerRequest, wire.SecretServerRequest:
			in.arrivePromptLocked(ev, decodeErr, now)
		case wire.ClarifyExpire, wire.SudoExpire, wire.SecretExpire:
			in.expirePromptLocked(ev, now)
		case wire.Resync:
			in.resyncLocked(ev, now)
		case wire.Refused:
			in.refusedLocked(ev, now)
		case wire.ToolComplete:
			in.toolCompleteLocked(ev, now)
		case wire.RunCompleted, wire.RunFailed, wire.RunCancelled, wire.RunInterrupted:
			in.runEndLocked(ev, now)
		case wire.MessageComplete:
			in.turnEndLocked(ev, now)
		case sessionFollowed:
			in.followedLocked(ev, now)
		case sessionElsewhere:
			in.loseOrderLocked(sessionNS(ev), unboundElsewhere, now)
		case approvalResponded:
			in.respondedLocked(ev, now)
		case approvalsListed:
			in.listedLocked(ev, now)
		case wire.SessionGone:
			in.runtimeGoneLocked(ev, now)
		}
	})
}

// arriveLocked takes in an approval: a new request, or one the inbox
// already holds delivered again (see knownByIDLocked).
func (in *Inbox) arriveLocked(ev wire.Event, decodeErr error, now time.Time) {
	a, ok := ev.Approval()
	if !ok {
		a = &wire.ApprovalPayload{}
	}
	r, tooLong := in.approvalFromLocked(ev, a, now)
	if r.Key != "" && in.knownByIDLocked(&r, ev, now) {
		return
	}
	if why, proven := in.order.proven(eventNS(r)); !proven && idless(r) {
		unbind(&r, why)
	}
	if offeredAgainAfterRestart(r) && in.adoptRestoredLocked(r, now) {
		return
	}
	if r.Key == "" {
		ns := eventNS(r)
		r.Key = in.evKey(ns)
		if in.order.wasRefused(ns, r.Gateway) {
			r.Conflict = unboundRefused
		}
	}
	if r.Conflict == "" && Undecodable(r.Command) {
		r.Conflict = UndecodableWhy
	}
	it := &item{Request: r}
	switch why := unanswerable(r, ok, decodeErr, tooLong); {
	case why != "":
		in.admitFailedLocked(it, why, now)
	default:
		if over := in.overLimitLocked(r.Gateway, now); over != "" {
			in.refuseLocked(r, over, now)
			return
		}
		in.admitLocked(it, now)
	}
	if it.Conflict != "" {
		in.flagSiblingsLocked(it, now)
	}
}

// approvalFromLocked reads an approval event into a request, within the
// inbox's bounds (tooLong says why it cannot be answered faithfully),
// keyed by the gateway's id when it gave one.
func (in *Inbox) approvalFromLocked(ev wire.Event, a *wire.ApprovalPayload, now time.Time) (r Request, tooLong string) {
	r = Request{
		Kind:          KindApproval,
		Gateway:       ev.Gateway,
		Session:       firstOf(ev.Session, a.SessionID),
		StoredSession: ev.StoredSession,
		QueueID:       firstOf(a.RequestID, a.ApprovalID),
		Command:       a.Command,
		Description:   a.Description,
		PatternKeys:   a.PatternKeys,
		Choices:       offered(a),
		ReceivedAt:    ev.ReceivedAt,
		Dialect:       DialectEvent,
		Epoch:         ev.Epoch,
	}
	r.ByOrder = a.AnswerByOrder && r.QueueID != ""
	if r.Command == "" {
		r.Fields = approvalFields(ev.Payload) // not a command: show what it asks
	}
	if ev.Kind == wire.ApprovalServerRequest {
		r.Dialect, r.RequestID = DialectServerRequest, ev.RequestID
		if r.QueueID == r.RequestID {
			r.QueueID = "" // the client fills in the srq id when the gateway sent none
		}
	}
	if len(r.PatternKeys) == 0 && a.PatternKey != "" {
		r.PatternKeys = []string{a.PatternKey}
	}
	if r.ReceivedAt.IsZero() {
		r.ReceivedAt = now
	}
	timeout := in.timeoutFor(r.Gateway)
	r.ExpiresAt = askedAt(a.AskedAt(), r.ReceivedAt, timeout).Add(timeout)
	tooLong = in.boundLocked(&r)
	in.titleLocked(&r)
	// A gateway-given id is the key only together with its session: the
	// same id in two sessions names two requests.
	switch {
	case r.Dialect == DialectServerRequest && r.RequestID != "":
		r.Key = in.srqKey(r.Gateway, r.Session+"/"+r.RequestID)
	case r.Dialect == DialectEvent && r.QueueID != "":
		r.Key = in.queueKey(r.Gateway, r.Session+"/"+r.QueueID)
	}
	return r, tooLong
}

// knownByIDLocked places an arrival the gateway named by id (r.Key is
// its base key). It returns true when the arrival is a request the inbox
// holds, delivered again (re-armed, or adopted by a restored one);
// otherwise r gets its own key and, when its id names another command
// too, its Conflict (see conflict.go).
func (in *Inbox) knownByIDLocked(r *Request, ev wire.Event, now time.Time) bool {
	reused, done := in.reusedIDLocked(*r, ev, now)
	if done {
		return true
	}
	var old *item
	var conflict bool
	if r.Key, old, conflict = in.placeLocked(*r, now); old != nil {
		in.rearmRequestLocked(old, ev, now)
		return true
	}
	r.Conflict = reused
	if conflict || in.idInOtherSessionLocked(*r) {
		r.Conflict = conflictText(*r)
	}
	return false
}

// offeredAgainAfterRestart reports whether r may be a request restored
// from the log that the gateway offers again, matched by session and
// command: one without an id of its own (the event form keeps the
// restored key), or a server request (its id came from the old
// connection, so the restored copy ends).
func offeredAgainAfterRestart(r Request) bool {
	return r.Key == "" || r.Dialect == DialectServerRequest
}

// unanswerable says why Herald cannot answer an arriving approval ("" when
// it can): ok is whether it carried a payload, decodeErr why that could
// not be read, tooLong what exceeded the inbox's bounds.
func unanswerable(r Request, ok bool, decodeErr error, tooLong string) string {
	switch {
	case !ok && decodeErr != nil:
		return fmt.Sprintf("its payload could not be read: %v", decodeErr)
	case !ok:
		return "it came without a payload"
	case tooLong != "":
		return tooLong
	case r.Session == "":
		return "it names no session"
	case len(r.Choices) == 0:
		return "it offers no choice Herald knows"
	}
	return ""
}

// rearmRequestLocked handles a request delivered again (the client offers
// open requests after a reconnect): the gateway says it still waits, so
// an open request is no longer uncertain. It is never duplicated.
func (in *Inbox) rearmRequestLocked(it *item, ev wire.Event, now time.Time) {
	switch {
	case it.State == StateSentUnknown && it.ByOrder:
		// It still waits, but an answer the gateway applies by order may
		// have settled another approval: what Herald's answer did stays
		// unknown.
		return
	case it.State == StateSentUnknown && it.Conflict == "":
		// Listed again under its own id: the gateway still waits, so the
		// answer did not reach it, and an answer by this id is bound.
		// (Not when the id names two requests: the answer may have
		// settled the other.)
		in.toPendingAgain(it, listedAgainError, "the gateway listed it again as waiting after the link dropped", now)
		return
	case it.State.Live() && (it.Uncertain || it.LastError != ""):
		it.Uncertain, it.LastError = false, ""
	case it.State == StateResolved && ev.Replayed && it.Outcome.Detail == "":
		it.Outcome.Detail = "the gateway offered this request again after Herald's answer was sent; the answer may not have reached it"
	default:
		return
	}
	in.emitLocked(ChangeUpdated, it, now)
}

// offered returns the choices the gateway offers, in its order.
func offered(a *wire.ApprovalPayload) []string {
	if a.Command == "" {
		// Nobody was shown what would run (a 0.18.2 approval sent to
		// another client before Herald followed, or one synthesized
		// after a lost stream): it can be denied, never approved.
		return []string{ChoiceDeny}
	}
	from := a.Choices
	if len(from) == 0 {
		from = knownChoices
	}
	var out []string
	for _, c := range from {
		switch {
		case c == ChoiceAlways && a.AllowPermanent != nil && !*a.AllowPermanent:
		case c == ChoiceSession && a.AllowSession != nil && !*a.AllowSession:
		case !slices.Contains(knownChoices, c) || slices.Contains(out, c):
		default:
			out = append(out, c)
		}
	}
	return out
}

// lateSlack is how much earlier than Herald received it a gateway may say
// it asked before Herald counts the request's time from the gateway's
// word: less is delivery and clock skew.
const lateSlack = 2 * time.Second

// askedAt is when the gateway asked: its own timestamp (Unix seconds; the
// API server's events carry one) when Herald got the request clearly
// late, as when it followed a run after the run asked, so the countdown
// is the gateway's; never earlier than a whole timeout ago (a clock far
// behind cannot expire it at once), never later than Herald got it.
// Without a timestamp, when Herald got it.
func askedAt(ts float64, received time.Time, timeout time.Duration) time.Time {
	if ts <= 0 {
		return received
	}
	asked := time.Unix(0, 0).Add(time.Duration(ts * float64(time.Second)))
	if received.Sub(asked) < lateSlack || received.Sub(asked) >= timeout {
		return received
	}
	return asked
}

func (in *Inbox) timeoutFor(gateway string) time.Duration {
	if in.timeout != nil {
		if d := in.timeout(gateway); d > 0 {
			return d
		}
	}
	return DefaultTimeout
}

// cancelLocked applies request.cancel to a server request.
func (in *Inbox) cancelLocked(ev wire.Event, now time.Time) {
	id := ev.RequestID
	cp, _ := ev.Data.(*wire.CancelPayload)
	if id == "" && cp != nil {
		id = cp.ID
	}
	if id == "" {
		return
	}
	targets := in.srqItemsLocked(ev.Gateway, id, ev.Epoch)
	if len(targets) == 0 {
		return
	}
	reason := ""
	if cp != nil {
		reason = cp.Reason
	}
	e := ending{StateCancelled, Outcome{Reason: CancelRequestCancel, Detail: firstOf(reason, "no reason given")}}
	switch reason {
	case "timeout":
		e.state, e.out.Reason = StateExpired, ""
	case "interrupted":
		e.out.Reason = CancelInterrupted
	case "resolved":
		e.out.Reason = CancelResolvedElsewhere
	case "session_closed", "shutdown":
		e.out.Reason = CancelSessionClosed
	case wire.CancelGatewayRestarted:
		e.out.Detail = "the gateway restarted (a new replay epoch), so it no longer waits for this request; anything it asks again is a new request"
	}
	for _, it := range targets {
		if cp != nil && reason == "resolved" && in.answeredLocked(it, cp, now) {
			continue
		}
		if it.State == StateSentUnknown && (reason == notPendingAfterReconnect || reason == "resolved") {
			// Settled while the link was down, by Herald's answer or
			// another client's: still unknown, said plainly, until the
			// gateway says how or the deadline passes.
			detail := listedGoneDetail
			if reason == "resolved" {
				detail = resolvedGoneDetail
			}
			in.goneUnknownLocked(it, detail, now)
			continue
		}
		in.endLocked(it, e, now)
	}
}

// notPendingAfterReconnect is the reason of the gateway client's
// synthetic request.cancel for a server request the gateway no longer
// lists as open after a reconnect.
const notPendingAfterReconnect = "not_pending_after_reconnect"

// resyncLocked marks the session's open event-form requests Uncertain:
// events may have been missed, and this form has no way to ask the gateway
// what is still pending. A new live session id is adopted for answering.
func (in *Inbox) resyncLocked(ev wire.Event, now time.Time) {
	in.loseOrderLocked(sessionNS(ev), unboundGap, now)
	for _, it := range in.sessionLocked(ev, func(it *item) bool { return it.State == StatePending }) {
		if it.Uncertain && (ev.Session == "" || it.Session == ev.Session) {
			continue
		}
		it.Uncertain = true
		if ev.Session != "" {
			it.Session = ev.Session
		}
		in.emitLocked(ChangeUpdated, it, now)
	}
}

// toolCompleteLocked applies the event form's tool.complete to the
// session's request it matches (its command; for a BLOCKED result
// without one, the oldest): what it says of that request, and of the
// session's answer order (see completionOf).
func (in *Inbox) toolCompleteLocked(ev wire.Event, now time.Time) {
	tc, ok := ev.Data.(*wire.ToolCompletePayload)
	if !ok {
		return
	}
	var args struct {
		Command string `json:"command"`
	}
	var res struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(tc.Args, &args)
	_ = json.Unmarshal(tc.Result, &res)
	blocked, denied := blockedEnding(res.Error)
	if denied && in.placeDenyLocked(ev, args.Command, now) {
		return
	}
	it := in.completedLocked(ev, args.Command, blocked != nil)
	if it == nil {
		return
	}
	it.toolSeen = true
	ran := blocked == nil
	switch completionOf(it, ran, denied) {
	case completionTells:
		// The command ran, or was denied: that is the answer's outcome,
		// provided this request was the one the id-less answer reached.
		if it.Unbound != "" && it.Unbound != unboundUnknown {
			// Answered (deny) while Herald could not prove it was the
			// session's oldest: the completion may be another request's
			// with the same command.
			in.goneUnknownLocked(it, goneDetail("a command like this one "+map[bool]string{true: "was denied", false: "ran"}[denied]+", but Herald cannot tell whether it was this request"), now)
			return
		}
		how := "the command ran (its tool.complete followed)"
		if denied {
			how = "the command was denied (its tool.complete said so)"
		}
		in.learnedLocked(it, ran, how, now)
	case completionOwn, completionSilent:
	case completionElsewhere:
		if blocked != nil {
			in.endLocked(it, *blocked, now)
		}
		if idless(it.Request) {
			in.loseOrderLocked(eventNS(it.Request), unboundElsewhereAnswer, now)
		}
	}
}

// completedLocked is the request of ev's session that a tool.complete
// for command matches: the oldest not yet matched with that command (or,
// truncated, its beginning), or for a BLOCKED result without a command
// (blocked) the oldest not yet matched; one that may still await its
// command's report (open, or answered by Herald) before one that ended
// otherwise.
func (in *Inbox) completedLocked(ev wire.Event, command string, blocked bool) *item {
	cands := in.sessionLocked(ev, func(it *item) bool { return !it.toolSeen })
	awaits := func(it *item) bool { return it.State.Live() || it.State == StateResolved }
	for _, first := range []bool{true, false} {
		for _, c := range cands {
			if command != "" && shownAs(c, command) && awaits(c) == first {
				return c
			}
		}
	}
	if !blocked || command != "" || len(cands) == 0 {
		return nil
	}
	if i := slices.IndexFunc(cands, awaits); i >= 0 {
		return cands[i]
	}
	return cands[0]
}

// shownAs reports whether the command a gateway reports may be the one
// Herald shows for it (which holds only the beginning of a truncated one).
func shownAs(it *item, command string) bool {
	return it.Command == command || it.Truncated && strings.HasPrefix(command, it.Command)
}

// completion is what a command's tool.complete says about the request it
// matched, and so about its session's answer order.
type completion uint8

const (
	// completionTells: Herald's answer has an unknown outcome, and the
	// command ran or was denied: that tells it.
	completionTells completion = iota
	// completionOwn: it agrees with Herald's own answer, on its way or
	// confirmed: that answer took effect, and the order stays proven.
	completionOwn
	// completionElsewhere: the request left the gateway's queue without
	// Herald's answer or against it (another client, a timeout, an
	// interrupt): it ends as the gateway says, and Herald can no longer
	// prove which approval an id-less answer reaches.
	completionElsewhere
	// completionSilent: nothing to act on (a command that ran after the
	// request ended, say).
	completionSilent
)

// completionOf classifies a tool.complete for it: ran is whether the
// command ran; denied whether it was blocked as denied (else, if it did
// not run, it timed out).
func completionOf(it *item, ran, denied bool) completion {
	answered := it.State == StateAnswering || it.State == StateResolved
	switch {
	case it.State == StateSentUnknown && (ran || denied):
		return completionTells
	case answered && (it.Outcome.Choice != ChoiceDeny) == ran && (ran || denied):
		return completionOwn
	case answered, it.State == StatePending && idless(it.Request):
		return completionElsewhere
	case ran:
		// A command like this one ran after the request ended, or one
		// Herald never took in (a failed arrival): it says nothing of it.
		return completionSilent
	}
	// Blocked after the request ended or while its outcome is unknown:
	// the gateway's ending stands (endLocked ignores an ended request).
	return completionElsewhere
}

// turnEndLocked applies message.complete: an interrupted turn ends the
// session's open requests; a turn that ended leaves nothing waiting, so
// an answer whose outcome Herald did not learn stays unknown, and the
// session's answer order is provable again.
func (in *Inbox) turnEndLocked(ev wire.Event, now time.Time) {
	cp, _ := ev.Data.(*wire.CompletePayload)
	for _, it := range in.sessionLocked(ev, func(it *item) bool { return it.State.Live() }) {
		switch {
		case cp != nil && cp.Status == "interrupted":
			it.toolSeen = true
			in.endLocked(it, ending{StateCancelled, Outcome{Reason: CancelInterrupted, Detail: "the agent's turn ended interrupted"}}, now)
		case it.State == StateSentUnknown:
			in.endLocked(it, ending{StateCancelled, Outcome{Detail: "the agent's turn ended"}}, now)
		}
	}
	in.regainOrderLocked(sessionNS(ev))
}

// runtimeGoneLocked applies herald.session_gone: the session's runtime
// (its live id) no longer exists on the gateway (it restarted, or a cold
// resume gave the session a new runtime), so nothing of that runtime
// waits there any more. An answer of it whose outcome was unknown is
// settled: still unknown whether it took effect, but no longer waiting
// (a restart or a freeze no longer leaves it up until its deadline).
// Matched by the runtime id only: the stored session lives on under its
// new one.
func (in *Inbox) runtimeGoneLocked(ev wire.Event, now time.Time) {
	if ev.Session == "" {
		return
	}
	for _, it := range in.sortedLocked(func(it *item) bool {
		return it.Gateway == ev.Gateway && it.Session == ev.Session && it.State == StateSentUnknown
	}) {
		in.endLocked(it, ending{StateCancelled, Outcome{Reason: CancelSessionClosed, Detail: "its session's runtime is gone from the gateway: it restarted, or gave the session a new one"}}, now)
	}
}

// idInOtherSessionLocked reports whether a server request's id already
// named a request of another session of its gateway (open or recently
// ended: Herald cannot know that the gateway let go of it): an answer by
// that id could reach either, so the open ones are flagged too. (Requests
// restored from the log are reusedIDLocked's.)
func (in *Inbox) idInOtherSessionLocked(r Request) bool {
	if r.Dialect != DialectServerRequest {
		return false
	}
	hit := false
	for _, o := range in.srqItemsLocked(r.Gateway, r.RequestID, r.Epoch) {
		if o.Session != r.Session && !o.Kind.IsPrompt() && !o.fromLog {
			hit = true
			if weakConflict(o.Conflict) && o.State.Live() {
				o.Conflict = conflictText(r)
				in.emitLocked(ChangeUpdated, o, in.clk.Now())
			}
		}
	}
	return hit
}

// blockedEnding reads a 0.18.2 tool error: how the request ended, and
// whether it reads as a deny.
func blockedEnding(msg string) (*ending, bool) {
	detail, _, _ := strings.Cut(msg, ". ")
	switch {
	case strings.HasPrefix(msg, "BLOCKED: Command timed out"):
		return &ending{StateExpired, Outcome{Detail: detail}}, false
	case strings.HasPrefix(msg, "BLOCKED: Command denied"):
		return &ending{StateCancelled, Outcome{Reason: CancelInterrupted, Detail: detail + " (without an answer from Herald: interrupted, or denied in another client)"}}, true
	}
	return nil, false
}

// sessionNS is the session namespace (eventNS) an event names.
func sessionNS(ev wire.Event) string {
	return eventNS(Request{Gateway: ev.Gateway, Session: ev.Session, StoredSession: ev.StoredSession})
}

// sessionLocked returns the event-form requests of ev's session that keep
// accepts, oldest first.
func (in *Inbox) sessionLocked(ev wire.Event, keep func(*item) bool) []*item {
	return in.sortedLocked(func(it *item) bool {
		same := ev.StoredSession != "" && it.StoredSession == ev.StoredSession ||
			ev.Session != "" && it.Session == ev.Session
		return it.Dialect == DialectEvent && it.Gateway == ev.Gateway && same && keep(it)
	})
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
