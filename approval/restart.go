package approval

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Booter is a Store that numbers Herald's starts durably. An inbox over
// such a store puts the start number into the keys it makes up (the event
// form carries no id of its own, and the server-request form's ids start
// over with every connection), so a key is never used for two different
// requests, across restarts included.
type Booter interface {
	// NextBoot returns a number no earlier call on the same store returned.
	NextBoot() (uint64, error)
}

var metaBucket = []byte("meta")

// NextBoot counts one more start of Herald in the history file.
func (s *BoltStore) NextBoot() (uint64, error) {
	var n uint64
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		if v := b.Get([]byte("boot")); len(v) == 8 {
			n = binary.BigEndian.Uint64(v)
		}
		n++
		return b.Put([]byte("boot"), binary.BigEndian.AppendUint64(nil, n))
	})
	return n, err
}

// bootTag is the inbox's start tag for made-up keys: "" without a Booter
// store (nothing outlives the process then), else the start number, or a
// random tag if the store cannot count.
func bootTag(st Store) string {
	b, ok := st.(Booter)
	if !ok {
		return ""
	}
	if n, err := b.NextBoot(); err == nil {
		return strconv.FormatUint(n, 10)
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("x%x", r)
}

// evKey makes up the key of an event-form request of session namespace ns.
func (in *Inbox) evKey(ns string) string {
	in.arrivals[ns]++
	if in.boot == "" {
		return fmt.Sprintf("%s/%d", ns, in.arrivals[ns])
	}
	return fmt.Sprintf("%s/%s.%d", ns, in.boot, in.arrivals[ns])
}

// srqKey is the key of a server request: its id is the gateway's JSON-RPC
// id, which is only unique within one connection's life.
func (in *Inbox) srqKey(gateway, id string) string {
	if in.boot == "" {
		return gateway + "/srq/" + id
	}
	return gateway + "/srq/" + in.boot + "." + id
}

// queueKey is the key of an event-form request the gateway gave a queue
// id (id: session/queue id): the gateway may use the id again after
// Herald restarted, so the key carries the start tag too.
func (in *Inbox) queueKey(gateway, id string) string {
	if in.boot == "" {
		return gateway + "/q/" + id
	}
	return gateway + "/q/" + in.boot + "." + id
}

// restoredDetail marks a request brought back from the audit log.
const restoredDetail = "Herald restarted while this request was waiting; the gateway may still be waiting for it (answer or dismiss it), or may have settled it meanwhile"

// restoreLocked reads the audit log at start. Requests left open by the
// last run (a crash, or a shutdown while they waited) come back: those
// whose deadline passed are recorded expired, the others are shown again
// as Uncertain ("may still be pending"), answerable with the safe choices
// or dismissable, until the gateway offers them again, their deadline
// passes or the user acts. Every audit entry thus reaches a final state.
func (in *Inbox) restoreLocked(now time.Time) {
	if in.store == nil {
		return
	}
	entries, err := in.store.List(Filter{Since: now.Add(-restoreWindow)})
	if err != nil {
		in.auditErr = fmt.Sprintf("the approval history could not be read (%s); requests left open by the last run are not shown", scrub(err.Error()))
		return
	}
	type open struct {
		arrival Entry
		last    Entry
	}
	byKey := map[string]*open{}
	var order []string
	for _, e := range entries {
		o := byKey[e.Key]
		if e.Kind == ChangeArrived {
			if o == nil {
				order = append(order, e.Key)
			}
			o = &open{arrival: e}
			byKey[e.Key] = o
		}
		if o != nil {
			o.last = e
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return byKey[order[i]].arrival.Seq < byKey[order[j]].arrival.Seq })
	for _, k := range order {
		o := byKey[k]
		if !o.last.State.Live() {
			continue
		}
		if _, dup := in.items[k]; dup {
			continue
		}
		a := o.arrival
		if a.RequestKind.IsPrompt() {
			in.endRestoredPromptLocked(k, a, o.last, now)
			continue
		}
		r := restoredRequest(k, a, o.last, now)
		r.ExpiresAt = r.ReceivedAt.Add(in.timeoutFor(r.Gateway))
		it := &item{Request: r, restored: true, fromLog: true}
		if r.Unbound == unboundRestartID {
			it.recorded = restoredChoices(a, lastGuards(a, o.last))
		}
		if idless(r) {
			in.order.lose(eventNS(r), unboundRestart)
		}
		switch {
		case o.last.State == StateAnswering || o.last.State == StateSentUnknown:
			// Herald stopped while an answer was on its way or its
			// outcome unknown: it may have taken effect, so it is never
			// offered again.
			in.admitEndedLocked(it, ending{StateOutcomeUnknown, Outcome{Choice: o.last.Choice, Surface: o.last.Surface,
				Detail: fmt.Sprintf("outcome unknown: Herald stopped while its answer %q was on its way, before the gateway confirmed it", o.last.Choice)}}, now)
		case !now.Before(r.ExpiresAt):
			// Past its deadline: the gateway stopped waiting (and did not
			// run the command) while Herald was away.
			in.admitEndedLocked(it, ending{StateExpired, Outcome{Detail: "the gateway's timeout passed while Herald was not running"}}, now)
		default:
			// Shown again as an arrival, so every surface (and
			// notification) brings it back to the user.
			in.admitLocked(it, now)
		}
	}
}

// restoredRequest rebuilds an open approval from its arrival and latest
// audit entries with every guard they recorded: the choices accepted then
// (never more), its ids, session and epoch, and what made it deny-only.
// It is deny-only until the gateway offers it again: an id-less one since
// the proof that it is its session's oldest waiting approval did not
// survive the restart; one with an id since Herald cannot tell that the
// gateway still holds it under that id (a gateway may reuse ids), and the
// gateway does not confirm an answer to an id it no longer holds.
func restoredRequest(k string, a, last Entry, now time.Time) Request {
	g := lastGuards(a, last)
	r := Request{
		Key: k, Kind: KindApproval, Gateway: a.Gateway, Session: firstOf(last.Session, a.Session), StoredSession: firstOf(last.StoredSession, a.StoredSession),
		Command: a.Command, Description: a.Description, Dialect: a.Dialect,
		RequestID: firstOf(g.RequestID, a.RequestID), QueueID: firstOf(g.QueueID, a.QueueID), ByOrder: g.ByOrder || a.ByOrder, Epoch: firstOf(g.Epoch, a.Epoch),
		Truncated: g.Truncated || a.Truncated, CommandBytes: max(g.CommandBytes, a.CommandBytes), Conflict: firstOf(g.Conflict, a.Conflict),
		Unbound:      g.Unbound,
		SessionTitle: firstOf(last.SessionTitle, a.SessionTitle),
		Choices:      restoredChoices(a, g),
		ReceivedAt:   a.At, Uncertain: true,
		Outcome: Outcome{At: now, Detail: restoredDetail},
	}
	if r.Dialect == "" {
		r.Dialect = DialectEvent
	}
	if r.Unbound != "" {
		r.Choices = []string{ChoiceDeny}
	}
	switch {
	case g.Guards == 0:
		unbind(&r, "this request was recorded by an older Herald that did not keep what guards it, so after the restart only deny is accepted")
	case idless(r):
		unbind(&r, unboundRestart)
	default:
		unbind(&r, unboundRestartID)
	}
	return r
}

// lastGuards is the entry whose guards a restored request keeps: the
// latest one that recorded them, else its arrival.
func lastGuards(a, last Entry) Entry {
	if last.Guards == 0 {
		return a
	}
	return last
}

// restoredChoices are the choices recorded for the request (those of its
// latest entry, never more than its arrival's), deny only if none were.
func restoredChoices(a, g Entry) []string {
	var out []string
	for _, c := range g.Choices {
		if slices.Contains(knownChoices, c) && (a.Guards == 0 || slices.Contains(a.Choices, c)) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return []string{ChoiceDeny}
	}
	return out
}

// restoreWindow is how far back the audit log is read at start.
const restoreWindow = 24 * time.Hour

// adoptRestoredLocked matches a new arrival without a gateway-given key to
// a request restored from the log (same gateway, form, session and
// command): the gateway still waits for it. An event-form request keeps
// its key and is no longer uncertain; a server request comes under a new
// id, so the restored one ends, pointing at it.
func (in *Inbox) adoptRestoredLocked(r Request, now time.Time) bool {
	for _, it := range in.items {
		if !it.restored || it.State != StatePending || it.Gateway != r.Gateway || it.Dialect != r.Dialect {
			continue
		}
		same := r.StoredSession != "" && it.StoredSession == r.StoredSession || it.Session == r.Session
		if !same {
			continue
		}
		if r.Command == "" && r.Dialect == DialectEvent {
			// The gateway says only that the session still waits (an API
			// server's polled status after its stream was lost): that is
			// the restored request; keep what the log knows of it.
			r.Command, r.Description = it.Command, it.Description
		}
		// The log keeps the command as sent (older logs: masked).
		if it.Command != r.Command && it.Command != Redact(r.Command) {
			continue
		}
		if r.Dialect == DialectServerRequest {
			it.restored = false
			in.endLocked(it, ending{StateCancelled, Outcome{Reason: CancelRequestCancel, Detail: "the gateway offered it again under a new id after Herald restarted"}}, now)
			return false
		}
		in.adoptLocked(it, r, now)
		return true
	}
	return false
}

// adoptLocked replaces a restored request with the gateway's fresh copy
// of it (full command, offered choices), keeping its key.
func (in *Inbox) adoptLocked(it *item, r Request, now time.Time) {
	if it.Unbound != "" && idless(r) {
		// The restart's loss of proof stands: an id-less copy says
		// nothing about the session's answer order. (One offered again
		// under its own id is bound by that id.)
		unbind(&r, it.Unbound)
	}
	r.Conflict = firstOf(r.Conflict, it.Conflict)
	in.toRefreshed(it, r, now)
}

// endRestoredPromptLocked ends a prompt that the last run left open: its
// answer cannot be sent any more (a sudo or secret value is never kept,
// and the gateway gives a new id to anything it asks again), so it is
// recorded as withdrawn rather than shown as answerable.
func (in *Inbox) endRestoredPromptLocked(k string, a, last Entry, now time.Time) {
	r := Request{
		Key: k, Kind: a.RequestKind, Gateway: a.Gateway, Session: firstOf(last.Session, a.Session), StoredSession: firstOf(last.StoredSession, a.StoredSession),
		Dialect: a.Dialect, Question: a.Question, Choices: []string{}, ReceivedAt: a.At, ExpiresAt: a.At.Add(promptTimeouts[a.RequestKind]),
		SessionTitle: firstOf(last.SessionTitle, a.SessionTitle),
	}
	in.admitEndedLocked(&item{Request: r, toolSeen: true}, ending{StateCancelled, Outcome{Reason: CancelRequestCancel, Detail: "Herald restarted while this question was waiting; if the agent still waits, it asks again or can be answered in Hermes"}}, now)
}
