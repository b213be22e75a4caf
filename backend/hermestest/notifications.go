package hermestest

import (
	"fmt"
	"time"
)

// Notice is one of Hermes' own out-of-band notices (credits, "still
// starting the agent"), sent as notification.show; see NOTIFICATIONS.md.
type Notice struct {
	Text string
	// Level is info, warn, error or success.
	Level string
	// Kind is sticky, ttl or agent.
	Kind string
	// TTL is sent as ttl_ms (null when zero); Hermes honours it only for
	// Kind "ttl".
	TTL time.Duration
	Key string
	ID  string
}

func (n Notice) payload() map[string]any {
	p := map[string]any{"text": n.Text, "level": n.Level, "kind": n.Kind, "ttl_ms": nil, "key": nil, "id": nil}
	if n.TTL > 0 {
		p["ttl_ms"] = n.TTL.Milliseconds()
	}
	if n.Key != "" {
		p["key"] = n.Key
	}
	if n.ID != "" {
		p["id"] = n.ID
	}
	return p
}

// ShowNotice makes the agent of a session raise a notice
// (notification.show), as tui_gateway's notice callback does. Like every
// session event it goes to the session's attached client only, and is
// sequenced and replayable in the Modern dialect.
func (s *Server) ShowNotice(sessionID string, n Notice) error {
	return s.noticeEvent(sessionID, "notification.show", n.payload())
}

// ClearNotice withdraws the notice with this key (notification.clear).
func (s *Server) ClearNotice(sessionID, key string) error {
	return s.noticeEvent(sessionID, "notification.clear", map[string]any{"key": key})
}

func (s *Server) noticeEvent(sessionID, kind string, payload map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.sessions[sessionID]
	if fs == nil {
		return fmt.Errorf("hermestest: no session %q", sessionID)
	}
	s.emitLocked(fs, kind, payload)
	return nil
}

// Interrupts counts session.interrupt calls received.
func (s *Server) Interrupts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.interrupts
}
