package approval

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// A gateway names a request by an id (srq id, approval queue id). Herald
// never merges two different commands under one id, and never lets an old
// id's command stand for a new request:
//
//   - a request listed again under a new replay epoch (the gateway
//     restarted) is a new request: the old one, if still open, is
//     withdrawn, and the new one gets its own key (base key + "@" +
//     epoch);
//   - a request with the id of an open or recent one but a different
//     command is kept as its own request (base key + "#N") and both are
//     flagged with a Conflict: only deny is accepted for them, since
//     Herald cannot tell which command an approval would run;
//   - an id that a request restored from the log after Herald restarted
//     carried is matched by id, not key (the last run's keys are not this
//     run's). The same command in the same session is that request again
//     (it keeps its key).
//     Another command under the id supersedes the restored request: it
//     ends (cancelled, saying why), so no answer given on it is ever sent
//     by an id that now names another command; the new request gets its
//     own key and is deny-only (reusedConflict) until a complete listing
//     names the id for its command alone (see listed.go). The audit log
//     thus never holds two commands under one key.

// errReusedInFlight is why an answer's outcome is unknown when the
// gateway used its request's id for another command while it was sent.
var errReusedInFlight = errors.New("the answer was written, but meanwhile the gateway used this request's id for another command, so it may have reached that command instead")

// gatewayRestarted ends a request that a new replay epoch left behind.
var gatewayRestarted = ending{StateCancelled, Outcome{Reason: CancelRequestCancel, Detail: "the gateway restarted (a new replay epoch), so this request is gone from it; a request it lists again is new"}}

// reusedConflict is the Conflict of a request whose id a request restored
// after a restart had for another command.
const reusedConflict = "the gateway gave this request the id of another command that was waiting when Herald restarted, so Herald cannot yet tell which command an approval by that id would run; only deny is accepted until the gateway lists the id for this command alone"

// supersededDetail is how a restored request ends when the gateway uses
// its id for another command.
const supersededDetail = "Herald restarted while this request waited, and the gateway has since used its id for another command, so an answer by that id could reach that command instead; the gateway may still wait for this one: if the agent does, answer it in Hermes itself"

// reusedIDLocked checks an arrival that the gateway named by id against
// the requests restored from the log under that id (an event-form queue
// id in the same session, a server-request id in any session of the
// gateway: its answer names no session). It returns done when the arrival
// is one of them again (the same command in the same session): a
// restored request adopts it, keeping its key; one that changed state
// since is re-armed. (So one gateway request never has two keys, each
// answerable by its id.) Otherwise the restored ones are ended
// (superseded; left behind by a new replay epoch), and conflict is the
// arrival's Conflict when it takes an id a restored request had for
// another command: reusedConflict, which a listing of its session can
// clear, or for a server request whose id a restored request of another
// session had, conflictText (no one session's listing says what the id
// names in another).
func (in *Inbox) reusedIDLocked(r Request, ev wire.Event, now time.Time) (conflict string, done bool) {
	olds := in.sortedLocked(func(it *item) bool { return it.fromLog && sameID(it.Request, r) })
	for _, it := range olds {
		switch {
		case it.Epoch != "" && r.Epoch != "" && it.Epoch != r.Epoch:
			in.endLocked(it, gatewayRestarted, now)
		case sameSession(it.Request, r) && r.Command != "" && (it.commandIs(r.Command) || it.commandIs(Redact(r.Command))):
			if it.restored && it.State == StatePending {
				in.adoptLocked(it, r, now)
			} else {
				in.rearmRequestLocked(it, ev, now)
			}
			return "", true
		default:
			if !sameSession(it.Request, r) {
				conflict = conflictText(r)
			} else if conflict == "" {
				conflict = reusedConflict
			}
			if it.State == StateAnswering {
				// Herald's answer is on its way by the id that now
				// names another command too: it may reach either.
				it.reusedInFlight = true
				continue
			}
			in.endLocked(it, ending{StateCancelled, Outcome{Reason: CancelSuperseded, Detail: supersededDetail}}, now)
		}
	}
	return conflict, false
}

// weakConflict reports whether c may be replaced by a conflict that a
// listing cannot clear.
func weakConflict(c string) bool { return c == "" || c == reusedConflict }

// sameID reports whether an answer by b's id could reach a.
func sameID(a, b Request) bool {
	if a.Gateway != b.Gateway || a.Dialect != b.Dialect || a.Kind != KindApproval {
		return false
	}
	if b.Dialect == DialectServerRequest {
		return a.RequestID != "" && a.RequestID == b.RequestID
	}
	return a.QueueID != "" && a.QueueID == b.QueueID && sameSession(a, b)
}

// sameSession reports whether a and b are requests of one session.
func sameSession(a, b Request) bool {
	return b.StoredSession != "" && a.StoredSession == b.StoredSession || a.Session == b.Session
}

// placeLocked picks the key for an arriving request that the gateway
// identified by id, and returns the existing item when it is the same
// request delivered again; conflict is true when the id already names a
// different command.
func (in *Inbox) placeLocked(r Request, now time.Time) (key string, same *item, conflict bool) {
	base := r.Key
	if old, ok := in.items[base]; ok && old.Epoch != r.Epoch && old.Epoch != "" && r.Epoch != "" {
		in.endLocked(old, gatewayRestarted, now)
		base = r.Key + "@" + r.Epoch
	}
	for n := 1; ; n++ {
		key = base
		if n > 1 {
			key = fmt.Sprintf("%s#%d", base, n)
		}
		old, ok := in.items[key]
		if !ok {
			return key, nil, n > 1
		}
		if old.sameRequest(r) {
			return key, old, false
		}
	}
}

// sameRequest reports whether b is a re-delivery of it (whose command
// may have been cut since it ended).
func (it *item) sameRequest(b Request) bool {
	size := it.CommandBytes
	if it.cut != nil {
		size = it.cut.bytes
	}
	return it.commandIs(b.Command) && size == b.CommandBytes
}

// conflictText is the Conflict of requests sharing an id.
func conflictText(r Request) string {
	return fmt.Sprintf("the gateway sent different commands under the same request id %q, so Herald cannot tell which one an approval would run", VisibleLine(firstOf(r.RequestID, r.QueueID)))
}

// siblingsLocked returns the other requests that share it's id.
func (in *Inbox) siblingsLocked(it *item) []*item {
	id := firstOf(it.RequestID, it.QueueID)
	if id == "" {
		return nil
	}
	base, _, _ := strings.Cut(it.Key, "#")
	var out []*item
	for _, o := range in.items {
		if o == it || o.Gateway != it.Gateway || o.Dialect != it.Dialect || firstOf(o.RequestID, o.QueueID) != id {
			continue
		}
		if ob, _, _ := strings.Cut(o.Key, "#"); ob == base {
			out = append(out, o)
		}
	}
	return out
}

// flagSiblingsLocked marks the requests sharing it's id as conflicting.
func (in *Inbox) flagSiblingsLocked(it *item, now time.Time) {
	for _, o := range in.siblingsLocked(it) {
		if weakConflict(o.Conflict) && o.State.Live() {
			o.Conflict = it.Conflict
			in.emitLocked(ChangeUpdated, o, now)
		}
	}
}

// endSiblingsLocked ends the open requests that share the id of it, which
// the gateway just confirmed an answer for: the answer went to the id.
func (in *Inbox) endSiblingsLocked(it *item, now time.Time) {
	for _, o := range in.siblingsLocked(it) {
		in.endLocked(o, ending{StateCancelled, Outcome{Reason: CancelResolvedElsewhere, Detail: fmt.Sprintf("the answer %q to the request sharing its id settled this id at the gateway", it.Outcome.Choice)}}, now)
	}
}
