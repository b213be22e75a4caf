package approval

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The approval machine, on one page.
//
// A request is in one State at a time. It enters the inbox pending (an
// arrival), failed (an arrival Herald cannot answer) or, brought back
// from the audit log at start, in the state the log leaves it in (see
// restart.go). From then on it moves only by the transitions below, each
// a method that checks the state it leaves against the table (machine)
// and enters the next one with the item's flags legal there:
//
//	toAnswering     pending -> answering: the user's answer is on its way
//	toPendingAgain  answering -> pending: the answer was not sent (retry);
//	                sent-unknown -> pending: the gateway lists the request
//	                again by its id, so the answer did not reach it
//	toSentUnknown   answering -> sent-unknown: written, then the link dropped
//	toUnplaced      answering -> sent-unknown: an id-less deny that the
//	                gateway applied while two or more approvals of the
//	                session waited at once; which one it reached is for
//	                the gateway's report to say (order.go)
//	toEnded         a live state -> a final one, as the table allows
//	toRefreshed     pending -> pending: a restored request adopts the
//	                gateway's fresh copy of itself
//
// The topic files decide when a request moves: answer.go (an answer and
// its result), ingest.go (what the gateway reports), bind.go and
// order.go (binding an answer to what was shown), listed.go (a
// gateway's listing), conflict.go (ids), restart.go (the audit log),
// prompt.go (clarify, sudo, secret), runend.go (an API-server run's end).
// None of them writes a request's State.

// State is where a request is in its life cycle:
// pending -> answering -> resolved, or pending -> cancelled | expired, or
// failed on arrival. An answer whose link dropped after it was written is
// answering -> sent-unknown, which Herald reconciles from what the gateway
// says next (resolved, cancelled, expired, pending again when the gateway
// lists the request as still waiting by its id) or, failing that, ends
// outcome-unknown. Resolved, cancelled, expired, failed and
// outcome-unknown are final. The table machine says every move.
type State string

const (
	// StatePending waits for the user.
	StatePending State = "pending"
	// StateAnswering has an answer on its way to the gateway.
	StateAnswering State = "answering"
	// StateResolved was answered from Herald and the gateway confirmed it.
	StateResolved State = "resolved"
	// StateCancelled ended without Herald's answer taking effect; see
	// Outcome.Reason.
	StateCancelled State = "cancelled"
	// StateExpired timed out without an answer; the command did not run.
	StateExpired State = "expired"
	// StateFailed arrived in a form Herald cannot answer; see Outcome.Error.
	StateFailed State = "failed"
	// StateSentUnknown: Herald's answer (Outcome.Choice) was written to
	// the gateway, then the link dropped before the gateway confirmed it.
	// It may have taken effect. Herald never sends it again blind; it
	// learns the outcome from what the gateway says next.
	StateSentUnknown State = "sent-unknown"
	// StateOutcomeUnknown: Herald's answer was sent and Herald could not
	// learn whether it took effect (final).
	StateOutcomeUnknown State = "outcome-unknown"
)

// Live reports whether the request is still open (pending, answering, or
// sent with its outcome still to be learned).
func (s State) Live() bool {
	return s == StatePending || s == StateAnswering || s == StateSentUnknown
}

// UnknownDetail is what surfaces say of an answer in StateSentUnknown
// after the link dropped (see SentDetail).
const UnknownDetail = "answer sent, outcome unknown: the link dropped before the gateway confirmed it; Herald will not send it again and shows the outcome once the gateway reports it"

// SentDetail is what surfaces say of an answer in StateSentUnknown: why
// its outcome is unknown (UnknownDetail after a dropped link,
// UnplacedDetail for a deny among approvals waiting at once) or what the
// gateway said of it since.
func (r Request) SentDetail() string {
	if r.Outcome.Detail != "" {
		return r.Outcome.Detail
	}
	return UnknownDetail
}

// flag is something an item holds that is legal only in some states.
type flag uint16

const (
	flagUncertain       flag = 1 << iota // Request.Uncertain: the gateway may not wait any more
	flagLastError                        // Request.LastError: an earlier answer was not sent
	flagChoice                           // Outcome.Choice: Herald's answer
	flagReason                           // Outcome.Reason: why it was cancelled
	flagError                            // Outcome.Error: why Herald cannot answer it
	flagHint                             // item.hint: an ending reported while answering
	flagResponded                        // item.responded: the API server's word while answering
	flagReusedInFlight                   // item.reusedInFlight: its id was reused while answering
	flagRestored                         // item.restored: brought back from the log, not yet offered again
	flagAwaitsResponded                  // item.awaitsResponded: the API server's report of the answer may follow
	flagCrowded                          // item.crowded: an id-less deny sent while two or more waited at once, not yet placed
	flagMissed                           // item.missed: the gateway reported that answer reaching another approval
	flagEndedDuring                      // item.endedDuring: the run ended while answering
	flagCount           = iota
)

var flagNames = [flagCount]string{"uncertain", "last-error", "choice", "reason", "error", "hint", "responded", "reused-in-flight", "restored", "awaits-responded", "crowded", "missed", "ended-during"}

// stateRule is one state's row of the machine.
type stateRule struct {
	to   []State // where a transition may take a request from here
	may  flag    // the flags a request may hold here
	must flag    // the flags it always holds here
}

// machine is every state, where it may go, and which flags are legal
// in it. A final state goes nowhere. Tests check every change against
// it, and docs/architecture.md's diagram against its moves.
var machine = map[State]stateRule{
	StatePending: {
		to:  []State{StateAnswering, StateCancelled, StateExpired},
		may: flagUncertain | flagLastError | flagRestored,
	},
	StateAnswering: {
		to:   []State{StatePending, StateSentUnknown, StateResolved, StateCancelled, StateExpired},
		may:  flagUncertain | flagChoice | flagHint | flagResponded | flagReusedInFlight | flagRestored | flagCrowded | flagMissed | flagEndedDuring,
		must: flagChoice,
	},
	StateSentUnknown: {
		to:   []State{StatePending, StateResolved, StateCancelled, StateExpired, StateOutcomeUnknown},
		may:  flagLastError | flagChoice | flagRestored | flagCrowded | flagAwaitsResponded,
		must: flagChoice,
	},
	StateResolved:       {may: flagLastError | flagChoice | flagAwaitsResponded, must: flagChoice},
	StateCancelled:      {may: flagLastError | flagReason, must: flagReason},
	StateExpired:        {may: flagLastError},
	StateOutcomeUnknown: {may: flagLastError | flagChoice, must: flagChoice},
	StateFailed:         {may: flagError, must: flagError},
}

// flags returns the flags it holds.
func (it *item) flags() flag {
	var f flag
	set := func(b flag, on bool) {
		if on {
			f |= b
		}
	}
	set(flagUncertain, it.Uncertain)
	set(flagLastError, it.LastError != "")
	set(flagChoice, it.Outcome.Choice != "")
	set(flagReason, it.Outcome.Reason != "")
	set(flagError, it.Outcome.Error != "")
	set(flagHint, it.hint != nil)
	set(flagResponded, it.responded != "")
	set(flagReusedInFlight, it.reusedInFlight)
	set(flagRestored, it.restored)
	set(flagAwaitsResponded, it.awaitsResponded)
	set(flagCrowded, it.crowded)
	set(flagMissed, it.missed != "")
	set(flagEndedDuring, it.endedDuring != nil)
	return f
}

// illegal says what of it the machine does not allow ("" when all is
// legal): an unknown state, a flag its state does not allow, or one it
// must hold but does not.
func (it *item) illegal() string {
	rule, ok := machine[it.State]
	if !ok {
		return fmt.Sprintf("%s: unknown state %q", it.Key, it.State)
	}
	var why []string
	if extra := it.flags() &^ rule.may; extra != 0 {
		why = append(why, "holds "+extra.String()+" not legal when "+string(it.State))
	}
	if missing := rule.must &^ it.flags(); missing != 0 {
		why = append(why, "lacks "+missing.String()+" required when "+string(it.State))
	}
	if len(why) == 0 {
		return ""
	}
	return it.Key + ": " + strings.Join(why, "; ")
}

func (f flag) String() string {
	var names []string
	for i, n := range flagNames {
		if f&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, "+")
}

// can reports whether it may move to state to, reporting a move the
// machine does not have as a fault (and refusing it).
func (in *Inbox) can(it *item, to State) bool {
	if slices.Contains(machine[it.State].to, to) {
		return true
	}
	in.faultf("%s: no transition %s -> %s", it.Key, it.State, to)
	return false
}

// faultf reports a broken rule of the machine to Options.fault (tests);
// the change it was about is not made.
func (in *Inbox) faultf(format string, args ...any) {
	if in.fault != nil {
		in.fault(fmt.Sprintf(format, args...))
	}
}

// enter records a request's move (or arrival) into its current state,
// after applying the rule of two at once to its session (crowdLocked),
// so that it never shows a choice that rule takes away.
func (in *Inbox) enter(kind ChangeKind, it *item, now time.Time) {
	if !it.State.Live() {
		it.Uncertain, it.restored = false, false
	}
	if it.State != StateAnswering {
		it.hint, it.responded, it.respondedHow, it.reusedInFlight, it.missed, it.endedDuring = nil, "", "", false, "", nil
	}
	if it.crowded && !it.State.Live() {
		// Its deny's place never became known (placed ones are no
		// longer crowded when they end): which approval of the session
		// the gateway holds first is not known either.
		it.crowded = false
		in.loseOrderLocked(eventNS(it.Request), unboundUnplaced, now)
	}
	if it.State != StateAnswering && it.State != StateSentUnknown {
		it.crowded = false
	}
	if it.State != StateResolved && it.State != StateSentUnknown {
		it.awaitsResponded = false
	}
	if idless(it.Request) {
		in.crowdLocked(eventNS(it.Request), it, now)
	}
	in.emitLocked(kind, it, now)
}

// checkLocked reports to Options.fault (tests) what of it the machine
// does not allow; emitLocked calls it for every change.
func (in *Inbox) checkLocked(it *item) {
	if in.fault != nil {
		if why := it.illegal(); why != "" {
			in.fault(why)
		}
	}
}

// ending is a final state with its outcome.
type ending struct {
	state State
	out   Outcome
}

// admitLocked takes a new request into the inbox, pending: an arrival,
// or one restored from the log that the gateway may still wait for.
func (in *Inbox) admitLocked(it *item, now time.Time) {
	it.State = StatePending
	in.addLocked(it, ChangeArrived, now)
}

// admitFailedLocked takes in an arrival that Herald cannot answer
// (why), failed: it is shown and logged, never answered.
func (in *Inbox) admitFailedLocked(it *item, why string, now time.Time) {
	it.State, it.Outcome, it.toolSeen = StateFailed, Outcome{At: now, Error: why}, true
	in.addLocked(it, ChangeArrived, now)
}

// admitEndedLocked takes in a request restored from the log that ended
// while Herald was away (e): it is recorded as such, not shown as new.
func (in *Inbox) admitEndedLocked(it *item, e ending, now time.Time) {
	if e.state.Live() {
		in.faultf("%s: restored as %s, which is not final", it.Key, e.state)
		return
	}
	it.State, it.Outcome = e.state, e.out
	it.Outcome.At = now
	in.addLocked(it, ChangeUpdated, now)
}

func (in *Inbox) addLocked(it *item, kind ChangeKind, now time.Time) {
	in.seq++
	it.seq = in.seq
	in.items[it.Key] = it
	in.enter(kind, it, now)
}

// refusedRecord is how an arrival that the inbox did not take in is
// reported and logged: failed, with why. It never enters the inbox.
func refusedRecord(r Request, why string, now time.Time) Request {
	r.State, r.Outcome = StateFailed, Outcome{At: now, Error: why}
	return r
}

// toAnswering: the user's answer (choice, from surface) is on its way.
func (in *Inbox) toAnswering(it *item, choice, surface string, now time.Time) bool {
	if !in.can(it, StateAnswering) {
		return false
	}
	it.State, it.LastError = StateAnswering, ""
	it.Outcome = Outcome{Choice: choice, Surface: surface, At: now}
	in.enter(ChangeUpdated, it, now)
	return true
}

// toPendingAgain: the request waits for an answer again. From answering
// the answer was not sent (lastError says why); from sent-unknown the
// gateway showed it still waits, so the answer did not reach it.
func (in *Inbox) toPendingAgain(it *item, lastError, detail string, now time.Time) bool {
	if !in.can(it, StatePending) {
		return false
	}
	it.State, it.LastError = StatePending, lastError
	it.Outcome = Outcome{At: now, Detail: detail}
	in.enter(ChangeUpdated, it, now)
	return true
}

// toSentUnknown: the answer was written and the link dropped before the
// gateway confirmed it (why). For an id-less answer, the session's answer
// order is no longer proven: the answer may have reached any request.
func (in *Inbox) toSentUnknown(it *item, why string, now time.Time) bool {
	if !in.can(it, StateSentUnknown) {
		return false
	}
	it.State, it.Uncertain, it.LastError, it.crowded = StateSentUnknown, false, why, false
	it.Outcome = Outcome{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface, At: now, Detail: UnknownDetail}
	in.enter(ChangeUpdated, it, now)
	if idless(it.Request) {
		in.loseOrderLocked(eventNS(it.Request), unboundUnknown, now)
	}
	return true
}

// toUnplaced: Herald's id-less deny, sent while two or more approvals of
// the session waited at once, was applied by the gateway to the one it
// holds first, which may be another of them: its outcome for this request
// is unknown until the gateway's report of the command places it (see
// order.go). The proof of the session's order stands: the answer reached
// one of the approvals Herald showed. reported is whether the API
// server's report of the answer already came.
func (in *Inbox) toUnplaced(it *item, reported bool, now time.Time) bool {
	if !it.crowded {
		in.faultf("%s: only a deny sent while two waited at once is unplaced", it.Key)
		return false
	}
	if !in.can(it, StateSentUnknown) {
		return false
	}
	it.State, it.Uncertain, it.LastError = StateSentUnknown, false, ""
	it.Outcome = Outcome{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface, At: now, Detail: UnplacedDetail}
	it.awaitsResponded = !reported
	in.enter(ChangeUpdated, it, now)
	return true
}

// toEnded: the request ends as e says, if the machine has that move.
func (in *Inbox) toEnded(it *item, e ending, now time.Time) bool {
	if e.state.Live() {
		in.faultf("%s: %s is not an ending", it.Key, e.state)
		return false
	}
	if !in.can(it, e.state) {
		return false
	}
	it.State, it.Outcome = e.state, e.out
	it.Outcome.At = now
	in.enter(ChangeUpdated, it, now)
	return true
}

// toRefreshed: a restored pending request adopts r, the gateway's fresh
// copy of it (full command, offered choices), keeping its key, place and
// state: it is pending, and no longer restored.
func (in *Inbox) toRefreshed(it *item, r Request, now time.Time) bool {
	if it.State != StatePending || !it.restored {
		in.faultf("%s: only a restored pending request adopts a fresh copy (it is %s)", it.Key, it.State)
		return false
	}
	r.Key, r.State = it.Key, StatePending
	it.Request, it.restored = r, false
	in.enter(ChangeUpdated, it, now)
	return true
}

// endLocked applies an ending the gateway reported: a pending request
// ends so; one being answered only notes it (the send's result then
// decides, see settleLocked); one whose answer's outcome is unknown ends
// as unknownEnding says. Ended requests are left alone.
func (in *Inbox) endLocked(it *item, e ending, now time.Time) {
	switch it.State {
	case StatePending:
		in.toEnded(it, e, now)
	case StateAnswering:
		if it.hint == nil {
			it.hint = &e
		}
	case StateSentUnknown:
		in.toEnded(it, unknownEnding(it, e), now)
	}
}

// unknownEnding is how a request whose answer's outcome is unknown ends
// when the gateway reports e without saying whose answer settled it: a
// timeout means the answer did not take effect; anything else leaves the
// outcome unknown.
func unknownEnding(it *item, e ending) ending {
	if e.state == StateExpired {
		return e
	}
	detail := "the gateway no longer waits for it"
	if e.out.Detail != "" {
		detail += " (" + e.out.Detail + ")"
	}
	return unknownAt(it, fmt.Sprintf("outcome unknown: Herald's answer %q %s, and %s, but not whether by that answer", it.Outcome.Choice, sentHow(it), detail))
}

// sentHow says how Herald's answer to it, in sent-unknown, came to have
// an unknown outcome.
func sentHow(it *item) string {
	if it.crowded {
		return "was applied while two approvals of this session waited at once, to the one Hermes held first"
	}
	return "was sent before the link dropped"
}

// unknownAt is the final outcome-unknown ending of Herald's answer to it.
func unknownAt(it *item, detail string) ending {
	return ending{StateOutcomeUnknown, Outcome{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface, Detail: detail}}
}
