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
)

// Stored sessions: the sessions a server keeps that a prompt can continue
// without Herald following them live (source.SessionStore: the API
// server's /api/sessions). Surfaces ask for a listing while they show it
// (the window while it is open, `herald sessions`); nothing polls them in
// the background. The last listing of each server is kept so that a
// session and the turns sent to it have one name on every surface.

// MaxStoredSessions bounds one listing.
const MaxStoredSessions = 100

// StoredSessionsView is one server's stored sessions, for surfaces.
type StoredSessionsView struct {
	Gateway  string              `json:"gateway"`
	At       time.Time           `json:"at"`
	Sessions []StoredSessionView `json:"sessions"`
	// More: the server has more sessions than were listed.
	More bool `json:"more,omitempty"`
	// Note says, for people, what a turn sent to these sessions cannot do
	// on this server (once Herald has learned it).
	Note string `json:"note,omitempty"`
}

// StoredSessionView is one stored session with its one name.
type StoredSessionView struct {
	source.StoredSession
	// Name is what every surface calls it (StoredName), raw.
	Name string `json:"name"`
}

// StoredName is a stored session's one name (approval.Naming): its
// title; else the first words of its first message (what the server
// lists as its preview); else "Untitled session".
func StoredName(s source.StoredSession) string {
	return approval.Naming{Title: s.Title, FirstPrompt: s.Preview, Word: "session"}.Name()
}

// storedState keeps each server's last listing.
type storedState struct {
	mu   sync.Mutex
	last map[string]StoredSessionsView
}

// StoredSessions lists a server's stored sessions (at most
// MaxStoredSessions, the most recently active first) and keeps the
// listing for the sessions' names.
func (s *Service) StoredSessions(ctx context.Context, gw string) (StoredSessionsView, error) {
	gw, st, err := s.sessionStore(gw)
	if err != nil {
		return StoredSessionsView{}, err
	}
	l, err := st.StoredSessions(ctx, MaxStoredSessions)
	if err != nil {
		return StoredSessionsView{}, err
	}
	v := StoredSessionsView{Gateway: gw, At: s.clk.Now(), More: l.More, Note: l.Note, Sessions: make([]StoredSessionView, 0, min(len(l.Sessions), MaxStoredSessions))}
	for _, x := range l.Sessions {
		if len(v.Sessions) == MaxStoredSessions {
			v.More = true
			break
		}
		v.Sessions = append(v.Sessions, StoredSessionView{StoredSession: x, Name: StoredName(x)})
	}
	s.stored.mu.Lock()
	if _, still := s.Source(gw); still {
		if s.stored.last == nil {
			s.stored.last = map[string]StoredSessionsView{}
		}
		s.stored.last[gw] = v
	}
	s.stored.mu.Unlock()
	s.changed()
	return v, nil
}

// storedListings returns every server's last listing, by gateway name,
// each with what its server's turns cannot do as known now.
func (s *Service) storedListings() []StoredSessionsView {
	s.stored.mu.Lock()
	out := make([]StoredSessionsView, 0, len(s.stored.last))
	for _, v := range s.stored.last {
		out = append(out, v)
	}
	s.stored.mu.Unlock()
	for i := range out {
		if src, ok := s.Source(out[i].Gateway); ok {
			if st, ok := src.(source.SessionStore); ok {
				out[i].Note = st.TurnNote()
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Gateway < out[j].Gateway })
	return out
}

// storedName is the name of a stored session in the server's last
// listing ("" when it was not listed).
func (s *Service) storedName(gw, id string) string {
	s.stored.mu.Lock()
	defer s.stored.mu.Unlock()
	for _, x := range s.stored.last[gw].Sessions {
		if x.ID == id {
			return x.Name
		}
	}
	return ""
}

func (s *Service) forgetStored(gw string) {
	s.stored.mu.Lock()
	delete(s.stored.last, gw)
	s.stored.mu.Unlock()
}

// sessionStore finds the server named (or, with no name, the only one)
// that keeps stored sessions.
func (s *Service) sessionStore(gw string) (string, source.SessionStore, error) {
	if gw != "" {
		src, ok := s.Source(gw)
		if !ok {
			return "", nil, fmt.Errorf("no gateway named %q is configured", gw)
		}
		st, ok := src.(source.SessionStore)
		if !ok {
			return "", nil, fmt.Errorf("%s keeps no sessions that Herald can list: its sessions are followed live (Sessions)", gw)
		}
		return gw, st, nil
	}
	var names []string
	var only source.SessionStore
	for _, src := range s.Sources() {
		if st, ok := src.(source.SessionStore); ok {
			names, only = append(names, src.Name()), st
		}
	}
	switch len(names) {
	case 0:
		return "", nil, errors.New("no API server is configured: stored sessions are listed on API servers (add one, or give --api URL)")
	case 1:
		return names[0], only, nil
	}
	return "", nil, fmt.Errorf("more than one API server is configured (%s): name the one to list (on the command line: --gateway NAME)", strings.Join(names, ", "))
}

// storedNames maps "gateway\x00session id" to the stored session's name,
// for every listing.
func storedNames(stored []StoredSessionsView) map[string]string {
	m := map[string]string{}
	for _, g := range stored {
		for _, x := range g.Sessions {
			m[g.Gateway+"\x00"+x.ID] = x.Name
		}
	}
	return m
}
