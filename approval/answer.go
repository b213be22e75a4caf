package approval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// ErrNotFound is returned for a key the inbox does not hold.
var ErrNotFound = errors.New("approval request not found: it may have left the inbox after it ended; refresh the list")

// ErrConfirmAlways is returned for "always" without confirmation.
var ErrConfirmAlways = errors.New(`"always" adds this command pattern to the gateway's permanent allowlist; ask the user to confirm that, then answer again`)

// ErrNoAnswerer is wrapped when Herald has no connection to the gateway.
var ErrNoAnswerer = errors.New("Herald is not connected to this request's gateway")

// Confirmed is what the user confirmed besides their choice, on a
// surface that asked them explicitly.
type Confirmed struct {
	// Always: "always" adds the command's pattern to the gateway's
	// permanent allowlist.
	Always bool `json:"always,omitempty"`
	// Hidden: the user approves although Hermes hid part of the command
	// (Request.Hidden named it).
	Hidden bool `json:"hidden,omitempty"`
}

// Answer is AnswerConfirmed with only "always" confirmed (confirmAlways).
func (in *Inbox) Answer(ctx context.Context, key, choice, surface string, confirmAlways bool) error {
	return in.AnswerConfirmed(ctx, key, choice, surface, Confirmed{Always: confirmAlways})
}

// AnswerConfirmed sends the user's choice for the request with key, from
// surface (a name such as "tray" or "window"). The first answer wins; any
// other gets an *AnsweredError. "always" needs c.Always, and an approving
// answer to a command Hermes partly hid needs c.Hidden (else a
// *HiddenError). The request is resolved only once the gateway confirms;
// if the send fails the request is pending again with LastError set and a
// *SendError is returned.
func (in *Inbox) AnswerConfirmed(ctx context.Context, key, choice, surface string, c Confirmed) error {
	if r, ok := in.Get(key); ok && r.Kind.IsPrompt() {
		return in.answerPromptChoice(ctx, r, choice, surface)
	}
	if surface == "" {
		return errors.New("approval: Answer needs the name of the surface the user answered from")
	}
	var it *item
	var ans Answerer
	var err error
	var target Request // what to send to, read under the lock
	in.do(func(now time.Time) {
		if it, err = in.answerableLocked(key, choice, c); err != nil {
			return
		}
		var ok bool
		if ans, ok = in.answerers(it.Gateway); !ok {
			err = fmt.Errorf("%w (%s); the request is still pending: reconnect the gateway, then answer again", ErrNoAnswerer, it.Gateway)
			return
		}
		it.crowded = choice == ChoiceDeny && in.crowdedAnswerLocked(it)
		in.toAnswering(it, choice, surface, now)
		target = it.Request
	})
	if err != nil {
		return err
	}
	resolved, serr := 1, error(nil)
	if target.Dialect == DialectServerRequest {
		serr = ans.RespondServerRequest(ctx, target.RequestID, choice)
		if errors.Is(serr, wire.ErrRequestSettled) {
			// request.answer said expired: settled elsewhere, not ours.
			resolved, serr = 0, nil
		}
	} else {
		resolved, serr = ans.RespondApproval(ctx, target.Session, choice, target.QueueID)
	}
	in.do(func(now time.Time) { err = in.settleLocked(it, resolved, serr, now) })
	return err
}

// waitingLocked is the request under key if it still waits for an answer
// (approvals and prompts alike); else the error that says why not. An
// answer of unknown outcome refuses a second one: it could reach whatever
// the gateway asks next.
func (in *Inbox) waitingLocked(key string) (*item, error) {
	it, ok := in.items[key]
	switch {
	case !ok:
		return nil, ErrNotFound
	case it.State == StateSentUnknown || it.State == StateOutcomeUnknown:
		return nil, &AnsweredError{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface, At: it.Outcome.At, Unknown: true, Crowded: it.crowded}
	case it.State == StateAnswering || it.State == StateResolved:
		return nil, &AnsweredError{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface, At: it.Outcome.At, InFlight: it.State == StateAnswering}
	case it.State != StatePending:
		return nil, &EndedError{Kind: it.Kind, State: it.State, Outcome: it.Outcome}
	}
	return it, nil
}

// answerableLocked checks that an answer may be sent now.
func (in *Inbox) answerableLocked(key, choice string, c Confirmed) (*item, error) {
	it, err := in.waitingLocked(key)
	switch {
	case err != nil:
		return nil, err
	case it.Dialect == DialectServerRequest && it.RequestID == "":
		return nil, ErrNoRequestID
	}
	if choice != ChoiceDeny && slices.Contains(knownChoices, choice) {
		if err := denyOnlyErr(it.Request); err != nil {
			return nil, err
		}
	}
	switch {
	case !it.Offers(choice):
		return nil, fmt.Errorf("%q is not offered for this request; choose one of: %s", choice, strings.Join(it.Choices, ", "))
	case choice != ChoiceDeny && !c.Hidden && it.Hidden() != "":
		return nil, &HiddenError{What: it.Hidden()}
	case choice == ChoiceAlways && !c.Always:
		return nil, ErrConfirmAlways
	}
	switch first := in.fifoHeadLocked(it); {
	case first == it:
	case choice == ChoiceDeny && in.soleOtherLocked(first, it):
		// The earlier one's deny reached one of the two; this deny
		// reaches the other.
	case first.State == StateSentUnknown:
		return nil, fmt.Errorf("the answer to the earlier request from this session (%s) was sent and its outcome is unknown; this gateway applies answers in arrival order, so Herald sends nothing more in this session until it learns the outcome (answer in Hermes itself if it cannot wait)", first.DisplayCommand())
	case first.State == StateAnswering:
		return nil, fmt.Errorf("an answer to the earlier request from this session (%s) is on its way; this gateway applies answers in arrival order, so answer this one once that is confirmed", first.DisplayCommand())
	case first.Uncertain:
		return nil, fmt.Errorf("this gateway applies answers in arrival order: answer the earlier request from this session first (%s), or dismiss it if it is no longer waiting", first.DisplayCommand())
	default:
		return nil, fmt.Errorf("this gateway applies answers in arrival order: answer the earlier request from this session first (%s)", first.DisplayCommand())
	}
	return it, nil
}

// settleLocked applies the result of a send: resolved is how many
// requests the gateway said the answer settled, serr the send's error.
func (in *Inbox) settleLocked(it *item, resolved int, serr error, now time.Time) error {
	e := ending{StateResolved, Outcome{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface}}
	var err error
	late := !now.Before(it.ExpiresAt)
	unknown := serr != nil && answerIsUnknown(serr) // written, then the link dropped
	switch {
	case it.reusedInFlight && (serr == nil || unknown):
		// Meanwhile the gateway used the id for another command: the
		// answer may have reached either.
		in.toSentUnknown(it, scrub(errReusedInFlight.Error()), now)
		return &UnknownOutcomeError{Gateway: it.Gateway, Choice: it.Outcome.Choice, Kind: it.Kind, Err: errReusedInFlight}
	case it.hint != nil:
		e = *it.hint
		err = &EndedError{Kind: it.Kind, State: e.state, Outcome: e.out, Sent: serr == nil, Cause: serr}
	case it.reusedInFlight:
		// Not sent, and its id now names another command: Herald no
		// longer answers it (see reusedIDLocked).
		e = ending{StateCancelled, Outcome{Reason: CancelSuperseded, Detail: supersededDetail}}
		err = &EndedError{Kind: it.Kind, State: e.state, Outcome: e.out, Cause: serr}
	case unknown && it.responded != "" && !it.crowded:
		// The reply was lost, but the server's stream already said how
		// the request ended. (Not which one a deny among approvals
		// waiting at once reached: that stays unknown.)
		choice, how := it.responded, it.respondedHow
		if how == "" {
			how = "the API server reported the answer " + VisibleLine(choice)
		}
		in.toSentUnknown(it, scrub(serr.Error()), now)
		in.learnedLocked(it, choice != ChoiceDeny, how, now)
		if it.State != StateResolved {
			return &EndedError{Kind: it.Kind, State: it.State, Outcome: it.Outcome, Sent: true, Cause: serr}
		}
		return nil
	case unknown:
		ended := it.endedDuring // the run's end, reported meanwhile
		in.toSentUnknown(it, scrub(serr.Error()), now)
		if ended != nil {
			in.endLocked(it, *ended, now)
		}
		return &UnknownOutcomeError{Gateway: it.Gateway, Choice: it.Outcome.Choice, Kind: it.Kind, Err: serr}
	case serr == nil && resolved >= 1 && (it.crowded || it.missed != ""):
		// Sent among approvals waiting at once: the gateway applied it
		// to the one it holds first (see order.go).
		return in.settleCrowdedLocked(it, it.responded != "", now)
	case serr == nil && it.Dialect == DialectServerRequest && it.Uncertain:
		// A response frame's only confirmation is that it was written,
		// which says nothing when Herald does not know whether the
		// gateway still holds the request (restored after a restart).
		in.toSentUnknown(it, scrub(errUnconfirmedWrite.Error()), now)
		return &UnknownOutcomeError{Gateway: it.Gateway, Choice: it.Outcome.Choice, Kind: it.Kind, Err: errUnconfirmedWrite}
	case serr != nil && late:
		e = ending{StateExpired, Outcome{Detail: "the answer could not be sent before the gateway's timeout"}}
		err = &EndedError{Kind: it.Kind, State: e.state, Outcome: e.out, Cause: serr}
	case serr != nil:
		in.toPendingAgain(it, scrub(serr.Error()), "", now)
		return &SendError{Gateway: it.Gateway, Choice: e.out.Choice, Err: serr}
	case resolved < 1 && late:
		e = ending{StateExpired, Outcome{Detail: "no longer waiting: the gateway had nothing pending any more: it had timed out"}}
		err = &EndedError{Kind: it.Kind, State: e.state, Outcome: e.out, Sent: true}
	case resolved < 1:
		e = ending{StateCancelled, Outcome{Reason: CancelResolvedElsewhere, Detail: "no longer waiting: the gateway had nothing pending any more for this session"}}
		err = &EndedError{Kind: it.Kind, State: e.state, Outcome: e.out, Sent: true}
	}
	reported := it.responded != "" // the API server's stream already confirmed it
	if in.toEnded(it, e, now) && e.state == StateResolved && idless(it.Request) && !reported {
		// An API server's stream reports it too, after this reply: that
		// report is Herald's own answer, not another client's.
		it.awaitsResponded = true
	}
	if it.Conflict != "" && it.State == StateResolved {
		in.endSiblingsLocked(it, now)
	}
	return err
}

// Dismiss ends an Uncertain pending request without sending anything, for
// a user who believes the gateway no longer waits for it.
func (in *Inbox) Dismiss(key, surface string) error {
	var err error
	in.do(func(now time.Time) {
		it, ok := in.items[key]
		switch {
		case !ok:
			err = ErrNotFound
		case it.State == StateSentUnknown:
			// The user settles the question of the outcome themselves
			// (they checked in Hermes): it stays unknown to Herald.
			in.toEnded(it, unknownAt(it, fmt.Sprintf("outcome unknown: Herald's answer %q %s; dismissed from %s before the gateway said whether it took effect", it.Outcome.Choice, sentHow(it), VisibleLine(surface))), now)
		case it.State == StateAnswering || it.State == StateResolved:
			err = &AnsweredError{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface, At: it.Outcome.At, InFlight: it.State == StateAnswering}
		case it.State != StatePending:
			err = &EndedError{Kind: it.Kind, State: it.State, Outcome: it.Outcome}
		case !it.Uncertain:
			err = errors.New("the gateway is known to be waiting for this request, so it cannot be dismissed; answer it instead (deny to refuse)")
		default:
			in.endLocked(it, ending{StateCancelled, Outcome{Reason: CancelDismissed, Surface: surface}}, now)
		}
	})
	return err
}
