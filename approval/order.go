package approval

import "time"

// The proof of answer order.
//
// Hermes 0.18/0.19 (approval.request without an id) and the API server's
// /v1/runs/{id}/approval take only an id-less answer, which the gateway
// applies to the session's (run's) oldest waiting approval. Herald sends
// an approving id-less answer only while it can prove that the request
// shown is that oldest one (see bind.go). order keeps, per session, whether
// it can.
//
// What keeps the proof: Herald saw every approval of the session since it
// attached, or since the session last waited on nothing, and every one
// that left the gateway's queue left it by Herald's own answer, confirmed
// (or by an ending Herald matched to it). A command's tool.complete that
// agrees with Herald's own answer, in flight or confirmed, is that answer
// taking effect: it keeps the proof.
//
// What breaks it (lose): events may have been missed (a reconnect, a
// resync), another client took the session's events, Herald attached in
// the middle of a turn, a request left the queue without Herald's answer
// or against it (another client, a timeout), an answer's outcome became
// unknown, Herald restarted while requests waited. Refused arrivals (a
// flood) break it for good (refuse): the gateway still holds what Herald
// never showed.
//
// What restores it (regain): the gateway says nothing waits in the session
// (the turn ended, or Herald followed it while idle), and Herald holds no
// open id-less approval of it.
type order struct {
	// lost holds the sessions (eventNS) whose order Herald cannot prove,
	// with why; a session not in it is proven.
	lost map[string]string
	// refused holds the sessions with refused arrivals, or a gateway's
	// wildcard (gateway + "/ev/*") once more than maxPoisoned sessions
	// were refused.
	refused map[string]bool
}

func newOrder() order { return order{lost: map[string]string{}, refused: map[string]bool{}} }

// proven reports whether the order of session ns is proven, and if not why.
func (o *order) proven(ns string) (why string, ok bool) {
	why, lost := o.lost[ns]
	return why, !lost
}

// lose records that the order of session ns is no longer proven; the
// first reason stands until it is regained.
func (o *order) lose(ns, why string) {
	if _, lost := o.lost[ns]; !lost {
		o.lost[ns] = why
	}
}

// regain proves the order of session ns again, when the gateway says
// nothing waits there; not while Herald holds an open id-less approval of
// it (open), since that one may be waiting or not.
func (o *order) regain(ns string, open bool) bool {
	if _, lost := o.lost[ns]; !lost || open {
		return false
	}
	delete(o.lost, ns)
	return true
}

// refuse records that an arrival-order approval of session ns (of gateway
// gw) was refused: past maxPoisoned sessions, every session of gw counts
// as refused, so the set stays bounded.
func (o *order) refuse(ns, gw string) {
	if o.refused[ns] || len(o.refused) < maxPoisoned {
		o.refused[ns] = true
		return
	}
	o.refused[gw+"/ev/*"] = true
}

// refuseAll records refusals in sessions too many to name: every session
// of gw counts as refused.
func (o *order) refuseAll(gw string) { o.refused[gw+"/ev/*"] = true }

// wasRefused reports whether an arrival-order approval of session ns (of
// gateway gw) was ever refused.
func (o *order) wasRefused(ns, gw string) bool { return o.refused[ns] || o.refused[gw+"/ev/*"] }

// loseOrderLocked records that Herald lost the proof of session ns's
// answer order and makes its open id-less approvals deny-only.
func (in *Inbox) loseOrderLocked(ns, why string, now time.Time) {
	in.order.lose(ns, why)
	for _, it := range in.items {
		if it.State.Live() && idless(it.Request) && eventNS(it.Request) == ns && unbind(&it.Request, why) {
			in.emitLocked(ChangeUpdated, it, now)
		}
	}
}

// regainOrderLocked proves session ns's answer order again when the
// gateway says nothing waits there (the turn ended, or the session is
// idle) and Herald holds no open id-less approval of it.
func (in *Inbox) regainOrderLocked(ns string) {
	open := false
	for _, it := range in.items {
		if it.State.Live() && idless(it.Request) && eventNS(it.Request) == ns {
			open = true
			break
		}
	}
	in.order.regain(ns, open)
}

// fifoHeadLocked returns the oldest open request that an id-less
// approval.respond for its session would reach (it itself for the other
// forms).
func (in *Inbox) fifoHeadLocked(it *item) *item {
	if !idless(it.Request) {
		return it
	}
	head := it
	for _, o := range in.items {
		if idless(o.Request) && o.State.Live() && o.Gateway == it.Gateway && o.Session == it.Session && o.seq < head.seq {
			head = o
		}
	}
	return head
}

func eventNS(r Request) string { return r.Gateway + "/ev/" + firstOf(r.StoredSession, r.Session) }
