package service

import (
	"strings"

	"github.com/herald-desktop/herald/approval"
)

// SessionNames is the one name of every session Herald sees live, by
// gateway and id (live and stored): what the gateway card, the Sessions
// panel, the quick prompt, the approval sheet, the history and `herald
// log` all call it. Names are raw gateway text: each surface shows them
// through approval.VisibleLine and its encoder.
type SessionNames map[string]string

// Names is the one name of each session of v (see sessionNames).
func (v View) Names() SessionNames { return sessionNames(v.Live, v.Sessions) }

// sessionNames names the sessions Herald follows (SessionName of what
// their events said) and, over them, the sessions the gateways list (their
// DisplayName, which takes a followed session's title where the listing
// has none), so a session listed and followed has one name.
func sessionNames(live []GatewaySessions, sessions []SessionView) SessionNames {
	m := SessionNames{}
	add := func(gw, id, stored, name string) {
		m[gw+"\x00"+id] = name
		if stored != "" {
			m[gw+"\x00"+stored] = name
		}
	}
	for _, s := range sessions {
		add(s.Gateway, s.ID, s.StoredID, SessionName(s.Title, s.StoredID, s.ID))
	}
	for _, g := range live {
		for _, l := range g.Sessions {
			add(g.Gateway, l.ID, l.Key, l.DisplayName())
		}
	}
	return m
}

// Of is the session's one name: the name it has now when Herald sees it
// live, else SessionName of the title recorded with its request (an
// approval's or audit entry's SessionTitle) and its ids, so a session
// that is gone, or from before a restart, keeps its name. A nil
// SessionNames (no live view, as `herald log` without a running Herald)
// names every session from what was recorded.
func (n SessionNames) Of(gateway, id, stored, title string) string {
	if x, ok := n[gateway+"\x00"+id]; ok && id != "" {
		return x
	}
	if x, ok := n[gateway+"\x00"+stored]; ok && stored != "" {
		return x
	}
	return SessionName(title, stored, id)
}

// LogEntry is an audit entry with its session's one name.
type LogEntry struct {
	approval.Entry
	// SessionName is SessionNames.Of the entry's session, raw.
	SessionName string `json:"session_name,omitempty"`
}

// NamedEntries gives each entry its session's one name from names (nil:
// from what each entry recorded).
func NamedEntries(es []approval.Entry, names SessionNames) []LogEntry {
	out := make([]LogEntry, len(es))
	for i, e := range es {
		out[i] = LogEntry{Entry: e}
		if e.Session != "" || e.StoredSession != "" {
			out[i].SessionName = names.Of(e.Gateway, e.Session, e.StoredSession, e.SessionTitle)
		}
	}
	return out
}

// sessionTitle is the title a gateway gives a session now, "" when none:
// the gateway's listing, else what the session's events or Herald's run
// said (Options.SessionTitle of the inbox, which records it with each
// arrival).
func (s *Service) sessionTitle(gw, live, stored string) string {
	if t := strings.TrimSpace(s.titleOf(gw, live, stored)); t != "" {
		return t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := gw + "/" + live
	if v := s.sessions[k]; v != nil {
		return v.Title
	}
	return s.runTitles[k]
}
