package approval

import (
	"fmt"
	"slices"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

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
//
// Two at once. Even with the proof, the order Herald shows may not be the
// gateway's: Hermes 0.18.2 and 0.19.0 queue an approval and announce it in
// two steps, with plugin hooks between (tools/approval.py
// _await_gateway_decision; backend/hermestest/PROTOCOL.md, "Two approvals
// in one turn"), so two approvals asked at once by two threads of one
// session (subagents) can be announced in the other order than the queue
// holds them. So while two or more id-less approvals of a session are open
// in Herald, none may be allowed (crowdLocked): they are deny-only, with
// unboundCrowd saying why. A deny sent among them (crowded) goes to the
// gateway's queue head, which may be another of them: once the gateway
// confirms it, it is unplaced (toUnplaced) until the gateway's report of
// the command says which one it reached (placeDenyLocked): that one ends
// denied by Herald, and if it was another, the one the deny was given on
// waits again. When one approval is left and no deny among them awaits
// its place, the one left gets back the choices the gateway offered.
// What remains: one approval shown alone can still have a second
// thread's entry before it in the queue while that thread's hooks run, not
// yet announced (docs/security.md, "What remains on those versions").
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

// unboundCrowd is why an id-less approval is deny-only while two or more
// of its session wait at once (see "Two at once" above).
const unboundCrowd = "two approvals of this session wait at once, and Hermes may hold them in another order than Herald shows (an answer goes to the one it holds first), so Herald allows one only after Hermes reports which of them left"

// unboundUnplaced is why a session's order is lost when Herald's deny
// among approvals waiting at once ended without the gateway saying which
// one it reached.
const unboundUnplaced = "Herald's deny went to one of this session's approvals that waited at once, and Hermes did not say which, so Herald cannot prove which approval the gateway holds first, and this gateway applies an answer to the oldest one"

// crowdWhy is why an id-less approval of a session whose order is proven
// is deny-only by the rule of two at once ("" when it is not): open is how
// many id-less approvals of the session Herald holds open, unplaced
// whether a deny sent among them still awaits the gateway's word on which
// one it reached.
func crowdWhy(open int, unplaced bool) string {
	if open >= 2 || unplaced {
		return unboundCrowd
	}
	return ""
}

// crowdLocked applies the rule of two at once to session ns, after a
// change of it (self, whose own change the caller records): while two or
// more of its id-less approvals are open, or a deny sent among them awaits
// its place, each is deny-only; once neither holds, the one left gets back
// the choices the gateway offered, if nothing else keeps it deny-only.
func (in *Inbox) crowdLocked(ns string, self *item, now time.Time) {
	open := in.openIdlessLocked(ns)
	why := crowdWhy(len(open), slices.ContainsFunc(open, func(it *item) bool { return it.crowded }))
	_, proven := in.order.proven(ns)
	for _, it := range open {
		changed := false
		switch {
		case why != "":
			if it.Unbound == "" {
				it.offered = it.Choices
			}
			changed = unbind(&it.Request, why)
		case it.Unbound == unboundCrowd && proven:
			it.Choices, it.Unbound, it.offered = it.offered, "", nil
			changed = true
		}
		if changed && it != self {
			in.emitLocked(ChangeUpdated, it, now)
		}
	}
}

// openIdlessLocked returns the open id-less approvals of session ns,
// oldest first.
func (in *Inbox) openIdlessLocked(ns string) []*item {
	return in.sortedLocked(func(it *item) bool {
		return it.State.Live() && idless(it.Request) && eventNS(it.Request) == ns
	})
}

// crowdedAnswerLocked reports whether an id-less deny of it, sent now,
// goes out among two or more waiting at once in a session whose order is
// proven (so its place is for the gateway's report to say). Without the
// proof the deny may reach an approval Herald never showed, and it is
// settled as before the rule: by the gateway's reply.
func (in *Inbox) crowdedAnswerLocked(it *item) bool {
	if !idless(it.Request) {
		return false
	}
	ns := eventNS(it.Request)
	if _, proven := in.order.proven(ns); !proven || in.order.wasRefused(ns, it.Gateway) {
		return false
	}
	open := in.openIdlessLocked(ns)
	return crowdWhy(len(open), slices.ContainsFunc(open, func(o *item) bool { return o.crowded })) != ""
}

// soleOtherLocked reports whether it, pending, and the unplaced deny u
// are all that is open in their session: a deny of it then reaches the
// one of the two that u did not, so both are denied (see
// settleCrowdedLocked).
func (in *Inbox) soleOtherLocked(u, it *item) bool {
	open := in.openIdlessLocked(eventNS(it.Request))
	return u.crowded && u.State == StateSentUnknown && len(open) == 2 && slices.Contains(open, u) && slices.Contains(open, it)
}

// settleCrowdedLocked applies the gateway's confirmation of a crowded
// deny (it): the gateway applied it to the approval it holds first. If
// the gateway already reported it reaching another (missed), this one
// waits again; if every approval open in the session is a deny the
// gateway applied, each reached one of them, so all are denied; otherwise
// which one it reached is unknown until placeDenyLocked.
func (in *Inbox) settleCrowdedLocked(it *item, reported bool, now time.Time) error {
	if it.missed != "" {
		other := it.missed
		in.toPendingAgain(it, missedWhy(other), "", now)
		return &CrowdedDenyError{Other: other}
	}
	open := in.openIdlessLocked(eventNS(it.Request))
	for _, o := range open {
		if o != it && !(o.crowded && o.State == StateSentUnknown) {
			in.toUnplaced(it, reported, now)
			return &CrowdedDenyError{}
		}
	}
	// Every open approval of the session got one of Herald's denies.
	for _, o := range open {
		o.crowded = false // placed
		in.toEnded(o, ending{StateResolved, Outcome{Choice: o.Outcome.Choice, Surface: o.Outcome.Surface, Detail: allDeniedDetail}}, now)
	}
	// An API server's report of this answer may follow (see settleLocked).
	it.awaitsResponded = !reported
	return nil
}

// placeDenyLocked applies a command's tool.complete that says it was
// denied (command, of ev's session) while Herald's deny sent among
// approvals waiting at once awaits its place. Exactly one of them can be
// that command (shownAs): if it is the approval the deny was given on,
// that is where the deny went; if it is another one waiting, the deny
// reached that one instead, which ends denied by Herald, and the one it
// was given on waits again. If several could be (the same command twice),
// which one left stays unknown. It returns false when the report is not
// about such a deny (toolCompleteLocked then applies it as usual).
func (in *Inbox) placeDenyLocked(ev wire.Event, command string, now time.Time) bool {
	if command == "" {
		return false
	}
	open := in.sessionLocked(ev, func(it *item) bool { return it.State.Live() && idless(it.Request) })
	var crowded, named []*item
	for _, it := range open {
		if it.crowded {
			crowded = append(crowded, it)
		}
		if !it.toolSeen && (it.crowded || it.State == StatePending) && shownAs(it, command) {
			named = append(named, it)
		}
	}
	switch {
	case len(crowded) == 0:
		return false
	case len(named) != 1:
		// None (another command: toolCompleteLocked's), or several
		// alike: it stays unknown which one left.
		return len(named) > 1
	case !named[0].crowded && len(crowded) > 1:
		// Two denies out, and neither named: one of them reached it, and
		// it is not known which.
		return true
	}
	p := named[0]
	p.toolSeen = true
	if p.crowded {
		p.crowded = false
		if p.State == StateSentUnknown {
			in.toEnded(p, ending{StateResolved, Outcome{Choice: p.Outcome.Choice, Surface: p.Outcome.Surface, Detail: placedDetail}}, now)
		} else {
			in.crowdLocked(eventNS(p.Request), nil, now) // its reply settles it
		}
		return true
	}
	u := crowded[0]
	choice, surface := u.Outcome.Choice, u.Outcome.Surface
	if u.State == StateAnswering {
		// Its reply is still to come (settleCrowdedLocked).
		u.crowded, u.missed = false, shortCommand(p)
	} else {
		in.toPendingAgain(u, missedWhy(shortCommand(p)), "", now)
	}
	in.toAnswering(p, choice, surface, now)
	in.toEnded(p, ending{StateResolved, Outcome{Choice: choice, Surface: surface, Detail: reachedDetail(shortCommand(u))}}, now)
	return true
}

// shortCommand is the first line of its command, shown as
// VisibleCommandLine and cut, for a sentence about it.
func shortCommand(it *item) string { return FirstLine(cut(it.Command, 160)) }

// What surfaces say of a deny sent among approvals waiting at once.
const (
	// UnplacedDetail is the outcome of a crowded deny the gateway applied
	// before it said which approval it reached.
	UnplacedDetail  = "answer sent and applied, outcome unknown for this request: two approvals of this session waited at once, and Hermes applies an answer to the one it holds first, which may be the other one; Herald shows which once Hermes reports the command"
	placedDetail    = "Hermes reported this command denied: Herald's deny reached this request"
	allDeniedDetail = "each approval of this session that waited at once got one of Herald's denies, so this one was denied too"
)

// reachedDetail is the outcome of an approval that a deny given on another
// one (shown) reached, since Hermes held it first.
func reachedDetail(shown string) string {
	return fmt.Sprintf("Herald's deny given on the approval of %s reached this one: Hermes held it first (two waited at once), and reported this command denied", shown)
}

// missedWhy says of the approval a deny was given on that the deny reached
// another one (other), which Hermes held first.
func missedWhy(other string) string {
	return fmt.Sprintf("your deny reached the other approval of this session (%s), which Hermes held first; this one still waits", other)
}

// CrowdedDenyError is returned by Answer for a deny that went out while two
// or more approvals of the session waited at once: the gateway applied it
// to the one it holds first, and either has not said which one that was,
// or (Other) said it was another one, and this one still waits.
type CrowdedDenyError struct {
	Other string // the first line of the command the deny reached (shown as FirstLine), when known
}

// Error says where the deny went, as far as Herald knows.
func (e *CrowdedDenyError) Error() string {
	if e.Other != "" {
		return missedWhy(e.Other) + ": answer it again"
	}
	return "your deny was sent and applied, but two approvals of this session waited at once and Hermes applies an answer to the one it holds first, so it may have reached the other one; Herald shows which once Hermes reports the command"
}

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
