package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// After a reconnect: did the user miss anything of a followed session?
//
// resyncSession asks the gateway, for one followed session, what happened
// while Herald was away, and decides whether events (so, possibly, an
// approval) may be missing. Each step below is one question to the
// gateway and one decision; a "may have missed" decision is a Resync
// notice with its reason (catchUp.mayHaveMissed), shown to the user
// before anything the steps found:
//
//   - the gateway restarted (a new replay epoch): its buffers began
//     again, so events may be missing ("epoch");
//   - resume: re-attach by the stored id (session.resume). Failing that
//     nothing more can be asked ("resume-failed"); a new runtime id is a
//     cold resume whose old events are gone ("new-runtime"); a turn under
//     way on a gateway that does not list open requests (0.18.2) may
//     already wait on an approval Herald never saw, so the session is
//     watched for silence (checkQuiet);
//   - list: the approvals still waiting, where the gateway answers
//     approval.pending (listApprovals; the inbox reconciles);
//   - activate: a session Herald knows only by its live id is attached
//     with session.activate where the gateway has it;
//   - replay: the events after the last one delivered
//     (session.events.since). A gateway that cannot replay ("no-replay"),
//     a replay that failed or did not decode ("replay-failed") or was cut
//     ("truncated") may have lost events.
//
// Any step that lists the open requests (resume, activate, replay) also
// tells which requests delivered before the reconnect were settled
// meanwhile: those it no longer lists are withdrawn
// (reconcileOpen).

// callFunc is one JSON-RPC call on the new connection (conn.call).
type callFunc func(ctx context.Context, method string, params any) (json.RawMessage, error)

// resyncSession brings one followed session up to date on a new
// connection (see above). It returns the last reason events may be
// missing, "" when none.
func (c *Client) resyncSession(ctx context.Context, call callFunc, s *session, epochChanged bool) (missed string) {
	cu := c.startCatchUp(s)
	defer c.deliverCatchUp(cu)
	if epochChanged {
		cu.mayHaveMissed("epoch")
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if s.stored != "" && !c.resume(ctx, call, cu) {
		return cu.missed // not re-attached: nothing more to ask
	}
	cu.listing, cu.hasListing = c.listApprovals(ctx, call, s.live, s.stored)
	if s.stored == "" {
		c.activate(ctx, call, cu)
	}
	c.replay(ctx, call, cu)
	return cu.missed
}

// catchUp is what a reconnect found out about one session, delivered
// together by deliverCatchUp.
type catchUp struct {
	s       *session
	gateway string
	now     time.Time
	// before are the session's server requests delivered before the
	// reconnect and open then.
	before []string
	// notices say events may be missing (wire.Resync), missed the last
	// reason.
	notices []wire.Event
	missed  string
	// replayed are the events the session missed, as replayed.
	replayed []wire.Event
	// open are the requests the gateway listed as open; listsOpen: it
	// listed them at all (the ones it did not list were settled).
	open      []openRequest
	listsOpen bool
	// listing is approval.pending's answer, where it has one.
	listing    wire.Event
	hasListing bool
	// watchQuiet: a turn is under way that may wait on an unseen
	// approval; the heartbeat checks it (checkQuiet).
	watchQuiet bool
}

func (c *Client) startCatchUp(s *session) *catchUp {
	cu := &catchUp{s: s, gateway: c.name, now: c.clk.Now()}
	c.mu.Lock()
	for id, sid := range c.openSRQ {
		if sid == s.live {
			cu.before = append(cu.before, id)
		}
	}
	c.mu.Unlock()
	return cu
}

// mayHaveMissed decides that events of the session may be missing, for
// reason.
func (cu *catchUp) mayHaveMissed(reason string) {
	cu.missed = reason
	ev := wire.Event{Gateway: cu.gateway, Session: cu.s.live, StoredSession: cu.s.stored, Kind: wire.Resync, ReceivedAt: cu.now}
	ev.Payload, _ = json.Marshal(wire.ResyncPayload{Reason: reason})
	ev.DecodeData()
	cu.notices = append(cu.notices, ev)
}

// listed records the open requests a step's answer listed (nil: it did
// not say).
func (cu *catchUp) listed(reqs *[]openRequest) {
	if reqs != nil {
		cu.listsOpen = true
		cu.open = append(cu.open, *reqs...)
	}
}

// resume re-attaches the session by its stored id. It reports false when
// the gateway refused: nothing more can be asked of the session now.
func (c *Client) resume(ctx context.Context, call callFunc, cu *catchUp) bool {
	s := cu.s
	raw, err := call(ctx, "session.resume", map[string]any{"session_id": s.stored})
	if err != nil {
		c.log.Warn("re-attaching a session failed", "session", s.stored, "err", err)
		cu.mayHaveMissed("resume-failed")
		return false
	}
	var r struct {
		sessionResult
		Open *[]openRequest `json:"open_requests"`
	}
	_ = json.Unmarshal(raw, &r)
	if r.SessionID != "" && r.SessionID != s.live {
		c.adoptRuntime(s, r.SessionID)
		cu.mayHaveMissed("new-runtime")
	}
	cu.listed(r.Open)
	// Herald is the session's consumer again; on a gateway that does not
	// list open requests, a running turn may wait unseen.
	c.mu.Lock()
	s.lastRow, s.heard, s.quietSince = nil, 0, time.Time{}
	if r.Running && r.Open == nil {
		s.quietSince, cu.watchQuiet = c.clk.Now(), true
	}
	c.mu.Unlock()
	return true
}

// adoptRuntime follows a cold-resumed session under its new runtime id
// (with a new seq ring); the old id is gone, and views drop its row.
func (c *Client) adoptRuntime(s *session, live string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out.Push(wire.Event{Gateway: c.name, Session: s.live, StoredSession: s.stored, Kind: wire.SessionGone, ReceivedAt: c.clk.Now()})
	delete(c.sessions, s.live)
	s.live, s.watermark = live, 0
	c.sessions[s.live] = s
}

// activate attaches this connection to a session known only by its live
// id (no stored id to resume), where the gateway has session.activate.
func (c *Client) activate(ctx context.Context, call callFunc, cu *catchUp) {
	c.mu.Lock()
	can := c.feat.capabilities == yes
	c.mu.Unlock()
	if !can {
		return
	}
	raw, err := call(ctx, "session.activate", map[string]any{"session_id": cu.s.live})
	var r struct {
		Open *[]openRequest `json:"open_requests"`
	}
	if err == nil && json.Unmarshal(raw, &r) == nil {
		cu.listed(r.Open)
	}
}

// replay asks for the events after the last one delivered, and decides
// whether some may still be missing.
func (c *Client) replay(ctx context.Context, call callFunc, cu *catchUp) {
	s := cu.s
	c.mu.Lock()
	supported, last := c.feat.replay, s.watermark
	c.mu.Unlock()
	if supported == no {
		cu.mayHaveMissed("no-replay")
		return
	}
	// Only the documented keys: newer gateways reject unknown ones.
	raw, err := call(ctx, "session.events.since", map[string]any{"session_id": s.live, "last_seen": last})
	switch {
	case wire.IsMethodNotFound(err):
		c.setFeature(func(f *features) { f.replay = no })
		cu.mayHaveMissed("no-replay")
		return
	case err != nil:
		c.log.Warn("replaying a session failed", "session", s.live, "err", err)
		cu.mayHaveMissed("replay-failed")
		return
	}
	c.setFeature(func(f *features) { f.replay = yes })
	var r struct {
		Events    []eventParams  `json:"events"`
		Truncated bool           `json:"truncated"`
		Open      *[]openRequest `json:"open_requests"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		cu.mayHaveMissed("replay-failed")
		return
	}
	if r.Truncated {
		cu.mayHaveMissed("truncated")
	}
	for _, p := range r.Events {
		if p.SessionID == "" {
			p.SessionID = s.live
		}
		ev := c.eventFrom(p, cu.now, true)
		ev.StoredSession = s.stored
		cu.replayed = append(cu.replayed, ev)
	}
	cu.listed(r.Open)
}

// deliverCatchUp delivers what the reconnect found, in one order: the
// notices that events may be missing, the replayed events, the
// withdrawal of requests settled meanwhile, the requests still open, the
// listing of waiting approvals, and last the live events parked while it
// ran; only then does the session go live again.
func (c *Client) deliverCatchUp(cu *catchUp) {
	s := cu.s
	c.mu.Lock()
	for _, ev := range cu.notices {
		c.out.Push(ev)
	}
	for _, ev := range cu.replayed {
		if ev.Kind == wire.RequestCancel {
			c.forgetSRQLocked(ev.RequestID)
		}
		c.deliverLocked(s, ev)
	}
	c.mu.Unlock()
	if cu.listsOpen {
		listed := make(map[string]bool, len(cu.open))
		for _, r := range cu.open {
			listed[wire.IDString(r.ID)] = true
		}
		c.reconcileOpen(s, cu.before, listed)
	}
	c.openRequests(s.live, cu.open, true)
	c.mu.Lock()
	if cu.hasListing {
		c.out.Push(cu.listing)
	}
	c.goLiveLocked(s)
	c.mu.Unlock()
	if cu.watchQuiet {
		c.wakeHeartbeat()
	}
}

// goLiveLocked ends a session's replay: the live events parked meanwhile
// are delivered, and if some were dropped for the bound, a notice that
// events may be missing follows them.
func (c *Client) goLiveLocked(s *session) {
	s.replaying = false
	parked, dropped := s.parked, s.parkDropped
	s.parked, s.parkedBytes, s.parkDropped = nil, 0, false
	for _, ev := range parked {
		c.deliverLocked(s, ev)
	}
	if dropped {
		ev := wire.Event{Gateway: c.name, Session: s.live, StoredSession: s.stored, Kind: wire.Resync, ReceivedAt: c.clk.Now()}
		ev.Payload, _ = json.Marshal(wire.ResyncPayload{Reason: "overflow"})
		ev.DecodeData()
		c.out.Push(ev)
	}
}
