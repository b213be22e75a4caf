package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/service"
)

// printSessionNotice prints what happened to a live session: found, offered,
// followed, or taken by another client ("followed elsewhere now").
func printSessionNotice(out *printer, n service.SessionNotice) {
	if out.json {
		out.record(jsonRecord{Type: "session", Notice: &n})
		return
	}
	// Its one name, as the rest of the feed and every surface say it.
	name := approval.VisibleLine(firstNonEmpty(n.Name, firstNonEmpty(n.Title, firstNonEmpty(n.Key, n.Session))))
	id := approval.VisibleLine(firstNonEmpty(n.Key, n.Session))
	switch n.Kind {
	case service.NoticeFound:
		if n.Status == "idle" || n.Status == "" {
			return // idle sessions: "sessions" lists them
		}
		out.line("  %s: session %q found (%s), driven by another client", n.Gateway, name, approval.VisibleLine(n.Status))
	case service.NoticeOffer:
		out.line("? %s: session %q is %s in another client. Type \"follow %s\" to see its approvals here (this gateway sends each session's events to one client at a time: a client watching it stops receiving them).", n.Gateway, name, offerState(n.Status), id)
	case service.NoticeFollowed:
		out.line("● %s: following session %q (its live events and approvals come to Herald now)", n.Gateway, name)
	case service.NoticeElsewhere:
		out.line("⚠ %s: session %q is followed elsewhere now: another client took its live events, so its approvals go there. Type \"take %s\" to take it back.", n.Gateway, name, id)
	case service.NoticeGone:
		// Said for watch, which follows what --session names now: the id
		// may be mistyped as well as ended (the service's text speaks of
		// a restart).
		out.line("○ %s: session %q is not running there (it ended, or the id is mistyped), so Herald does not follow it; type \"sessions\" to list the live ones", n.Gateway, name)
	case service.NoticeFollowFailed:
		out.line("! %s: %s", n.Gateway, approval.VisibleLine(n.Text))
	case service.NoticeApprovalElsewhere:
		title := ""
		if n.Title != "" {
			title = fmt.Sprintf(" (session %q)", approval.VisibleLine(n.Title))
		}
		out.line("! %s: %s%s", n.Gateway, approval.VisibleLine(n.Text), title)
	case service.NoticeApprovalEnded:
		out.line("  %s: %s", n.Gateway, approval.VisibleLine(n.Text))
	}
}

func offerState(status string) string {
	switch status {
	case "waiting":
		return "waiting on you"
	case "idle", "":
		return "open"
	}
	return "running"
}

// sessions is what watch's session commands need: this process's service,
// or the running Herald's over the control socket (remoteSessions).
type sessions interface {
	LiveSessions() ([]service.GatewaySessions, error)
	FollowSession(ctx context.Context, gw, id string) error
	TakeBack(ctx context.Context, gw, id string) error
	UnfollowSession(gw, id string) error
}

// localSessions are this process's service's.
type localSessions struct{ *service.Service }

func (l localSessions) LiveSessions() ([]service.GatewaySessions, error) {
	return l.Service.LiveSessions(), nil
}

// sessionCommand applies "follow ID", "take ID", "unfollow ID" and
// "sessions" typed in watch. It reports whether the line was one of them.
func sessionCommand(ctx context.Context, out *printer, svc sessions, l string) bool {
	fields := strings.Fields(l)
	if len(fields) == 0 {
		return false
	}
	verb := strings.ToLower(fields[0])
	switch verb {
	case "sessions":
		printSessions(out, svc)
		return true
	case "follow", "take", "unfollow":
	default:
		return false
	}
	if len(fields) < 2 {
		out.line("Give the session: %s ID (its id or stored id; \"sessions\" lists them).", verb)
		return true
	}
	id := fields[1]
	gw, err := gatewayOf(svc, id)
	if err != nil {
		out.line("! %s", approval.VisibleLine(err.Error()))
		return true
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch verb {
	case "follow":
		err = svc.FollowSession(cctx, gw, id)
	case "take":
		err = svc.TakeBack(cctx, gw, id)
		if err == nil {
			out.line("● %s: took session %s back: its live events come to Herald again", gw, approval.VisibleLine(id))
		}
	case "unfollow":
		err = svc.UnfollowSession(gw, id)
		if err == nil {
			out.line("  %s: no longer following %s (it is not followed again automatically)", gw, approval.VisibleLine(id))
		}
	}
	if err != nil {
		out.line("! %s: %v", gw, approval.VisibleLine(err.Error()))
	}
	return true
}

// gatewayOf finds the gateway that lists a session.
func gatewayOf(svc sessions, id string) (string, error) {
	live, err := svc.LiveSessions()
	if err != nil {
		return "", err
	}
	var hits []string
	for _, g := range live {
		for _, l := range g.Sessions {
			if l.ID == id || l.Key == id {
				hits = append(hits, g.Gateway)
				break
			}
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("no gateway lists a session %q: type \"sessions\" to see them", id)
	case 1:
		return hits[0], nil
	}
	return "", fmt.Errorf("session %q is listed on %s: several gateways have it", id, strings.Join(hits, ", "))
}

// printSessions lists every gateway's live sessions.
func printSessions(out *printer, svc sessions) {
	live, err := svc.LiveSessions()
	if err != nil {
		out.line("! cannot list the sessions: %s", approval.VisibleLine(err.Error()))
		return
	}
	if len(live) == 0 {
		out.line("No session list yet (gateways list their sessions once connected).")
		return
	}
	for _, g := range live {
		out.line("%s (%s):", g.Gateway, g.Policy)
		if g.Err != "" {
			out.line("  ! %s", approval.VisibleLine(g.Err))
		}
		if len(g.Sessions) == 0 {
			out.line("  no live sessions")
		}
		for _, l := range g.Sessions {
			state := "not followed"
			switch {
			case l.Elsewhere:
				state = "followed elsewhere now (take " + approval.VisibleLine(l.Key) + ")"
			case l.Followed:
				state = "followed"
			}
			line := fmt.Sprintf("  %s  %q  %s, %s", approval.VisibleLine(l.Key), approval.VisibleLine(l.DisplayName()), approval.VisibleLine(l.Status), state)
			if l.Tool != "" {
				line += " · " + approval.VisibleLine(l.Tool)
			}
			out.line("%s", line)
			if p := firstNonEmpty(l.LastText, l.Preview); p != "" {
				out.line("      %s", oneLine(approval.VisibleLine(p)))
			}
		}
	}
}
