package service

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
)

// SessionNames is the one name of every session Herald sees live, by
// gateway and id (live and stored): what the gateway card, the Sessions
// panel, the quick prompt, the approval sheet, the tray, the
// notifications, the history, `herald pending` and `herald log` all call
// it (approval.Naming.Name: the gateway's title, else the first words of
// its first prompt, else "Untitled session, started 13:54"). Names are
// raw gateway text: each surface shows them through approval.VisibleLine
// and its encoder.
type SessionNames map[string]string

// Names is the one name of each session of v (see sessionNames).
func (v View) Names() SessionNames { return sessionNames(v.Live, v.Sessions, v.Stored) }

// conversationWord is what the transport of gateway gw calls a
// conversation ("session", "run"), from the sessions it has: a gateway
// that lists sessions has sessions.
func conversationWord(kind string) string { return source.WordsOf(kind).Conversation }

// sessionNames names the sessions Herald follows (their title, the first
// prompt Herald sent, when Herald first saw them) and, over them, the
// sessions the gateways list (LiveSessions has merged what Herald knows of
// a followed one into its row), so a session listed and followed has one
// name. A server's stored sessions are named by StoredName, and so is a
// turn Herald sent to one (its run carries the session as its stored id).
func sessionNames(live []GatewaySessions, sessions []SessionView, stored []StoredSessionsView) SessionNames {
	m := SessionNames{}
	add := func(gw, id, stored, name string) {
		m[gw+"\x00"+id] = name
		if stored != "" {
			m[gw+"\x00"+stored] = name
		}
	}
	kept := storedNames(stored)
	for _, s := range sessions {
		name := s.Naming().Name()
		if n, ok := kept[s.Gateway+"\x00"+s.StoredID]; ok && s.StoredID != "" {
			name = n
		}
		add(s.Gateway, s.ID, s.StoredID, name)
	}
	for k, n := range kept {
		m[k] = n
	}
	for _, g := range live {
		for _, l := range g.Sessions {
			add(g.Gateway, l.ID, l.Key, l.DisplayName())
		}
	}
	return m
}

// Naming is what the session's one name is made of.
func (v SessionView) Naming() approval.Naming {
	return approval.Naming{Title: v.Title, FirstPrompt: v.FirstPrompt, Started: v.Started, Word: v.Word}
}

// Of is the session's one name: the name it has now when Herald sees it
// live, else the name recorded with its request (an approval's or audit
// entry's SessionTitle, the one name when it arrived), so a session that
// is gone, or from before a restart, keeps its name. A nil SessionNames
// (no live view, as `herald log` without a running Herald) names every
// session from what was recorded.
func (n SessionNames) Of(gateway, id, stored, recorded string) string {
	if x, ok := n[gateway+"\x00"+id]; ok && id != "" {
		return x
	}
	if x, ok := n[gateway+"\x00"+stored]; ok && stored != "" {
		return x
	}
	return approval.Naming{Title: recorded}.Name()
}

// Named is r with its session's one name now in SessionTitle (what
// approval.Request.RecordedName and every surface read), for surfaces
// that get requests without a view (`herald pending`).
func (n SessionNames) Named(r approval.Request) approval.Request {
	r.SessionTitle = n.Of(r.Gateway, r.Session, r.StoredSession, r.SessionTitle)
	return r
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

// sessionTitle is the one name a session has now (Options.SessionTitle of
// the inbox, which records it with each arrival, so the history and a
// restart keep it): the gateway's listing, with what Herald knows of the
// session (its title from its events, the first prompt Herald sent), as
// SessionNames names it.
func (s *Service) sessionTitle(gw, live, stored string) string {
	if n := s.storedName(gw, stored); stored != "" && n != "" {
		return n // a turn sent to a stored session bears the session's name
	}
	l, listed := s.listed(gw, live, stored)
	word := conversationWord(s.kindOf(gw))
	s.mu.Lock()
	defer s.mu.Unlock()
	k := gw + "/" + live
	n := approval.Naming{Word: word}
	if v := s.sessions[k]; v != nil {
		n = v.Naming()
	} else {
		n.FirstPrompt = s.firstPrompts[k]
	}
	if listed {
		n.Title = firstNonBlank(l.Title, n.Title)
		n.FirstPrompt = firstNonBlank(n.FirstPrompt, l.FirstPrompt)
		if !l.StartedAt.IsZero() {
			n.Started = l.StartedAt
		}
	}
	return n.Name()
}

// firstNonBlank is the first of ss with text in it.
func firstNonBlank(ss ...string) string {
	for _, x := range ss {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

// TypedID reads an id as a user typed it, in any form Herald ever showed
// one: whole ("run_45e66398…", "20261204_135455_af6559"), with its gateway
// ("lab/run_45e6…"), with its kind's word before it ("run 45e66398", as
// Herald once named runs), cut to a prefix ("45e66398"), quoted or
// with spaces around it. It returns the gateway the id named (or gw) and
// the id without those wrappings.
func TypedID(gw, typed string) (string, string) {
	id := strings.Trim(strings.TrimSpace(typed), "\"'`“”‘’")
	if gw == "" {
		if i := strings.Index(id, "/"); i > 0 {
			gw, id = id[:i], id[i+1:]
		}
	} else {
		id = strings.TrimPrefix(id, gw+"/")
	}
	for _, w := range []string{"run ", "session ", "run:", "session:"} {
		if len(id) > len(w) && strings.EqualFold(id[:len(w)], w) {
			id = strings.TrimSpace(id[len(w):])
		}
	}
	return gw, id
}

// ResolveConversation is the conversation (session or run) of gateway gw
// that a typed id names (TypedID): the live id of the one Herald knows
// whose live or stored id it is, or starts with; else, when Herald knows
// none, the id as typed (unwrapped), for the gateway to judge. An id that
// starts more than one is refused, naming them.
func (s *Service) ResolveConversation(gw, typed string) (string, error) {
	_, id := TypedID(gw, typed)
	if id == "" {
		return "", errors.New("no id given")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var hits []string
	for _, v := range s.sessions {
		if v.Gateway != gw {
			continue
		}
		if v.ID == id || v.StoredID == id {
			return v.ID, nil
		}
		if strings.HasPrefix(v.ID, id) || strings.HasPrefix(strings.TrimPrefix(v.ID, "run_"), id) || (v.StoredID != "" && strings.HasPrefix(v.StoredID, id)) {
			hits = append(hits, v.ID)
		}
	}
	switch len(hits) {
	case 0:
		return id, nil
	case 1:
		return hits[0], nil
	}
	slices.Sort(hits)
	return "", fmt.Errorf("%q starts %d ids on %s (%s): give more of it", id, len(hits), gw, strings.Join(hits, ", "))
}

// SessionName is the one name the session of gateway gw with live id live
// (stored id stored) has now, as SessionNames names it.
func (s *Service) SessionName(gw, live, stored string) string {
	return s.sessionTitle(gw, live, stored)
}
