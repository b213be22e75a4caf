package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// MaxTrackedSessions bounds the sessions one client tracks (followed ones
// and ones it only saw sequenced events from).
const MaxTrackedSessions = 1000

// session is one session the client follows.
type session struct {
	live   string // runtime session id (events carry it)
	stored string // durable key for session.resume; may be empty
	// watermark is the highest seq delivered for this session.
	watermark uint64
	// replaying parks live events while a reconnect replay is running.
	replaying bool
	parked    []wire.Event
	// parkedBytes is the parked events' payload size; parkDropped: some
	// were dropped for the bound (maxParked, maxParkedBytes), so a
	// resync notice follows the parked ones.
	parkedBytes int
	parkDropped bool
	// Ownership (discovery.go): events heard since the last listing, the
	// row it showed, whether another client took the session, and since
	// when an attached mid-turn session on 0.18.2 has been silent.
	heard      int
	lastRow    *source.LiveSession
	elsewhere  bool
	quietSince time.Time
	// submitted is when Herald's own prompt.submit went out, until the
	// session's next event (see Client.submitting).
	submitted time.Time
}

// SessionRef describes a followed session.
type SessionRef struct {
	ID        string `json:"id"`
	StoredID  string `json:"stored_id,omitempty"`
	Watermark uint64 `json:"watermark"`
	// Elsewhere: another client took this session's live events.
	Elsewhere bool `json:"elsewhere,omitempty"`
}

// Sessions lists followed sessions, sorted by id.
func (c *Client) Sessions() []SessionRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]SessionRef, 0, len(c.sessions))
	for _, s := range c.sessions {
		out = append(out, SessionRef{ID: s.live, StoredID: s.stored, Watermark: s.watermark, Elsewhere: s.elsewhere})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

type sessionResult struct {
	SessionID       string          `json:"session_id"`
	StoredSessionID string          `json:"stored_session_id"`
	Resumed         string          `json:"resumed"`
	Info            json.RawMessage `json:"info"`
	OpenRequests    []openRequest   `json:"open_requests"`
	Running         bool            `json:"running"`
}

// openRequest is a server request still waiting for an answer, as listed
// by session.resume / session.activate / session.events.since.
type openRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// CreateSession starts a new session on the gateway and follows it.
func (c *Client) CreateSession(ctx context.Context, params map[string]any) (SessionRef, error) {
	if params == nil {
		params = map[string]any{}
	}
	var r sessionResult
	if err := c.Call(ctx, "session.create", params, &r); err != nil {
		return SessionRef{}, fmt.Errorf("creating a session failed: %w", err)
	}
	if r.SessionID == "" {
		return SessionRef{}, errors.New("the gateway created a session but returned no session_id")
	}
	c.track(r.SessionID, r.StoredSessionID)
	return SessionRef{ID: r.SessionID, StoredID: r.StoredSessionID}, nil
}

// AttachSession follows an existing session by its durable id
// (session.resume). The gateway then sends that session's events here.
func (c *Client) AttachSession(ctx context.Context, storedID string) (SessionRef, error) {
	var r sessionResult
	defer c.resumeStarted(storedID)() // until tracked below
	if err := c.Call(ctx, "session.resume", map[string]any{"session_id": storedID}, &r); err != nil {
		return SessionRef{}, fmt.Errorf("attaching to session %s failed: %w", storedID, err)
	}
	live := r.SessionID
	if live == "" {
		live = storedID
	}
	s := c.track(live, storedID)
	c.attached(s, r.Running, r.OpenRequests != nil)
	c.openRequests(live, r.OpenRequests, false)
	if ev, ok := c.listApprovals(ctx, c.callRaw, live, storedID); ok {
		c.out.Push(ev)
	}
	return SessionRef{ID: live, StoredID: storedID}, nil
}

// attached resets a session's ownership state after Herald resumed it:
// its events come here now. A turn under way on a gateway that does not
// list open requests (0.18.2) may already wait on an approval that went
// to another client; if the session stays silent, checkQuiet says so.
func (c *Client) attached(s *session, running, listsOpen bool) {
	c.mu.Lock()
	was := s.elsewhere
	s.elsewhere, s.lastRow, s.heard = false, nil, 0
	s.quietSince = time.Time{}
	if running && !listsOpen {
		s.quietSince = c.clk.Now()
		defer c.wakeHeartbeat()
	}
	p, _ := json.Marshal(source.ElsewherePayload{Key: s.stored, Reason: map[bool]string{true: "taken back", false: "followed"}[was], Running: running})
	ev := wire.Event{Gateway: c.name, Session: s.live, StoredSession: s.stored, Kind: source.EventFollowed, Payload: p, ReceivedAt: c.clk.Now()}
	c.out.Push(ev)
	c.mu.Unlock()
}

// Forget stops following a session (its events are still delivered, but
// it is not re-attached after a reconnect).
func (c *Client) Forget(sessionID string) {
	c.mu.Lock()
	delete(c.sessions, sessionID)
	c.mu.Unlock()
}

func (c *Client) track(live, stored string) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[live]
	if s == nil {
		s = &session{live: live}
		c.sessions[live] = s
	}
	if stored != "" {
		s.stored = stored
	}
	return s
}

// dispatch delivers one event in order, dropping sequenced duplicates and
// parking events of a session whose replay is running.
func (c *Client) dispatch(ev wire.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dispatchLocked(ev)
}

func (c *Client) dispatchLocked(ev wire.Event) {
	if ev.Epoch == "" {
		ev.Epoch = c.epoch
	}
	if ev.Kind == wire.RequestCancel && c.answering[ev.RequestID] {
		c.held[ev.RequestID] = ev // settled by the answer's reply
		return
	}
	if ev.Session == "" {
		c.out.Push(ev)
		return
	}
	s := c.sessions[ev.Session]
	if s == nil {
		if ev.Seq == 0 {
			c.out.Push(ev)
			return
		}
		if len(c.sessions) >= MaxTrackedSessions {
			// Bounded: a gateway naming endless sessions cannot grow
			// memory or the work of every reconnect. The event is still
			// delivered, only not replayed after a reconnect.
			if !c.sessionsCapped {
				c.sessionsCapped = true
				c.log.Warn("the gateway sends events for more sessions than Herald tracks; further ones are not replayed after a reconnect", "limit", MaxTrackedSessions)
			}
			c.out.Push(ev)
			return
		}
		// A sequenced session Herald has not attached to: follow its
		// watermark so a reconnect can replay it.
		s = &session{live: ev.Session}
		c.sessions[ev.Session] = s
	}
	ev.StoredSession = s.stored
	if !strings.HasPrefix(ev.Kind, "herald.") {
		// A gateway event: Herald is this session's consumer.
		s.heard++
		s.quietSince = time.Time{}
		s.elsewhere = false
		s.submitted = time.Time{}
	}
	if s.replaying {
		if len(s.parked) >= maxParked || s.parkedBytes+len(ev.Payload) > maxParkedBytes {
			c.overParkLocked(s, ev)
			return
		}
		s.parked = append(s.parked, ev)
		s.parkedBytes += len(ev.Payload)
		return
	}
	c.deliverLocked(s, ev)
}

func (c *Client) deliverLocked(s *session, ev wire.Event) {
	if ev.Epoch == "" {
		ev.Epoch = c.epoch
	}
	if ev.Seq > 0 {
		if ev.Seq <= s.watermark {
			return // already delivered (replay overlap or duplicate frame)
		}
		s.watermark = ev.Seq
	}
	c.out.Push(ev)
}

// Bounds on the live events parked while a session's replay runs.
const (
	maxParked      = 4096
	maxParkedBytes = 16 << 20
)

// overParkLocked handles a live event that arrived while its session's
// replay ran and the parked events are at their bound: a request is
// refused (shown in the flood, not answered), anything else dropped with
// a resync notice once the replay is done.
func (c *Client) overParkLocked(s *session, ev wire.Event) {
	if ev.IsApproval() || ev.IsPrompt() {
		c.out.Refuse(ev, fmt.Sprintf("gateway %s sent more than %d events or %d MiB for session %s while Herald replayed it", c.name, maxParked, maxParkedBytes>>20, s.live))
		if ev.Kind == wire.ApprovalServerRequest || ev.IsPrompt() {
			delete(c.openSRQ, ev.RequestID) // not delivered: not open here
			delete(c.srqParams, ev.RequestID)
		}
	}
	if !s.parkDropped {
		c.log.Warn("the gateway sent more events than Herald keeps while replaying a session; refusing its requests and dropping other events until the replay ends", "session", s.live, "limit", maxParked)
	}
	s.parkDropped = true
}

// emitUnsequenced delivers a server request, cancel or unknown notification.
func (c *Client) emitUnsequenced(ev wire.Event) { c.dispatch(ev) }

func (c *Client) withStored(ev wire.Event) wire.Event {
	c.mu.Lock()
	if s := c.sessions[ev.Session]; s != nil {
		ev.StoredSession = s.stored
	}
	c.mu.Unlock()
	return ev
}

// openRequests reports server requests that the gateway says are still
// waiting. They may repeat ones delivered before; consumers key them by
// RequestID.
func (c *Client) openRequests(live string, reqs []openRequest, replayed bool) {
	now := c.clk.Now()
	for _, r := range reqs {
		ev := serverRequestEvent(c.name, r.Method, r.ID, r.Params, now)
		if ev.Session == "" {
			ev.Session = live
		}
		ev.Replayed = replayed
		c.emitServerRequest(ev, r.ID)
	}
}

// emitServerRequest delivers a server request once: a request already
// delivered and not yet answered or cancelled is not delivered again when
// a reconnect lists it in open_requests with the same params. Other
// params under an open id are delivered: the inbox flags the conflict.
//
// Open requests are bounded (MaxOpenServerRequests, each kept as its id,
// session and a digest of its params): past the bound a new one is
// refused, shown as a flood and not answered (the gateway times it out).
// One whose id or session is longer than maxTrackedIDBytes is delivered
// untracked (the inbox fails it: it cannot be answered faithfully).
// rawID is the id as sent: a numeric one is answered as a number.
func (c *Client) emitServerRequest(ev wire.Event, rawID json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.Kind == wire.ApprovalServerRequest || ev.IsPrompt() {
		digest := paramsDigest(ev.Payload)
		_, open := c.openSRQ[ev.RequestID]
		switch {
		case open && c.srqParams[ev.RequestID] == digest:
			return
		case len(ev.RequestID) > maxTrackedIDBytes || len(ev.Session) > maxTrackedIDBytes:
		case !open && len(c.openSRQ) >= MaxOpenServerRequests:
			if !c.srqCapped {
				c.srqCapped = true
				c.log.Warn("the gateway has more server requests open than Herald tracks; refusing new ones until some end (not shown, not answered: the gateway times them out)", "limit", MaxOpenServerRequests)
			}
			c.out.Refuse(c.withEpochLocked(ev), fmt.Sprintf("gateway %s had %d server requests open, the most Herald tracks", c.name, MaxOpenServerRequests))
			return
		default:
			c.openSRQ[ev.RequestID] = ev.Session
			c.srqParams[ev.RequestID] = digest
			if len(rawID) > 0 && rawID[0] != '"' {
				c.srqNumeric[ev.RequestID] = true
			} else {
				delete(c.srqNumeric, ev.RequestID)
			}
		}
	}
	c.dispatchLocked(ev)
}

// MaxOpenServerRequests bounds the server requests a client tracks as
// open (delivered, not yet answered or cancelled). Herald's inbox takes
// far fewer per gateway; the rest are refused there, but stay open at the
// gateway until it times them out.
const MaxOpenServerRequests = 4096

// maxTrackedIDBytes bounds the ids and session names kept per open
// server request, so MaxOpenServerRequests bounds bytes too.
const maxTrackedIDBytes = 1 << 10

// paramsDigest stands for a server request's params when telling a
// repeat from a conflict: 32 bytes however large the params.
func paramsDigest(params []byte) string {
	sum := sha256.Sum256(params)
	return string(sum[:])
}

func (c *Client) withEpochLocked(ev wire.Event) wire.Event {
	if ev.Epoch == "" {
		ev.Epoch = c.epoch
	}
	if s := c.sessions[ev.Session]; s != nil {
		ev.StoredSession = s.stored
	}
	return ev
}

// closeSRQ forgets a server request that was answered or cancelled.
func (c *Client) closeSRQ(id string) {
	c.mu.Lock()
	c.forgetSRQLocked(id)
	c.mu.Unlock()
}

// forgetSRQLocked forgets an open server request.
func (c *Client) forgetSRQLocked(id string) {
	delete(c.openSRQ, id)
	delete(c.srqParams, id)
	delete(c.srqNumeric, id)
	if len(c.openSRQ) < MaxOpenServerRequests/2 {
		c.srqCapped = false
	}
}

// reconcileOpen withdraws, with a synthetic request.cancel, approvals that
// were delivered before a reconnect but that the gateway no longer lists
// as open: they were settled while Herald was away.
// Only requests delivered before the resync began are considered: one that
// arrives live during the resync may postdate the gateway's list.
func (c *Client) reconcileOpen(s *session, before []string, listed map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clk.Now()
	var gone []string
	for _, id := range before {
		if _, still := c.openSRQ[id]; still && !listed[id] {
			gone = append(gone, id)
		}
	}
	sort.Strings(gone)
	for _, id := range gone {
		c.forgetSRQLocked(id)
		p, _ := json.Marshal(wire.CancelPayload{ID: id, Method: wire.ApprovalServerRequest, Reason: "not_pending_after_reconnect"})
		ev := wire.Event{Gateway: c.name, Session: s.live, StoredSession: s.stored, Kind: wire.RequestCancel, RequestID: id, Payload: p, ReceivedAt: now}
		ev.DecodeData()
		c.dispatchLocked(ev)
	}
}

// onReady records what gateway.ready says. It reports whether this is a
// reconnect with followed sessions to resync.
func (c *Client) onReady(cn *conn, f wire.Frame) bool {
	var p struct {
		Payload readyInfo `json:"payload"`
	}
	_ = json.Unmarshal(f.Params, &p)
	epoch := p.Payload.ReplayEpoch
	c.mu.Lock()
	// What this connection shows is decided afresh: the gateway may have
	// been upgraded (or downgraded) since the last one.
	c.cf = connFeatures{shared: p.Payload.sharedSession(), protocol: p.Payload.protocol(), advertised: p.Payload.advertised()}
	changed := epoch != "" && c.hasEpoch && epoch != c.epoch
	if changed {
		c.withdrawOpenLocked()
	}
	if epoch != "" {
		c.epoch, c.hasEpoch = epoch, true
	}
	if changed {
		// The gateway restarted: its seq numbering began again.
		for _, s := range c.sessions {
			s.watermark = 0
		}
	}
	c.status.Dials++
	c.status.Epoch = epoch
	if p.Payload.Version != "" {
		c.status.Version = p.Payload.Version
	}
	c.epochChanged = changed
	reconnect := len(c.sessions) > 0
	c.status.Features = c.featureStatusLocked()
	c.mu.Unlock()
	return reconnect
}

// resync re-attaches followed sessions after a reconnect and replays what
// was missed where the gateway can.
func (c *Client) resync(ctx context.Context, cn *conn, reconnect bool) {
	if !reconnect {
		return
	}
	c.mu.Lock()
	list := make([]*session, 0, len(c.sessions))
	for _, s := range c.sessions {
		if s.elsewhere {
			// Another client took it: resuming it here would take its
			// events away without asking. TakeBack does that.
			continue
		}
		s.replaying = true
		list = append(list, s)
	}
	epochChanged := c.epochChanged
	c.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].live < list[j].live })
	if epochChanged {
		list = c.keepLive(ctx, cn, list)
	}

	missed := ""
	for _, s := range list {
		if reason := c.resyncSession(ctx, cn.call, s, epochChanged); reason != "" {
			missed = reason
		}
	}
	c.setStatus(func(st *source.Status) {
		if missed != "" {
			st.MayHaveMissedEvents = true
			st.MissedReason = missed
		} else {
			st.MayHaveMissedEvents = false
			st.MissedReason = ""
		}
	})
}

// keepLive is the part of list the restarted gateway still lists live
// (session.active_list, by runtime id or stored key). The others died
// with the old process: resuming them would build an agent for each on
// the server, so Herald stops following them and says so with a
// SessionGone event. Where the gateway cannot list, every one is kept.
func (c *Client) keepLive(ctx context.Context, cn *conn, list []*session) []*session {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	raw, err := cn.call(cctx, "session.active_list", map[string]any{})
	var r struct {
		Sessions []activeRow `json:"sessions"`
	}
	if err != nil || json.Unmarshal(raw, &r) != nil {
		return list
	}
	live := map[string]bool{}
	for _, row := range r.Sessions {
		if row.ID != "" {
			live["id:"+row.ID] = true
		}
		if row.Key != "" {
			live["key:"+row.Key] = true
		}
	}
	kept := list[:0]
	now := c.clk.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range list {
		if live["id:"+s.live] || (s.stored != "" && live["key:"+s.stored]) {
			kept = append(kept, s)
			continue
		}
		c.log.Info("a followed session did not survive the gateway's restart; no longer following it", "session", s.live, "stored", s.stored)
		delete(c.sessions, s.live)
		s.replaying = false
		c.out.Push(wire.Event{Gateway: c.name, Session: s.live, StoredSession: s.stored, Kind: wire.SessionGone, ReceivedAt: now})
		for _, ev := range s.parked {
			c.out.Push(ev)
		}
		s.parked = nil
	}
	return kept
}

// withdrawOpenLocked withdraws every open server request when the
// gateway's replay epoch changed: the gateway restarted and holds none of
// them any more, and the ids it uses next may repeat old ones, so they
// must not be taken for re-deliveries. The cancels carry the old epoch.
func (c *Client) withdrawOpenLocked() {
	ids := make([]string, 0, len(c.openSRQ))
	for id := range c.openSRQ {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	now := c.clk.Now()
	for _, id := range ids {
		sid := c.openSRQ[id]
		ev := wire.Event{Gateway: c.name, Session: sid, Kind: wire.RequestCancel, RequestID: id, ReceivedAt: now, Epoch: c.epoch}
		if s := c.sessions[sid]; s != nil {
			ev.StoredSession = s.stored
		}
		ev.Payload, _ = json.Marshal(wire.CancelPayload{ID: id, Reason: wire.CancelGatewayRestarted})
		ev.DecodeData()
		c.out.Push(ev)
	}
	clear(c.openSRQ)
	clear(c.srqParams)
	clear(c.srqNumeric)
}
