package service

import (
	"fmt"
	"slices"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
)

// Resuming the sessions a user followed before Herald started (the
// settings' sessions, watch --session).
//
// A session followed yesterday may have ended since: the gateway
// restarted while Herald was closed, or its client closed it. Resuming it
// anyway (session.resume with its stored id) would make the gateway build
// a new agent for it, every time Herald starts. So on a dashboard gateway
// Herald waits for the gateway's first listing of its live sessions and
// resumes only the followed sessions it lists; the others are dropped
// with a NoticeGone that says so. A gateway that cannot list its sessions
// (no session.active_list) has each one resumed, as before.

// NoticeGone: a followed session ended on its gateway while Herald was
// not running; Herald no longer follows it.
const NoticeGone NoticeKind = "gone"

// resumeWhenListed registers the sessions to resume on a follower
// source before it starts, so that its first listing decides them. It
// returns those that cannot wait for a listing (another kind of source,
// or listings turned off): followNow follows them once it runs.
func (s *Service) resumeWhenListed(src Source, ids []string) (now []string) {
	if len(ids) == 0 {
		return nil
	}
	if _, ok := src.(source.SessionFollower); !ok || s.cfg.DiscoveryInterval < 0 {
		return ids
	}
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	st := s.liveLocked(src.Name())
	if st.resume == nil {
		st.resume = map[string]bool{}
	}
	for _, id := range ids {
		if id != "" {
			st.resume[id] = true
		}
	}
	return nil
}

// followNow follows ids on a running source; a failure is a problem of
// that source.
func (s *Service) followNow(src Source, ids []string) {
	for _, id := range ids {
		if err := src.Follow(s.ctx, id); err != nil {
			s.problem(src.Name(), err)
		}
	}
}

// resumeDecision splits the sessions waiting to be resumed by one
// listing: those it lists live (returned as listed, to attach by their
// stored key) and those it does not (ended: gone). A listing that failed
// decides nothing (wait for the next), except one the gateway cannot make
// at all: then every session is resumed by its id, as Herald did before
// it could tell.
func resumeDecision(pending []string, d source.Discovery) (resume []source.LiveSession, gone []string, decided bool) {
	if d.Err != "" {
		if !d.Unsupported {
			return nil, nil, false
		}
		for _, id := range pending {
			resume = append(resume, source.LiveSession{ID: id, Key: id})
		}
		return resume, nil, true
	}
	for _, id := range pending {
		found := false
		for _, l := range d.Sessions {
			if l.Key == id || l.ID == id {
				if !l.Followed {
					if l.Key == "" {
						l.Key = id
					}
					resume = append(resume, l)
				}
				found = true
				break
			}
		}
		if !found {
			gone = append(gone, id)
		}
	}
	return resume, gone, true
}

// resumeListedLocked applies one listing to the sessions waiting to be
// resumed on st's gateway: it marks the live ones as being attached (the
// caller attaches them) and returns them with the notices of the gone.
func (s *Service) resumeListedLocked(st *liveState, d source.Discovery) (attach []source.LiveSession, notices []SessionNotice) {
	if len(st.resume) == 0 {
		return nil, nil
	}
	pending := make([]string, 0, len(st.resume))
	for id := range st.resume {
		pending = append(pending, id)
	}
	slices.Sort(pending)
	resume, gone, decided := resumeDecision(pending, d)
	if !decided {
		return nil, nil
	}
	st.resume = nil
	for _, l := range resume {
		if st.attaching[l.Key] {
			continue
		}
		st.attaching[l.Key] = true
		st.seen[l.Key] = true // Herald's own, not "found" driven by another client
		delete(st.offered, l.Key)
		attach = append(attach, l)
	}
	for _, id := range gone {
		notices = append(notices, SessionNotice{Kind: NoticeGone, Gateway: d.Gateway, Key: id, At: d.At})
	}
	return attach, notices
}

// goneNames names the followed sessions of gateway gw that ended while
// Herald was not running (their stored ids, all the settings keep of
// them): by what Herald knows of each now, else by the name the history
// recorded with its last request (one read of the history for them all).
// A session named only "Untitled session" is left out: its id says more.
func (s *Service) goneNames(gw string, ids []string) map[string]string {
	word := conversationWord(s.kindOf(gw))
	untitled := func(name string) bool {
		return name == approval.Naming{Word: word}.Name() || name == approval.Naming{}.Name()
	}
	names := map[string]string{}
	var unnamed []string
	for _, id := range ids {
		if name := s.SessionName(gw, "", id); !untitled(name) {
			names[id] = name
		} else {
			unnamed = append(unnamed, id)
		}
	}
	if len(unnamed) == 0 || s.cfg.Store == nil {
		return names
	}
	es, err := s.cfg.Store.List(approval.Filter{Gateway: gw, Limit: goneHistoryScan})
	if err != nil {
		return names
	}
	for i := len(es) - 1; i >= 0; i-- { // newest first
		e := es[i]
		if _, done := names[e.StoredSession]; done || !slices.Contains(unnamed, e.StoredSession) {
			continue
		}
		if name := (approval.Naming{Title: e.SessionTitle, Word: word}).Name(); !untitled(name) {
			names[e.StoredSession] = name
		}
	}
	return names
}

// goneHistoryScan is how many of a gateway's newest history entries
// goneNames reads for the gone sessions' names.
const goneHistoryScan = 2000

// goneText says for people that a followed session is no longer live, by
// its name; by its id, as a detail, when Herald knows no name ("").
func goneText(gw, name, id string) string {
	if name != "" {
		return fmt.Sprintf("Session %q ended on %s while Herald was not running, so Herald no longer follows it.", approval.VisibleLine(name), approval.VisibleLine(gw))
	}
	return fmt.Sprintf("A session Herald followed ended on %s while Herald was not running, so Herald no longer follows it (its id was %s).", approval.VisibleLine(gw), approval.VisibleLine(id))
}

// resumeNow says which followed sessions are gone and attaches the live
// ones (outside the discovery lock).
func (s *Service) resumeNow(gw string, attach []source.LiveSession, gone []SessionNotice) {
	var names map[string]string
	if len(gone) > 0 {
		ids := make([]string, len(gone))
		for i, n := range gone {
			ids[i] = n.Key
		}
		names = s.goneNames(gw, ids)
	}
	for _, n := range gone {
		n.Name = names[n.Key]
		n.Text = goneText(gw, n.Name, n.Key)
		s.notice(n)
	}
	for _, l := range attach {
		s.attachLive(gw, l, false)
	}
}
