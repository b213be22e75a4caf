package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// The Sessions panel: every gateway's live sessions (titles, status,
// current tool, latest output), follow / unfollow / follow all, "followed
// elsewhere now" with Take back, and the per-gateway choice between
// following sessions automatically and being asked (see service's
// discovery.go and docs/following.md).

// Bounds on what the panel shows of a gateway's strings.
const (
	liveTitleMax   = 120
	livePreviewMax = 300
)

// LiveGatewayView is one gateway's live sessions for the window.
type LiveGatewayView struct {
	Gateway string `json:"gateway"`
	// Policy is "auto" (follow each session found) or "ask".
	Policy   string            `json:"policy"`
	Error    string            `json:"error,omitempty"`
	Sessions []LiveSessionView `json:"sessions"`
}

// LiveSessionView is one live session, every gateway string made safe.
type LiveSessionView struct {
	ID  string `json:"id"`
	Key string `json:"key"`
	// Name is its one name (service.SessionNames); ShownID its id as
	// surfaces show it, for the details (approval.SessionID).
	Name     string `json:"name"`
	ShownID  string `json:"shown_id"`
	Status   string `json:"status"`
	Preview  string `json:"preview,omitempty"`
	Tool     string `json:"tool,omitempty"`
	LastText string `json:"last_text,omitempty"`
	Messages int    `json:"messages"`
	// Followed, Elsewhere (taken by another client), Offered (Herald asks
	// before following), Declined (unfollowed by the user).
	Followed  bool `json:"followed"`
	Elsewhere bool `json:"elsewhere"`
	Offered   bool `json:"offered"`
	Declined  bool `json:"declined"`
}

func clipLine(s string, n int) string {
	out, _ := approval.Truncate(approval.VisibleLine(s), n)
	return out
}

func liveViews(in []service.GatewaySessions, names service.SessionNames) []LiveGatewayView {
	out := make([]LiveGatewayView, 0, len(in))
	for _, g := range in {
		v := LiveGatewayView{Gateway: approval.VisibleLine(g.Gateway), Policy: string(g.Policy), Error: approval.VisibleLine(g.Err), Sessions: []LiveSessionView{}}
		for _, l := range g.Sessions {
			v.Sessions = append(v.Sessions, LiveSessionView{
				ID: l.ID, Key: l.Key, Name: clipLine(names.Of(g.Gateway, l.ID, l.Key, l.Title), liveTitleMax), ShownID: approval.VisibleLine(approval.SessionID(l.Key, l.ID)), Status: clipLine(l.Status, 20),
				Preview: clipLine(l.Preview, livePreviewMax), Tool: clipLine(l.Tool, livePreviewMax), LastText: clipLine(l.LastText, livePreviewMax),
				Messages: l.MessageCount, Followed: l.Followed, Elsewhere: l.Elsewhere, Offered: l.Offered, Declined: l.Declined,
			})
		}
		out = append(out, v)
	}
	return out
}

func (a *App) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(a.ctx, 30*time.Second)
}

// FollowSession follows a session of a gateway now. On Hermes 0.18.2 a
// client still watching it stops receiving its live events.
func (a *App) FollowSession(gatewayName, id string) error {
	ctx, cancel := a.callCtx()
	defer cancel()
	return visibleErr(a.svc.FollowSession(ctx, gatewayName, id))
}

// FollowRun follows a run started elsewhere (curl, a script: POST
// /v1/runs on an API server) by its id, on a gateway whose transport
// follows conversations by id (source.Offers.FollowByID), so its events
// and approvals come to Herald. It returns the run followed: its whole id
// and its one name (SessionNames), which the window says it follows,
// never the id as typed.
func (a *App) FollowRun(gatewayName, runID string) (service.RunRef, error) {
	src, ok := a.svc.Source(gatewayName)
	if !ok {
		return service.RunRef{}, fmt.Errorf("no gateway named %q is configured", gatewayName)
	}
	kind := string(src.Kind())
	w, offers := source.WordsOf(kind), source.OffersOf(kind)
	if !offers.FollowByID {
		if offers.ListsSessions {
			return service.RunRef{}, fmt.Errorf("%s lists its %ss by itself: follow them in Sessions", gatewayName, w.Conversation)
		}
		return service.RunRef{}, fmt.Errorf("%s cannot follow a %s by its id", gatewayName, w.Conversation)
	}
	// Any form Herald showed the id in ("run_…" whole, a prefix, "run
	// 45e66398", "NAME/run_…") names the same run.
	_, typed := service.TypedID(gatewayName, runID)
	switch {
	case typed == "":
		return service.RunRef{}, fmt.Errorf("give the %s's id (%s)", w.Conversation, w.IDHint)
	case len(typed) > 256 || strings.ContainsAny(typed, " \t\n/?#"):
		return service.RunRef{}, fmt.Errorf("that is not a %s id: give it as it was given to you (%s)", w.Conversation, w.IDHint)
	}
	id, err := a.svc.ResolveConversation(gatewayName, typed)
	if err != nil {
		return service.RunRef{}, visibleErr(err)
	}
	ctx, cancel := a.callCtx()
	defer cancel()
	if err := src.Follow(ctx, id); err != nil {
		return service.RunRef{}, visibleErr(err)
	}
	return service.RunRef{Gateway: gatewayName, ID: id, Transport: kind, Name: a.svc.SessionName(gatewayName, id, "")}, nil
}

// UnfollowSession stops following a session; Herald does not follow it
// again automatically.
func (a *App) UnfollowSession(gatewayName, id string) error {
	return visibleErr(a.svc.UnfollowSession(gatewayName, id))
}

// FollowAll follows every listed session of a gateway.
func (a *App) FollowAll(gatewayName string) (int, error) {
	ctx, cancel := a.callCtx()
	defer cancel()
	n, err := a.svc.FollowAll(ctx, gatewayName)
	return n, visibleErr(err)
}

// TakeBack makes a session another client took send its live events to
// Herald again.
func (a *App) TakeBack(gatewayName, id string) error {
	ctx, cancel := a.callCtx()
	defer cancel()
	return visibleErr(a.svc.TakeBack(ctx, gatewayName, id))
}

// SetFollowPolicy sets and saves whether Herald follows the sessions it
// finds on a gateway automatically ("auto") or asks first ("ask").
func (a *App) SetFollowPolicy(gatewayName, policy string) error {
	p, err := service.ParseFollowPolicy(policy)
	if err != nil {
		return err
	}
	a.mu.Lock()
	known := slices.ContainsFunc(a.settings.Gateways, func(g GatewaySettings) bool { return g.Name == gatewayName })
	a.mu.Unlock()
	if !known {
		return fmt.Errorf("no gateway named %q is configured", gatewayName)
	}
	if err := a.svc.SetFollowPolicy(gatewayName, p); err != nil {
		return err
	}
	return a.updateSettings(func(s *Settings) {
		s.Gateways = slices.Clone(s.Gateways)
		for i := range s.Gateways {
			if s.Gateways[i].Name == gatewayName {
				s.Gateways[i].Follow = string(p)
			}
		}
	})
}

// applyFollowPolicy gives a just-connected gateway its saved policy.
func (a *App) applyFollowPolicy(g GatewaySettings) {
	if !source.OffersOf(g.Kind).ListsSessions {
		return
	}
	p, err := service.ParseFollowPolicy(g.Follow)
	if err != nil {
		a.warn(fmt.Sprintf("%s: %v; asking before following sessions", g.Name, err))
		p = service.FollowAsk
	}
	if err := a.svc.SetFollowPolicy(g.Name, p); err != nil && !errors.Is(err, context.Canceled) {
		a.warn(err.Error())
	}
}

// ActionFollow is the Follow button of an offer's notification.
const ActionFollow = "follow"

// session turns a session notice into a desktop notification where the
// user should act: a session another client drives that Herald offers to
// follow (when it appears, starts a turn or waits on the user), with a
// Follow button, and a followed session another client took.
func (n *notifier) session(sn service.SessionNotice) {
	var title, body string
	var actions [][2]string
	kind := NoteUnseen
	name := sn.Name
	if name == "" {
		name = approval.Naming{Title: sn.Title}.Name()
	}
	name = clipLine(name, liveTitleMax)
	gw := clipLine(sn.Gateway, 60)
	switch {
	case sn.Kind == service.NoticeOffer:
		switch sn.Status {
		case "waiting":
			title = "A session on " + gw + " waits for an answer Herald cannot see"
		case "working", "starting", "running":
			title = "A session on " + gw + " runs where Herald cannot see it"
		default:
			title = "A session started on " + gw + " that Herald does not receive"
		}
		body = name + ": its approvals do not reach Herald. Follow it to get them here."
		actions = [][2]string{{ActionFollow, "Follow"}}
	case sn.Kind == service.NoticeElsewhere:
		kind = NoteElsewhere
		title = "Followed elsewhere now"
		body = fmt.Sprintf("Another client took %s · %s: its approvals go there. Open Herald's Sessions to take it back.", gw, name)
	default:
		return
	}
	n.mu.Lock()
	p, paused := n.platform, n.paused
	n.mu.Unlock()
	if p == nil || paused {
		return
	}
	n.notify(p, Notification{ID: sessionNotificationID(sn.Gateway, sn.Session), Kind: kind, Gateway: sn.Gateway, Title: title, Body: body, Actions: actions})
}

// sessionNotificationID names a session's notification; parseSessionID
// reads it back for the Follow button.
func sessionNotificationID(gw, live string) string { return "session:" + gw + "/" + live }

func parseSessionID(id string) (gw, live string, ok bool) {
	rest, ok := strings.CutPrefix(id, "session:")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// forgetGone drops a followed session that ended while Herald was not
// running from the saved ones, then says so in the window.
func (a *App) forgetGone(n service.SessionNotice) {
	if n.Kind != service.NoticeGone {
		return
	}
	a.mu.Lock()
	saved := false
	for _, g := range a.settings.Gateways {
		saved = saved || (g.Name == n.Gateway && slices.Contains(g.Sessions, n.Key))
	}
	a.mu.Unlock()
	if saved {
		if err := a.updateSettings(func(s *Settings) {
			s.Gateways = slices.Clone(s.Gateways)
			for i := range s.Gateways {
				if s.Gateways[i].Name == n.Gateway {
					s.Gateways[i].Sessions = slices.DeleteFunc(slices.Clone(s.Gateways[i].Sessions), func(id string) bool { return id == n.Key })
				}
			}
		}); err != nil {
			a.warn(err.Error())
		}
	}
	a.warn(n.Text)
}
