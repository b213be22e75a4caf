package service

import (
	"fmt"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/addr"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// BridgeName is the name of a gateway's bridge source.
func BridgeName(gateway string) string { return gateway + "-bridge" }

// NoticeApprovalElsewhere: an approval waits on another surface of Hermes
// (a Hermes without approval transports): Herald shows it, the user
// answers it where it was asked. NoticeApprovalEnded: it ended there.
const (
	NoticeApprovalElsewhere NoticeKind = "approval_elsewhere"
	NoticeApprovalEnded     NoticeKind = "approval_ended"
)

// HasBridge reports whether a source of kind may be followed with a
// Herald bridge beside it (SourceConfig.Bridge; source.Driver.Beside).
func HasBridge(kind Kind) bool {
	d, err := source.Lookup(string(kind))
	if err != nil {
		return false
	}
	_, ok := source.BesideOf(d.Kind)
	return ok
}

// rides reports whether src is followed beside another source (a
// gateway's bridge: source.Driver.Beside).
func rides(src Source) bool {
	d, err := source.Lookup(string(src.Kind()))
	return err == nil && d.Beside != ""
}

// addBridgeOf follows the bridge of the gateway source gw (same URL and
// credentials), a source of kind named BridgeName(gw).
func (s *Service) addBridgeOf(gw string, kind Kind, cfg SourceConfig) error {
	b := cfg
	b.Kind, b.Name, b.Bridge, b.Resume = kind, BridgeName(gw), false, nil
	if _, err := s.AddSource(b); err != nil {
		return fmt.Errorf("the gateway %s was added, its Herald bridge was not: %w", gw, err)
	}
	return nil
}

// waitingNotice turns an approval waiting on another surface into a
// session notice; it reports whether ev was one. An approval of one of
// the dashboard's own sessions that Herald follows on its /api/ws is
// the same request as the one there, answerable there: no notice.
func (s *Service) waitingNotice(ev wire.Event) bool {
	if ev.Kind != source.EventWaitingElsewhere && ev.Kind != source.EventWaitingElsewhereEnd {
		return false
	}
	p, _ := ev.Data.(*source.WaitingPayload)
	if p == nil {
		return true
	}
	if p.Dashboard && s.followsOnGatewayOf(ev.Gateway, p.SessionID, p.SessionKey) {
		return true
	}
	where := approval.VisibleLine(p.Where)
	if p.Chat != "" {
		where += " (" + approval.VisibleLine(p.Chat) + ")"
	}
	cmd := approval.FirstLine(approval.Redact(p.Command))
	n := SessionNotice{Gateway: ev.Gateway, Session: ev.Session, Key: p.SessionKey, Title: p.Title, At: ev.ReceivedAt}
	if ev.Kind == source.EventWaitingElsewhereEnd {
		n.Kind, n.Status = NoticeApprovalEnded, p.Outcome
		n.Text = fmt.Sprintf("the approval in %s ended (%s): `%s`", where, approval.VisibleLine(p.Outcome), cmd)
	} else {
		n.Kind, n.Status = NoticeApprovalElsewhere, "waiting"
		n.Text = fmt.Sprintf("an approval is waiting in %s: `%s`. Answer it where it was asked.", where, cmd)
	}
	s.notice(n)
	return true
}

// rememberBase records which dashboard a source talks to.
func (s *Service) rememberBase(name, rawURL string) {
	u, err := addr.DashboardBase(rawURL)
	if err != nil {
		return
	}
	s.src.mu.Lock()
	defer s.src.mu.Unlock()
	if s.src.base == nil {
		s.src.base = map[string]string{}
	}
	s.src.base[name] = u.String()
}

// followsOnGatewayOf reports whether Herald follows the session (live id
// or stored key) on a dashboard gateway of the same dashboard as the
// bridge named bridgeName (the same address, or the gateway the bridge
// was added with).
func (s *Service) followsOnGatewayOf(bridgeName, live, key string) bool {
	s.src.mu.Lock()
	base := s.src.base[bridgeName]
	var gws []string
	for name, b := range s.src.base {
		if name != bridgeName && (b == base && base != "" || BridgeName(name) == bridgeName) {
			gws = append(gws, name)
		}
	}
	s.src.mu.Unlock()
	for _, gw := range gws {
		c, ok := s.follower(gw)
		if !ok {
			continue
		}
		for _, r := range c.Followed() {
			if !r.Elsewhere && ((live != "" && r.ID == live) || (key != "" && r.StoredID == key)) {
				return true
			}
		}
	}
	return false
}

// retryBridgeOf retries at once the Herald bridge beside the gateway gw
// when it waits for the user (refused, or the plugin not installed): the
// gateway's link just came up, perhaps from a restarted dashboard, the
// step that installing the plugin or changing the token ends with. A
// refusal is never retried on a timer (source.Supervisor); this is the
// sign that the server changed.
func (s *Service) retryBridgeOf(gw string) {
	b, ok := s.Source(BridgeName(gw))
	if ok && rides(b) && b.Status().State.NeedsUser() {
		b.ReconnectNow()
	}
}
