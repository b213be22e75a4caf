package service

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Following sessions that other clients drive.
//
// Every gateway lists its live sessions every 2 s (source.Discovery).
// What Herald does with a session it does not follow yet depends first
// on the gateway (source.Delivery), then on its FollowPolicy:
//
//   - A gateway that sends each session's events to every attached
//     client (fan-out): Herald follows every live session as one more
//     client. Nothing is taken from anyone, so there is no offer and no
//     warning, whatever the policy.
//   - A gateway that sends each session's events to one client at a
//     time: following a session takes its events from whichever client
//     had them (which Herald cannot see).
//   - FollowAuto: Herald resumes it as soon as Hermes allows (after its
//     first prompt); every such take is announced (NoticeFollowed).
//   - FollowAsk (the default): Herald offers it (NoticeOffer,
//     LiveSessionView.Offered) when it appears, again when it starts a
//     turn and when it waits on the user; the user follows it, or not.
//
// A session the user unfollowed is not followed again automatically.
// When another client takes a followed session, NoticeElsewhere says so
// and TakeBack resumes it again.

// FollowPolicy is what Herald does with sessions it finds on a gateway.
type FollowPolicy string

// Follow policies.
const (
	// FollowAsk offers sessions and lets the user choose.
	FollowAsk FollowPolicy = "ask"
	// FollowAuto follows every session it finds.
	FollowAuto FollowPolicy = "auto"
)

// ParseFollowPolicy reads a policy as settings and flags spell it.
func ParseFollowPolicy(s string) (FollowPolicy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "ask":
		return FollowAsk, nil
	case "auto", "automatic", "follow", "always":
		return FollowAuto, nil
	}
	return "", fmt.Errorf("%q is not a follow policy: use auto (follow every session found) or ask", s)
}

// NoticeKind says what happened to a live session.
type NoticeKind string

// Notice kinds.
const (
	// NoticeFound: a session Herald does not follow appeared.
	NoticeFound NoticeKind = "found"
	// NoticeOffer: Herald would follow it, and asks first.
	NoticeOffer NoticeKind = "offer"
	// NoticeFollowed: Herald now receives the session's live events.
	NoticeFollowed NoticeKind = "followed"
	// NoticeElsewhere: another client took a followed session's events.
	NoticeElsewhere NoticeKind = "elsewhere"
	// NoticeFollowFailed: following a session failed.
	NoticeFollowFailed NoticeKind = "follow_failed"
)

// SessionNotice tells a surface about a live session.
type SessionNotice struct {
	Kind    NoticeKind `json:"kind"`
	Gateway string     `json:"gateway"`
	Session string     `json:"session"` // live id
	Key     string     `json:"key,omitempty"`
	Title   string     `json:"title,omitempty"`
	// Name is the session's one name (SessionNames) when the notice was
	// made.
	Name   string `json:"name,omitempty"`
	Status string `json:"status,omitempty"`
	// Text says it for people, including what following costs.
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// LiveSessionView is one live session on a gateway, for the Sessions
// panel: what the gateway lists, what Herald does with it, and for a
// followed session its current tool and latest output.
type LiveSessionView struct {
	source.LiveSession
	Gateway string `json:"gateway"`
	// Offered: Herald asks whether to follow it.
	Offered bool `json:"offered,omitempty"`
	// Declined: the user unfollowed it; it is not followed again
	// automatically.
	Declined bool   `json:"declined,omitempty"`
	Tool     string `json:"tool,omitempty"`
	LastText string `json:"last_text,omitempty"`
}

// DisplayName is the session's one name (approval.Naming.Name), as every
// surface names it.
func (l LiveSessionView) DisplayName() string { return displayOf(l.LiveSession) }

// GatewaySessions is one gateway's live sessions.
type GatewaySessions struct {
	Gateway  string            `json:"gateway"`
	Policy   FollowPolicy      `json:"policy"`
	At       time.Time         `json:"at,omitzero"`
	Err      string            `json:"error,omitempty"`
	Sessions []LiveSessionView `json:"sessions"`
}

// liveState is the discovery state of one gateway.
type liveState struct {
	policy    FollowPolicy
	last      source.Discovery
	seen      map[string]bool   // keys already announced
	offered   map[string]string // key -> status when offered
	declined  map[string]bool   // keys the user unfollowed
	attaching map[string]bool
	// resume holds the followed sessions (by id) to resume once a
	// listing says whether they are still live (ResumeFollowed).
	resume map[string]bool
}

// maxDeclined bounds the unfollowed sessions remembered per gateway.
const maxDeclined = 1000

// prune forgets what it knew of sessions the gateway no longer lists, so
// the state stays as small as the listing (itself bounded).
func (st *liveState) prune(d source.Discovery) {
	listed := make(map[string]bool, len(d.Sessions))
	for _, l := range d.Sessions {
		listed[l.Key] = true
	}
	for k := range st.seen {
		if !listed[k] {
			delete(st.seen, k)
		}
	}
	for k := range st.offered {
		if !listed[k] {
			delete(st.offered, k)
		}
	}
	if len(st.declined) > maxDeclined {
		for k := range st.declined {
			if !listed[k] {
				delete(st.declined, k)
			}
		}
	}
}

type liveSessions struct {
	mu sync.Mutex
	gw map[string]*liveState
}

func (s *Service) liveLocked(gw string) *liveState {
	if s.live.gw == nil {
		s.live.gw = map[string]*liveState{}
	}
	st := s.live.gw[gw]
	if st == nil {
		st = &liveState{policy: s.cfg.FollowPolicy, seen: map[string]bool{}, offered: map[string]string{}, declined: map[string]bool{}, attaching: map[string]bool{}}
		if st.policy == "" {
			st.policy = FollowAsk
		}
		s.live.gw[gw] = st
	}
	return st
}

// SetFollowPolicy sets what Herald does with sessions it finds on a
// gateway. Switching to FollowAuto follows what is listed now.
func (s *Service) SetFollowPolicy(gw string, p FollowPolicy) error {
	if p != FollowAsk && p != FollowAuto {
		return fmt.Errorf("%q is not a follow policy: use auto or ask", p)
	}
	s.live.mu.Lock()
	st := s.liveLocked(gw)
	st.policy = p
	last := st.last
	s.live.mu.Unlock()
	if p == FollowAuto && !last.At.IsZero() {
		s.onDiscovery(last)
	}
	s.changed()
	return nil
}

// FollowPolicyOf returns a gateway's follow policy.
func (s *Service) FollowPolicyOf(gw string) FollowPolicy {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	return s.liveLocked(gw).policy
}

func (s *Service) notice(n SessionNotice) {
	if n.At.IsZero() {
		n.At = s.clk.Now()
	}
	s.bus.publish(WatchNotices, Notify{Notice: &n})
}

// onDiscovery applies one listing: announces new sessions, follows or
// offers them by the gateway's policy. It must not block.
func (s *Service) onDiscovery(d source.Discovery) {
	s.live.mu.Lock()
	st := s.liveLocked(d.Gateway)
	resume, gone := s.resumeListedLocked(st, d)
	defer s.resumeNow(d.Gateway, resume, gone)
	if d.Err != "" && len(d.Sessions) == 0 {
		st.last.Err = d.Err
		s.live.mu.Unlock()
		s.changed()
		return
	}
	var notices []SessionNotice
	var follow []source.LiveSession
	st.last = d
	fanOut := d.Delivery == source.DeliveryFanOut
	for _, l := range d.Sessions {
		if l.Followed || l.Key == "" {
			continue
		}
		mk := func(kind NoticeKind, text string) SessionNotice {
			return SessionNotice{Kind: kind, Gateway: d.Gateway, Session: l.ID, Key: l.Key, Title: l.Title, Name: displayOf(l), Status: l.Status, Text: text, At: d.At}
		}
		if !st.seen[l.Key] {
			st.seen[l.Key] = true
			notices = append(notices, mk(NoticeFound, foundText(l, fanOut)))
		}
		switch {
		case st.declined[l.Key] || st.attaching[l.Key]:
		case st.policy == FollowAuto || fanOut:
			if l.MessageCount == 0 && !l.Running() {
				// No stored row yet: Hermes cannot resume it until its
				// first prompt. A later listing will.
				continue
			}
			st.attaching[l.Key] = true
			follow = append(follow, l)
		default:
			// Offered when it appears, again when it starts a turn
			// and when it waits on the user.
			prev, was := st.offered[l.Key]
			started := l.Running() && !runningStatus(prev)
			if !was || (was && started) || (l.Status == source.LiveWaiting && prev != source.LiveWaiting) {
				notices = append(notices, mk(NoticeOffer, offerText(l)))
			}
			st.offered[l.Key] = l.Status
		}
	}
	st.prune(d)
	s.live.mu.Unlock()
	for _, n := range notices {
		s.notice(n)
	}
	for _, l := range follow {
		s.attachLive(d.Gateway, l, true)
	}
	s.changed()
}

func runningStatus(status string) bool {
	return source.LiveSession{Status: status}.Running()
}

func foundText(l source.LiveSession, fanOut bool) string {
	what := "idle"
	if l.Running() {
		what = "running"
	}
	if l.Status == source.LiveWaiting {
		what = "waiting on the user"
	}
	if fanOut {
		return fmt.Sprintf("found session %q (%s), driven by another client; following it too (this gateway sends each session's events to every client that follows it)", displayOf(l), what)
	}
	return fmt.Sprintf("found session %q (%s), driven by another client", displayOf(l), what)
}

func offerText(l source.LiveSession) string {
	lead := fmt.Sprintf("session %q started in another client", displayOf(l))
	switch {
	case l.Status == source.LiveWaiting:
		lead = fmt.Sprintf("session %q waits on the user in another client", displayOf(l))
	case l.Running():
		lead = fmt.Sprintf("session %q is running in another client", displayOf(l))
	}
	return lead + ". Follow it here to see its approvals? This gateway sends each session's events to one client at a time: " +
		"following it here takes them away from a client still watching it."
}

// displayOf is a listed session's one name: the gateway lists sessions,
// never runs.
func displayOf(l source.LiveSession) string {
	return approval.Naming{Title: l.Title, FirstPrompt: l.FirstPrompt, Started: l.StartedAt}.Name()
}

// listed is the row of the latest listing of gw for a session (by live or
// stored id).
func (s *Service) listed(gw, live, key string) (source.LiveSession, bool) {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	if st := s.live.gw[gw]; st != nil {
		for _, l := range st.last.Sessions {
			if l.ID == live || (key != "" && l.Key == key) {
				return l, true
			}
		}
	}
	return source.LiveSession{}, false
}

// goBackground counts one more piece of background work (wg), unless
// the service is closing; the caller then runs it and calls wg.Done.
func (s *Service) goBackground() bool {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.bgClosed {
		return false
	}
	s.wg.Add(1)
	return true
}

// attachLive resumes a listed session in the background.
func (s *Service) attachLive(gw string, l source.LiveSession, auto bool) {
	// The pool knows the client as soon as it runs (its first listing
	// may come before the source is registered).
	c, ok := s.follower(gw)
	if !ok || !s.goBackground() { // none, or closing: nothing new starts
		s.live.mu.Lock()
		delete(s.liveLocked(gw).attaching, l.Key)
		s.live.mu.Unlock()
		return
	}
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		_, err := c.Attach(ctx, l.Key)
		s.live.mu.Lock()
		st := s.liveLocked(gw)
		delete(st.attaching, l.Key)
		if err == nil {
			delete(st.offered, l.Key)
		}
		s.live.mu.Unlock()
		if err != nil {
			if auto && errors.Is(err, source.ErrNotStarted) {
				return // no stored row yet; the next listing tries again
			}
			if s.ctx.Err() == nil {
				s.notice(SessionNotice{Kind: NoticeFollowFailed, Gateway: gw, Session: l.ID, Key: l.Key, Title: l.Title, Name: displayOf(l), Text: fmt.Sprintf("following session %q failed: %v", displayOf(l), err)})
			}
		}
		s.changed()
	}()
}

// noticeFromEvent turns the gateway's ownership events into notices.
func (s *Service) noticeFromEvent(ev wire.Event) {
	if s.waitingNotice(ev) {
		return
	}
	if ev.Kind != source.EventElsewhere && ev.Kind != source.EventFollowed {
		return
	}
	title := s.titleOf(ev.Gateway, ev.Session, ev.StoredSession)
	name := s.sessionTitle(ev.Gateway, ev.Session, ev.StoredSession)
	n := SessionNotice{Gateway: ev.Gateway, Session: ev.Session, Key: ev.StoredSession, Title: title, Name: name, At: ev.ReceivedAt}
	fanOut := false
	if c, ok := s.follower(ev.Gateway); ok {
		fanOut = c.FanOut()
	}
	switch {
	case ev.Kind == source.EventElsewhere:
		n.Kind = NoticeElsewhere
		n.Text = fmt.Sprintf("session %q is followed elsewhere now: another client took its live events, so its approvals go there. Take it back to see them here again.", name)
	case fanOut:
		n.Kind = NoticeFollowed
		n.Text = fmt.Sprintf("following session %q: its live events and approvals come to Herald too (this gateway sends each session's events to every client that follows it)", name)
	default:
		n.Kind = NoticeFollowed
		n.Text = fmt.Sprintf("following session %q: its live events and approvals come to Herald now (this gateway sends each session's events to one client at a time, so a client that was watching it stops receiving them)", name)
	}
	s.notice(n)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Service) titleOf(gw, live, key string) string {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	if st := s.live.gw[gw]; st != nil {
		for _, l := range st.last.Sessions {
			if l.ID == live || (key != "" && l.Key == key) {
				return l.Title
			}
		}
	}
	return ""
}

// findLive finds a listed session by live id, stored id or title.
func (s *Service) findLive(gw, id string) (source.LiveSession, bool) {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	st := s.live.gw[gw]
	if st == nil {
		return source.LiveSession{}, false
	}
	for _, l := range st.last.Sessions {
		if l.ID == id || l.Key == id {
			return l, true
		}
	}
	return source.LiveSession{}, false
}

// FollowSession follows a session on a gateway now (session.resume), by
// its live or stored id. On 0.18.2 a client watching it stops receiving
// its live events.
func (s *Service) FollowSession(ctx context.Context, gw, id string) error {
	c, ok := s.follower(gw)
	if !ok {
		return fmt.Errorf("no WebSocket gateway named %q is configured", gw)
	}
	key := id
	if l, ok := s.findLive(gw, id); ok && l.Key != "" {
		key = l.Key
	}
	s.live.mu.Lock()
	st := s.liveLocked(gw)
	delete(st.declined, key)
	s.live.mu.Unlock()
	if _, err := c.Attach(ctx, key); err != nil {
		if errors.Is(err, source.ErrNotStarted) {
			return fmt.Errorf("session %s cannot be followed yet: Hermes can resume a session only after its first prompt; try again once it has started", id)
		}
		return err
	}
	s.live.mu.Lock()
	delete(s.liveLocked(gw).offered, key)
	s.live.mu.Unlock()
	s.changed()
	return nil
}

// UnfollowSession stops following a session and keeps Herald from
// following it again automatically. Its events still reach Herald until
// another client resumes it (Hermes does not hand them back).
func (s *Service) UnfollowSession(gw, id string) error {
	src, _ := s.Source(gw)
	c, ok := src.(source.SessionFollower)
	if !ok {
		return fmt.Errorf("no WebSocket gateway named %q is configured", gw)
	}
	found := false
	for _, ref := range c.Followed() {
		if ref.ID == id || ref.StoredID == id {
			src.Unfollow(ref.ID)
			found = true
			s.live.mu.Lock()
			st := s.liveLocked(gw)
			if ref.StoredID != "" {
				st.declined[ref.StoredID] = true
			}
			s.live.mu.Unlock()
		}
	}
	if !found {
		return fmt.Errorf("Herald does not follow session %s on %s", id, gw)
	}
	s.changed()
	return nil
}

// FollowAll follows every listed session of a gateway that Herald does
// not follow yet (unfollowed ones too). It returns how many it followed.
func (s *Service) FollowAll(ctx context.Context, gw string) (int, error) {
	s.live.mu.Lock()
	st := s.liveLocked(gw)
	var keys []string
	for _, l := range st.last.Sessions {
		if !l.Followed && l.Key != "" {
			keys = append(keys, l.Key)
		}
	}
	s.live.mu.Unlock()
	n := 0
	var errs []error
	for _, k := range keys {
		if err := s.FollowSession(ctx, gw, k); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// TakeBack makes the live events of a followed session that another
// client took come to Herald again.
func (s *Service) TakeBack(ctx context.Context, gw, id string) error {
	c, ok := s.follower(gw)
	if !ok {
		return fmt.Errorf("no WebSocket gateway named %q is configured", gw)
	}
	for _, ref := range c.Followed() {
		if ref.ID == id || ref.StoredID == id {
			if err := c.TakeBack(ctx, ref.ID); err != nil {
				return err
			}
			s.changed()
			return nil
		}
	}
	return fmt.Errorf("Herald does not follow session %s on %s: follow it instead", id, gw)
}

// LiveSessions lists every gateway's live sessions for the Sessions panel.
func (s *Service) LiveSessions() []GatewaySessions {
	s.mu.Lock()
	views := make(map[string]SessionView, len(s.sessions))
	for k, v := range s.sessions {
		views[k] = *v
	}
	s.mu.Unlock()
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	out := make([]GatewaySessions, 0, len(s.live.gw))
	for name, st := range s.live.gw {
		g := GatewaySessions{Gateway: name, Policy: st.policy, At: st.last.At, Err: st.last.Err, Sessions: []LiveSessionView{}}
		for _, l := range st.last.Sessions {
			v := LiveSessionView{LiveSession: l, Gateway: name, Declined: st.declined[l.Key]}
			_, v.Offered = st.offered[l.Key]
			v.Offered = v.Offered && !l.Followed
			if sv, ok := views[name+"/"+l.ID]; ok {
				v.Tool, v.LastText = sv.Tool, sv.LastText
				if strings.TrimSpace(v.Title) == "" {
					v.Title = sv.Title
				}
				if strings.TrimSpace(v.FirstPrompt) == "" {
					v.FirstPrompt = sv.FirstPrompt
				}
			}
			g.Sessions = append(g.Sessions, v)
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Gateway < out[j].Gateway })
	return out
}

// attachesInFlight counts automatic follows under way (tests wait for
// them before moving a fake clock).
func (s *Service) attachesInFlight() int {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	n := 0
	for _, st := range s.live.gw {
		n += len(st.attaching)
	}
	return n
}

func (s *Service) forgetLive(gw string) {
	s.live.mu.Lock()
	delete(s.live.gw, gw)
	s.live.mu.Unlock()
}
