package service

import (
	"fmt"
	"sort"

	"github.com/herald-desktop/herald/approval"
)

// Bounds on the live view, which a gateway fills with whatever sessions
// and text it reports.
const (
	// MaxSessionsPerGateway is how many sessions the live view tracks per
	// gateway; past it the least recently active idle one is forgotten
	// (the gateway keeps it; it comes back with its next event) and the
	// view says so.
	MaxSessionsPerGateway = 500
	// maxSessionField bounds a session's title, model, tool and status.
	maxSessionField = 512
)

// boundSession cuts a session's gateway-sent fields to maxSessionField.
func boundSession(v *SessionView) {
	for _, f := range []*string{&v.Title, &v.Model, &v.Tool, &v.Status, &v.StoredID} {
		if cut, ok := approval.Truncate(*f, maxSessionField); ok {
			*f = cut + "…"
		}
	}
}

// makeRoomLocked forgets the least recently active session of gateway
// (idle ones first) when it tracks MaxSessionsPerGateway already.
func (s *Service) makeRoomLocked(gateway string) {
	if s.sessionCount[gateway] < MaxSessionsPerGateway {
		return
	}
	var victim string
	var best *SessionView
	for k, v := range s.sessions {
		if v.Gateway != gateway {
			continue
		}
		if best == nil || (best.Running && !v.Running) || (best.Running == v.Running && v.Updated.Before(best.Updated)) {
			victim, best = k, v
		}
	}
	if best == nil {
		return
	}
	delete(s.sessions, victim)
	s.sessionCount[gateway]--
	s.sessionsDropped[gateway]++
}

// limitWarningsLocked says which bounds were hit, for every surface.
func (s *Service) limitWarningsLocked(floods []approval.Flood) []string {
	var out []string
	for _, f := range floods {
		out = append(out, f.Message())
	}
	gws := make([]string, 0, len(s.sessionsDropped))
	for gw := range s.sessionsDropped {
		gws = append(gws, gw)
	}
	sort.Strings(gws)
	for _, gw := range gws {
		out = append(out, fmt.Sprintf("gateway %s reports more than %d sessions; Herald shows the %d most recently active (%d others were set aside and come back when they are active again)", gw, MaxSessionsPerGateway, MaxSessionsPerGateway, s.sessionsDropped[gw]))
	}
	return out
}
