package approval

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// Reconciling by listing.
//
// Some gateways can say, on demand, which approvals of a session (an API
// server: of a run) still wait, each by its own id: a 0.21.3+ gateway's
// approval.pending {session_id}, a newer API server's run status with the
// pending approval in it. The gateway client turns such an answer into
// one wire.ApprovalsListed event, and the inbox reconciles the session's
// requests with it:
//
//   - an answer whose outcome is unknown (StateSentUnknown) on a request
//     listed again by its own id, with the same command, did not reach the
//     gateway: the request is pending again, and an answer by that id is
//     bound to it;
//   - one not listed (in a complete listing) was settled by something,
//     Herald's answer or another client's: it stays unknown, saying so
//     plainly, until the gateway reports how (approval.responded, the
//     turn's or run's end) or its deadline passes;
//   - a request restored after a restart (deny-only because Herald cannot
//     tell that the gateway still holds it under that id) regains the
//     choices recorded for it, never more, and never more than the
//     gateway now offers, only when the listing names it by its id with
//     the same command;
//   - a request whose id a restored request had for another command
//     (deny-only, reusedConflict: see conflict.go) is no longer flagged
//     once a complete listing names that id once, for its command (a
//     server request: by its request id).
//
// A listing never creates a request (arrivals do that), never changes an
// id-less one except to say that nothing waits any more, and never widens
// a request that some other guard keeps deny-only.
const approvalsListed = wire.ApprovalsListed

// Bounds on a listing: entries looked at, and bytes of a listed command
// or id compared (longer ones are not matched).
const (
	maxListed          = wire.MaxListed
	maxListedCommand   = wire.MaxListedCommand
	maxListedID        = wire.MaxListedID
	maxListedChoices   = wire.MaxListedChoices
	listedAgainDetail  = "the gateway listed it again by its id as waiting after the link dropped"
	listedAgainError   = "your answer did not reach the gateway before the link dropped: it still waits for this request, answer again"
	listedReusedDetail = "the gateway listed this request's id for this command alone, so an answer by that id reaches it"
	listedRegainDetail = "Herald restarted while this request waited; the gateway has since listed it again by its id, so an answer by that id reaches this command"
)

// goneDetail says of an answer of unknown outcome that the gateway no
// longer waits for its request (how: what showed it) without saying
// whose answer settled it.
func goneDetail(how string) string {
	return "answer sent, outcome unknown: the gateway no longer waits for this request (" + how + "), so it was settled, by your answer or in another client, but the gateway has not said which; Herald shows the outcome if the gateway reports it, else it stays unknown until the gateway's timeout"
}

// What showed that the gateway no longer waits.
var (
	listedGoneDetail   = goneDetail("it no longer lists it")
	resolvedGoneDetail = goneDetail("it withdrew it as resolved")
)

// listedConflict is a request's Conflict when a listing shows its id for
// another command.
const listedConflict = "the gateway lists this request's id for another command too, so an answer by that id could reach either"

// listing is an approvalsListed payload; listedEntry one approval of it.
type (
	listing     = wire.Listing
	listedEntry = wire.ListedApproval
)

// listedLocked reconciles the listed session's approvals with a listing.
func (in *Inbox) listedLocked(ev wire.Event, now time.Time) {
	var p listing
	if json.Unmarshal(ev.Payload, &p) != nil {
		return
	}
	if len(p.Approvals) > maxListed {
		p.Approvals, p.Complete = p.Approvals[:maxListed], false
	}
	if p.SessionID != "" && ev.Session == "" {
		ev.Session = p.SessionID
	}
	l := indexListing(p, ev.Epoch)
	items := in.sortedLocked(func(it *item) bool {
		same := ev.StoredSession != "" && it.StoredSession == ev.StoredSession || ev.Session != "" && it.Session == ev.Session
		return same && it.Gateway == ev.Gateway && it.Kind == KindApproval && it.State.Live()
	})
	for _, it := range items {
		e := l.entryFor(it)
		switch l.verdict(it, e) {
		case listedForAnotherCommand:
			// Its id names another command too (or now): an answer by
			// that id could reach either. Nothing is concluded, and the
			// request is deny-only. (A command cut for display or never
			// seen cannot be compared: it is deny-only already.)
			if it.Command != "" && !it.Truncated && weakConflict(it.Conflict) {
				it.Conflict = listedConflict
				in.emitLocked(ChangeUpdated, it, now)
			}
		case listedReusedIDClear:
			it.Conflict = ""
			it.Outcome = Outcome{At: now, Detail: listedReusedDetail}
			in.emitLocked(ChangeUpdated, it, now)
		case listedStillWaiting:
			in.toPendingAgain(it, listedAgainError, listedAgainDetail, now)
		case listedGone:
			in.goneUnknownLocked(it, listedGoneDetail, now)
		case listedRestoredByID:
			in.regainLocked(it, e, now)
		}
	}
}

// listedIndex is a listing indexed by the ids an answer names.
type listedIndex struct {
	bySRQ, byQueue map[string]*listedEntry
	complete       bool   // the listing names every approval that waits
	empty          bool   // it names none
	epoch          string // the gateway's replay epoch when it listed
}

func indexListing(p listing, epoch string) listedIndex {
	l := listedIndex{bySRQ: map[string]*listedEntry{}, byQueue: map[string]*listedEntry{}, complete: p.Complete, empty: len(p.Approvals) == 0, epoch: epoch}
	index := func(m map[string]*listedEntry, id string, e *listedEntry) {
		if id == "" || len(id) > maxListedID {
			return
		}
		if _, twice := m[id]; twice {
			e = ambiguous // one id, two entries: it names neither
		}
		m[id] = e
	}
	for i := range p.Approvals {
		e := &p.Approvals[i]
		index(l.bySRQ, e.ID, e)
		index(l.byQueue, e.RequestID, e)
	}
	return l
}

// What a listing says of one open approval of its session.
type listedVerdict uint8

const (
	listedNothing listedVerdict = iota
	// listedForAnotherCommand: its id is listed for another command (or
	// twice): deny-only.
	listedForAnotherCommand
	// listedReusedIDClear: its id, which a restored request had for
	// another command, is listed once, for its command: an answer by
	// that id reaches it.
	listedReusedIDClear
	// listedStillWaiting: Herald's answer has an unknown outcome and the
	// request is listed again by its own id: the answer did not reach it.
	listedStillWaiting
	// listedGone: Herald's answer has an unknown outcome and a complete
	// listing no longer names it: settled, by whom is not known.
	listedGone
	// listedRestoredByID: restored after a restart, and listed by its
	// own id in the same epoch: it may regain its recorded choices.
	listedRestoredByID
)

// verdict is what the listing says of it, given e, its entry by its own
// id (nil when not listed; ambiguous when its id names two).
func (l listedIndex) verdict(it *item, e *listedEntry) listedVerdict {
	listed := e != nil
	switch {
	case listed && (e == ambiguous || !sameListedCommand(it, e)):
		return listedForAnotherCommand
	case it.Conflict == reusedConflict:
		if listed && l.complete && it.State == StatePending && l.sameEpoch(it) && listedUnderOwnID(it, e) {
			return listedReusedIDClear
		}
	case it.State == StateSentUnknown && listed && it.Conflict == "" && it.ByOrder:
		// Listed again, but an answer the gateway applies by order may
		// have settled another approval of the session: it stays unknown.
		return listedNothing
	case it.State == StateSentUnknown && listed && it.Conflict == "":
		return listedStillWaiting
	case it.State == StateSentUnknown && !listed && l.complete && (hasListedID(it) || l.empty):
		return listedGone
	case it.State == StatePending && it.restored && listed && it.QueueID != "" && l.byQueue[it.QueueID] == e && l.sameEpoch(it) && listedUnderOwnID(it, e):
		// By the approval's own queue id, in the same gateway epoch.
		return listedRestoredByID
	}
	return listedNothing
}

// sameEpoch reports whether it arrived in the gateway epoch the listing
// is of (or either has none).
func (l listedIndex) sameEpoch(it *item) bool { return it.Epoch == "" || it.Epoch == l.epoch }

// listedUnderOwnID reports whether e names it by the id an answer to it
// names: a server request, answered by its request id, only when listed
// under that id (its id may come from an old connection, and a number
// repeats on the next one); the event form by its queue id.
func listedUnderOwnID(it *item, e *listedEntry) bool {
	return it.Dialect != DialectServerRequest || e.ID != "" && e.ID == it.RequestID
}

// goneUnknownLocked says of a request whose answer's outcome is unknown
// that the gateway no longer waits for it, without ending it.
func (in *Inbox) goneUnknownLocked(it *item, detail string, now time.Time) {
	if it.Outcome.Detail != detail {
		it.Outcome.Detail, it.Outcome.At = detail, now
		in.emitLocked(ChangeUpdated, it, now)
	}
}

// ambiguous stands for an id that two entries of one listing carry.
var ambiguous = &listedEntry{}

// entryFor is the listing's entry naming it by its own id, if any
// (ambiguous when its id names two).
func (l listedIndex) entryFor(it *item) *listedEntry {
	if it.Dialect == DialectServerRequest && it.RequestID != "" {
		if e := l.bySRQ[it.RequestID]; e != nil {
			return e
		}
	}
	if it.QueueID != "" {
		return l.byQueue[it.QueueID]
	}
	return nil
}

// hasListedID reports whether a listing could name it.
func hasListedID(it *item) bool {
	return it.QueueID != "" || it.Dialect == DialectServerRequest && it.RequestID != ""
}

// sameListedCommand reports whether the listed command is the one shown
// (older logs keep restored commands masked).
func sameListedCommand(it *item, e *listedEntry) bool {
	if it.Command == "" || len(e.Command) > maxListedCommand {
		return false
	}
	return it.Command == e.Command || it.Command == Redact(e.Command)
}

// regainLocked gives a restored request back the choices recorded for it
// when the restart was the only reason it was deny-only: those recorded,
// never more, and only those the gateway offers now.
func (in *Inbox) regainLocked(it *item, e *listedEntry, now time.Time) {
	if it.Unbound != unboundRestartID || len(it.recorded) == 0 || it.Truncated || it.Conflict != "" || Undecodable(it.Command) {
		return
	}
	offered := knownChoices
	if len(e.Choices) > 0 {
		offered = e.Choices
		if len(offered) > maxListedChoices {
			offered = offered[:maxListedChoices]
		}
	}
	var choices []string
	for _, c := range it.recorded {
		if slices.Contains(offered, c) {
			choices = append(choices, c)
		}
	}
	if len(choices) == 0 {
		return
	}
	it.Choices, it.Unbound, it.Uncertain, it.restored = choices, "", false, false
	it.Outcome = Outcome{At: now, Detail: listedRegainDetail}
	in.emitLocked(ChangeUpdated, it, now)
}
