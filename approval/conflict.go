package approval

import (
	"fmt"
	"strings"
	"time"
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
//     Herald cannot tell which command an approval would run.

// placeLocked picks the key for an arriving request that the gateway
// identified by id, and returns the existing item when it is the same
// request delivered again; conflict is true when the id already names a
// different command.
func (in *Inbox) placeLocked(r Request, now time.Time) (key string, same *item, conflict bool) {
	base := r.Key
	if old, ok := in.items[base]; ok && old.Epoch != r.Epoch && old.Epoch != "" && r.Epoch != "" {
		in.endLocked(old, ending{StateCancelled, Outcome{Reason: CancelRequestCancel, Detail: "the gateway restarted (a new replay epoch), so this request is gone from it; a request it lists again is new"}}, now)
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
		if sameRequest(old.Request, r) {
			return key, old, false
		}
	}
}

// sameRequest reports whether b is a re-delivery of a.
func sameRequest(a, b Request) bool {
	return a.Command == b.Command && a.CommandBytes == b.CommandBytes
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
		if o.Conflict == "" && o.State.Live() {
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
