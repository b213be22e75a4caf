package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Session discovery and ownership.
//
// A session driven by another client (the browser dashboard, Hermes
// Desktop, a script) is invisible to Herald until Herald lists it with
// session.active_list and attaches to it. What attaching costs depends on
// the gateway (capabilities.go):
//
//   - On a gateway that sends each session's events to one client at a
//     time (Hermes 0.18.2, 0.19, 0.20), attaching takes the session's
//     events from whichever client had them, and a session Herald follows
//     is lost, without a word from the gateway, as soon as another client
//     resumes it or submits to it. For each followed session the client
//     compares the listed row with the previous one: when the row moved on
//     (new streamed text, more messages) while not one event of that
//     session reached Herald, another client has taken its events; the
//     session is marked Elsewhere, an EventElsewhere event is delivered,
//     and it is not re-attached behind the user's back on a reconnect.
//     TakeBack resumes it again.
//   - On a fan-out gateway every attached client gets every event, so
//     nothing is taken from anyone. A followed session whose row moved on
//     unheard means the gateway detached Herald (a slow client, dropped
//     silently on some builds): Herald re-attaches it and replays what it
//     missed with session.events.since.
//
// The client lists the gateway's live sessions at once after every
// (re)connect and then every DiscoveryInterval (2 s) from the heartbeat,
// so a new session is found within one interval, and reports them
// through Config.OnDiscovery.

// Discovery timing and bounds.
const (
	// DiscoveryInterval is how often the live sessions are listed while
	// connected: a session another client starts is found within one
	// interval, in time for an approval it asks seconds after its start.
	// BENCHMARKS.md has what it costs an idle Herald.
	DiscoveryInterval = 2 * time.Second
	// FastDiscoveryInterval is kept for callers of the old two-speed
	// listing: it equals DiscoveryInterval now.
	FastDiscoveryInterval = DiscoveryInterval
	// QuietAfter is how long a session that Herald attached in the
	// middle of a turn, on a gateway that cannot list pending approvals
	// (0.18.2), may stay silent before Herald says it may be waiting on
	// an approval that was sent to another client.
	QuietAfter = 10 * time.Second
	// MaxLiveSessions bounds the rows Herald keeps from one listing.
	MaxLiveSessions = 500
	maxTitleLen     = 200
	maxPreviewLen   = 400
	maxIDLen        = 200
)

// activeRow is one session.active_list row on the wire.
type activeRow struct {
	ID           string  `json:"id"`
	Key          string  `json:"session_key"`
	Title        string  `json:"title"`
	Status       string  `json:"status"`
	Preview      string  `json:"preview"`
	MessageCount int     `json:"message_count"`
	LastActive   float64 `json:"last_active"`
	StartedAt    float64 `json:"started_at"`
}

// clip bounds a gateway string and keeps it valid UTF-8.
func clip(s string, n int) string {
	if len(s) > n {
		s = s[:n]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return strings.ToValidUTF8(s, "")
}

func (r activeRow) live() (source.LiveSession, bool) {
	if r.ID == "" || len(r.ID) > maxIDLen || len(r.Key) > maxIDLen {
		return source.LiveSession{}, false
	}
	l := source.LiveSession{
		ID: clip(r.ID, maxIDLen), Key: clip(r.Key, maxIDLen), Title: clip(r.Title, maxTitleLen),
		Status: clip(r.Status, 20), Preview: clip(r.Preview, maxPreviewLen), MessageCount: max(r.MessageCount, 0),
	}
	if r.LastActive > 0 && r.LastActive < 1e11 {
		l.LastActive = time.Unix(0, int64(r.LastActive*1e9)).UTC()
	}
	if r.StartedAt > 0 && r.StartedAt < 1e11 {
		l.StartedAt = time.Unix(0, int64(r.StartedAt*1e9)).UTC()
	}
	return l, true
}

// ListSessions asks the gateway for its live sessions now.
func (c *Client) ListSessions(ctx context.Context) ([]source.LiveSession, error) {
	cn := c.current()
	if cn == nil {
		return nil, ErrNotConnected
	}
	d := c.poll(ctx, cn)
	if d.Err != "" {
		return nil, errors.New(d.Err)
	}
	return d.Sessions, nil
}

// LastDiscovery returns the latest listing (zero before the first).
func (c *Client) LastDiscovery() source.Discovery {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.disc.last
	d.Sessions = append([]source.LiveSession(nil), d.Sessions...)
	return d
}

// discovery is the client's listing state.
type discovery struct {
	polling  bool
	lastPoll time.Time
	last     source.Discovery
	// resuming counts the session.resume calls in flight by stored id.
	// A listing the gateway made after such a resume can be read before
	// the resume's answer: the session is Herald's already, never one
	// "driven by another client".
	resuming map[string]int
	// firstPrompts are the first prompts of listed sessions without a
	// title (session.history's first user message), by stored id, and
	// asked the message count a session had when it was last asked
	// (asked again only once it grew): bounded by the listing.
	firstPrompts map[string]string
	asked        map[string]int
	// noHistory: the gateway has no session.history.
	noHistory bool
}

// firstPromptsPerPoll bounds the session.history calls of one listing.
const firstPromptsPerPoll = 3

// resumeStarted marks a session.resume of stored in flight until the
// returned func runs (after the session is tracked).
func (c *Client) resumeStarted(stored string) (done func()) {
	c.mu.Lock()
	if c.disc.resuming == nil {
		c.disc.resuming = map[string]int{}
	}
	c.disc.resuming[stored]++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.disc.resuming[stored]--; c.disc.resuming[stored] <= 0 {
			delete(c.disc.resuming, stored)
		}
		c.mu.Unlock()
	}
}

// pollDue reports whether a listing is due now (always after a
// (re)connect: force) and, if so, marks it started; the caller runs poll.
func (c *Client) pollDue(now time.Time, force bool) bool {
	if c.cfg.DiscoveryInterval < 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	every := c.everyLocked()
	due := !c.disc.polling && !c.disc.last.Unsupported && (force || now.Sub(c.disc.lastPoll) >= every)
	if due {
		c.disc.polling = true
		c.disc.lastPoll = now
	}
	return due
}

// everyLocked is the listing interval: Config.DiscoveryInterval if set,
// else DiscoveryInterval.
func (c *Client) everyLocked() time.Duration {
	if c.cfg.DiscoveryInterval > 0 {
		return c.cfg.DiscoveryInterval
	}
	return DiscoveryInterval
}

// listing reports whether a session listing is in flight.
func (c *Client) listing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.disc.polling
}

// wakeHeartbeat makes the heartbeat recompute when it next wakes.
func (c *Client) wakeHeartbeat() {
	select {
	case c.rearm <- struct{}{}:
	default:
	}
}

// discoveryWake says how long the heartbeat may sleep before a listing
// or a quiet-session check is due.
func (c *Client) discoveryWake(now time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next time.Time
	// A listing in flight needs no wake-up; the next one is due from its
	// start (lastPoll).
	if c.cfg.DiscoveryInterval >= 0 && !c.disc.last.Unsupported && !c.disc.polling {
		next = c.disc.lastPoll.Add(c.everyLocked())
	}
	for _, s := range c.sessions {
		if !s.quietSince.IsZero() {
			if at := s.quietSince.Add(QuietAfter); next.IsZero() || at.Before(next) {
				next = at
			}
		}
	}
	if next.IsZero() {
		return 0, false
	}
	return max(next.Sub(now), time.Millisecond), true
}

// poll lists the live sessions once, updates ownership and reports.
func (c *Client) poll(ctx context.Context, cn *conn) source.Discovery {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	raw, err := cn.call(cctx, "session.active_list", map[string]any{})
	// The next listing may start once this one's answer is in, before it
	// is reported: an observer reacting to the report finds it possible.
	c.mu.Lock()
	c.disc.polling = false
	c.mu.Unlock()
	// Once this listing is recorded, the heartbeat sleeps until the next
	// one (its interval depends on what this one shows).
	defer c.wakeHeartbeat()
	defer func() { c.polledBeats.Store(c.beats.Load()); c.polls.Add(1) }()
	if c.heard != nil {
		defer c.heard()
	}
	now := c.clk.Now()
	d := source.Discovery{Gateway: c.name, At: now, Delivery: source.DeliveryOneClient}
	if c.FanOut() {
		d.Delivery = source.DeliveryFanOut
	}
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrNotConnected) {
			d.Err = "not connected"
			return d
		}
		if wire.IsMethodNotFound(err) {
			d.Unsupported = true
			d.Err = "this gateway cannot list its live sessions (no session.active_list); follow sessions by id instead"
		} else {
			d.Err = "listing the gateway's live sessions failed: " + err.Error()
		}
		c.mu.Lock()
		d.Sessions = c.disc.last.Sessions
		c.disc.last.Err, c.disc.last.Unsupported = d.Err, d.Unsupported
		c.mu.Unlock()
		c.report(d)
		return d
	}
	var r struct {
		Sessions []json.RawMessage `json:"sessions"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		d.Err = "the gateway's session list did not decode: " + err.Error()
		c.report(d)
		return d
	}
	for _, one := range r.Sessions {
		if len(d.Sessions) >= MaxLiveSessions {
			break
		}
		var row activeRow
		if json.Unmarshal(one, &row) != nil {
			continue
		}
		if l, ok := row.live(); ok {
			d.Sessions = append(d.Sessions, l)
		}
	}
	var lost []wire.Event
	var detached []*session
	c.mu.Lock()
	fanOut := c.cf.fanOut()
	byID := map[string]int{}
	byKey := map[string]int{}
	for i, l := range d.Sessions {
		byID[l.ID] = i
		if l.Key != "" {
			byKey[l.Key] = i
		}
	}
	for i, l := range d.Sessions {
		if c.disc.resuming[l.Key] > 0 || c.disc.resuming[l.ID] > 0 {
			d.Sessions[i].Followed = true
		}
	}
	for _, s := range c.sessions {
		i, ok := byID[s.live]
		if !ok && s.stored != "" {
			i, ok = byKey[s.stored]
		}
		if !ok {
			continue
		}
		row := &d.Sessions[i]
		row.Followed = true
		prev := s.lastRow
		moved := prev != nil && s.heard == 0 && !s.elsewhere && !c.ownSubmitPending(s, now) && movedOn(*prev, *row)
		if moved && fanOut {
			// Nothing is taken on a fan-out gateway: it dropped Herald
			// (a slow client). Re-attach and replay.
			detached = append(detached, s)
		} else if moved {
			s.elsewhere = true
			s.quietSince = time.Time{}
			p, _ := json.Marshal(source.ElsewherePayload{Key: s.stored, Title: row.Title, Reason: "the session moved on (" + clip(row.Preview, 80) + ") but none of its events reached Herald: another client resumed it or submitted to it, and Hermes sends a session's events to one client only"})
			ev := wire.Event{Gateway: c.name, Session: s.live, StoredSession: s.stored, Kind: source.EventElsewhere, Payload: p, ReceivedAt: now}
			lost = append(lost, ev)
		}
		row.Elsewhere = s.elsewhere
		cp := *row
		s.lastRow = &cp
		s.heard = 0
	}
	c.disc.last = d
	ask := c.firstPromptsLocked(d.Sessions)
	c.mu.Unlock()
	if len(ask) > 0 {
		c.askFirstPrompts(ctx, cn, ask)
		c.mu.Lock()
		c.firstPromptsLocked(d.Sessions)
		c.disc.last = d
		c.mu.Unlock()
	}
	if len(detached) > 0 {
		c.log.Info("the gateway stopped sending followed sessions' events; re-attaching", "sessions", len(detached))
		go c.reattach(ctx, cn, detached)
	}
	for _, ev := range lost {
		c.log.Info("another client took a followed session's events", "session", ev.Session)
		c.dispatch(ev)
	}
	c.report(d)
	return d
}

// firstPromptsLocked fills in the first prompt of each listed session
// without a title from what is known, forgets sessions no longer listed,
// and returns the rows (at most firstPromptsPerPoll) whose first prompt to
// ask the gateway for.
func (c *Client) firstPromptsLocked(rows []source.LiveSession) []source.LiveSession {
	if c.disc.firstPrompts == nil {
		c.disc.firstPrompts, c.disc.asked = map[string]string{}, map[string]int{}
	}
	listed := make(map[string]bool, len(rows))
	var ask []source.LiveSession
	for i := range rows {
		l := &rows[i]
		k := firstNonEmpty(l.Key, l.ID)
		listed[k] = true
		if p, ok := c.disc.firstPrompts[k]; ok {
			l.FirstPrompt = p
			continue
		}
		n, tried := c.disc.asked[k]
		if strings.TrimSpace(l.Title) == "" && (l.MessageCount > 0 || l.Running()) && (!tried || l.MessageCount > n) && !c.disc.noHistory && len(ask) < firstPromptsPerPoll {
			ask = append(ask, *l)
		}
	}
	for k := range c.disc.asked {
		if !listed[k] {
			delete(c.disc.asked, k)
			delete(c.disc.firstPrompts, k)
		}
	}
	return ask
}

// askFirstPrompts asks the gateway for the first user message of each
// session (session.history, which reads without attaching): a session's
// name where it has no title (approval.Naming).
func (c *Client) askFirstPrompts(ctx context.Context, cn *conn, rows []source.LiveSession) {
	for _, l := range rows {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		raw, err := cn.call(cctx, "session.history", map[string]any{"session_id": l.ID})
		cancel()
		k := firstNonEmpty(l.Key, l.ID)
		c.mu.Lock()
		c.disc.asked[k] = l.MessageCount
		switch {
		case wire.IsMethodNotFound(err):
			c.disc.noHistory = true
		case err == nil:
			var r struct {
				Messages []struct {
					Role string `json:"role"`
					Text string `json:"text"`
				} `json:"messages"`
			}
			if json.Unmarshal(raw, &r) == nil {
				for _, m := range r.Messages {
					if m.Role == "user" && strings.TrimSpace(m.Text) != "" {
						c.disc.firstPrompts[k] = clip(m.Text, maxTitleLen)
						break
					}
				}
			}
		}
		c.mu.Unlock()
		if err != nil && ctx.Err() != nil {
			return
		}
	}
}

// movedOn reports whether a session made progress between two listings
// in a way that sends events to its consumer.
func movedOn(prev, now source.LiveSession) bool {
	return now.MessageCount != prev.MessageCount || now.Preview != prev.Preview
}

func (c *Client) report(d source.Discovery) {
	if c.cfg.OnDiscovery != nil {
		c.cfg.OnDiscovery(d)
	}
}

// Elsewhere reports whether another client took a followed session.
func (c *Client) Elsewhere(sessionID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[sessionID]
	return s != nil && s.elsewhere
}

// TakeBack makes a followed session's live events come to Herald again
// (session.resume), after another client took them. On 0.18.2 that other
// client stops receiving them.
func (c *Client) TakeBack(ctx context.Context, sessionID string) (SessionRef, error) {
	c.mu.Lock()
	s := c.sessions[sessionID]
	stored := ""
	if s != nil {
		stored = s.stored
	}
	c.mu.Unlock()
	if s == nil {
		return SessionRef{}, errors.New("Herald does not follow session " + sessionID + "; follow it first")
	}
	if stored == "" {
		return SessionRef{}, errors.New("session " + sessionID + " has no stored id to resume; Herald cannot take it back")
	}
	return c.AttachSession(ctx, stored)
}

// markElsewhere records that the gateway refused Herald on a session
// another surface owns (error 4090 on newer gateways).
func (c *Client) markElsewhere(sessionID, reason string) {
	c.mu.Lock()
	s := c.sessions[sessionID]
	if s == nil || s.elsewhere {
		c.mu.Unlock()
		return
	}
	s.elsewhere = true
	p, _ := json.Marshal(source.ElsewherePayload{Key: s.stored, Reason: reason})
	ev := wire.Event{Gateway: c.name, Session: s.live, StoredSession: s.stored, Kind: source.EventElsewhere, Payload: p, ReceivedAt: c.clk.Now()}
	c.mu.Unlock()
	c.dispatch(ev)
}

// submitGrace bounds how long after Herald's own prompt.submit a silent
// session's moved-on row is not read as another client's.
const submitGrace = 30 * time.Second

// submitting notes Herald's own prompt.submit on a session: its row moves
// on at once (preview, message count), while a real gateway sends the
// turn's first event only when the agent is built (seconds on a busy
// host), so until that event, or submitGrace, a moved-on row is Herald's
// own doing, not another client's. Noted before sending: a listing may be
// answered first.
func (c *Client) submitting(params any) {
	p, ok := params.(map[string]any)
	if !ok {
		return
	}
	sid, _ := p["session_id"].(string)
	c.mu.Lock()
	if s := c.sessions[sid]; s != nil {
		s.submitted = c.clk.Now()
	}
	c.mu.Unlock()
}

// ownSubmitPending reports whether s waits for the first event of a turn
// Herald submitted (under c.mu).
func (c *Client) ownSubmitPending(s *session, now time.Time) bool {
	return !s.submitted.IsZero() && now.Sub(s.submitted) < submitGrace
}

// CodeOwnedElsewhere is the error newer gateways answer a prompt.submit
// with when another surface owns the session. Hermes uses the same code
// for the active-session limit and unrelated refusals, without data, so
// only the message tells them apart.
const CodeOwnedElsewhere = 4090

// IsOwnedElsewhere reports whether err says another client owns the
// session: a 4090 whose message says so (SESSION_NOT_OWNED, "live
// owner", "one surface at a time"), not the active-session limit's.
func IsOwnedElsewhere(err error) bool {
	var re *wire.RPCError
	if !errors.As(err, &re) || re == nil || re.Code != CodeOwnedElsewhere {
		return false
	}
	m := strings.ToLower(re.Message)
	for _, w := range []string{"session_not_owned", "live owner", "one surface at a time", "owned by another", "another surface"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// IsSessionLimit reports whether err is the gateway's active-session
// limit (4090 "at the active session limit (N/M)").
func IsSessionLimit(err error) bool {
	var re *wire.RPCError
	return errors.As(err, &re) && re != nil && re.Code == CodeOwnedElsewhere && strings.Contains(strings.ToLower(re.Message), "session limit")
}

// checkQuiet raises the "may be waiting on an approval Herald did not
// see" request for sessions attached mid-turn that stayed silent.
func (c *Client) checkQuiet(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0)
	for id, s := range c.sessions {
		if !s.quietSince.IsZero() && now.Sub(s.quietSince) >= QuietAfter {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		s := c.sessions[id]
		s.quietSince = time.Time{}
		// Pushed as is: it is Herald's own word, not a sign that the
		// gateway sends this session's events here.
		c.out.Push(unseenApproval(c.name, s, now))
	}
}

// unseenApproval is the request Herald raises for a session that seems to
// wait on an approval sent before Herald followed it. It is answered like
// any 0.18.2 approval: approval.respond, oldest first, which resolves
// nothing (and says so) when nothing waits.
func unseenApproval(gw string, s *session, now time.Time) wire.Event {
	f := false
	p := wire.ApprovalPayload{
		SessionID: s.live,
		Command:   "",
		Description: "This session has been silent since Herald followed it in the middle of a turn. " +
			"It may be waiting on an approval that was sent to another client before Herald followed it; " +
			"this gateway does not send it again, so Herald cannot show the command and will not approve it. " +
			"Check it in the client that started the session, or deny it here.",
		Choices:        []string{"deny"},
		AllowPermanent: &f,
		AllowSession:   &f,
	}
	raw, _ := json.Marshal(p)
	ev := wire.Event{Gateway: gw, Session: s.live, StoredSession: s.stored, Kind: wire.ApprovalRequest, Payload: raw, ReceivedAt: now}
	ev.DecodeData()
	return ev
}

// reattach attaches again to followed sessions the gateway stopped
// sending (a silent slow-client detach on a fan-out gateway) and replays
// what they missed, as after a reconnect.
func (c *Client) reattach(ctx context.Context, cn *conn, list []*session) {
	c.mu.Lock()
	var todo []*session
	for _, s := range list {
		if c.sessions[s.live] == s && !s.replaying {
			s.replaying = true
			todo = append(todo, s)
		}
	}
	c.mu.Unlock()
	missed := ""
	for _, s := range todo {
		if reason := c.resyncSession(ctx, cn.call, s, false); reason != "" {
			missed = reason
		}
	}
	if missed != "" {
		c.setStatus(func(st *source.Status) { st.MayHaveMissedEvents, st.MissedReason = true, missed })
	}
}

// firstNonEmpty is the first of ss that is not empty.
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
