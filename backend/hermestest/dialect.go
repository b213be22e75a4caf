package hermestest

// Dialects by the behaviour change a remote client depends on. Each one
// is a Hermes release line as ../shared/hermes-versions.md dates it;
// PROTOCOL.md cites the source for every rule.
const (
	// Replay is Hermes 0.20.6: per-session seq, replay_epoch in
	// gateway.ready and session.events.since; approvals are still
	// approval.request events without an id, answered with
	// approval.respond (the oldest of the session first); a session's
	// events go to one client at a time.
	Replay Dialect = iota + 100
	// FanOut is Hermes 0.21.1: as Replay, but session.resume,
	// session.activate and prompt.submit attach additively, so every
	// attached client gets the session's events; a client whose
	// mailbox overflows is detached silently (Server.Overflow).
	FanOut
	// Requests is Hermes 0.21.3 and newer: fan-out plus approvals,
	// clarify, sudo and secret as server requests ("srq-<12hex>" ids) to
	// every attached client that sent client.capabilities
	// {server_requests:true}; the first answer wins and request.cancel
	// withdraws the others; waiting in session.active_list;
	// approval.pending and request.answer; open_requests on resume,
	// activate and events.since; an overflowing client is closed 1011.
	Requests
)

// Dialects lists every dialect, oldest first.
var Dialects = []Dialect{Legacy, Replay, FanOut, Requests, Modern}

func (d Dialect) String() string {
	switch d {
	case Modern:
		return "modern"
	case Replay:
		return "0.20.6"
	case FanOut:
		return "0.21.1"
	case Requests:
		return "0.21.3"
	}
	return "0.18.2"
}

// sequenced: events carry seq, gateway.ready carries replay_epoch and
// session.events.since replays.
func (d Dialect) sequenced() bool { return d != Legacy }

// fanOut: every attached client gets a session's events.
func (d Dialect) fanOut() bool { return d == FanOut || d == Requests }

// serverRequests: approvals and prompts are server requests, answered
// by a response frame; client.capabilities and gateway.ping exist;
// open_requests are listed; a pending request makes a session waiting.
func (d Dialect) serverRequests() bool { return d == Modern || d == Requests }

// answersWithoutAttaching: approval.pending and request.answer exist.
func (d Dialect) answersWithoutAttaching() bool { return d == Requests }

// srqID is a server request id as Hermes mints them: "srq-" and twelve
// hex digits (tui_gateway/server_requests.py@087bb308).
func srqID() string { return "srq-" + newID(12) }

// attachLocked makes c a receiver of fs's events: the only one on a
// single-client gateway (the previous one is not told), one more on a
// fan-out gateway.
func (s *Server) attachLocked(fs *fsession, c *fconn) {
	if !s.opts.Dialect.fanOut() || fs.transport == nil || fs.transport == c {
		if fs.transport != c {
			fs.extra = removeConn(fs.extra, c)
		}
		if fs.transport == nil || !s.opts.Dialect.fanOut() {
			fs.transport = c
		}
		return
	}
	for _, o := range fs.extra {
		if o == c {
			return
		}
	}
	fs.extra = append(fs.extra, c)
}

// detachConnLocked removes c from fs's receivers; on a fan-out gateway
// the next attached client keeps the session.
func (fs *fsession) detachConnLocked(c *fconn) {
	fs.extra = removeConn(fs.extra, c)
	if fs.transport == c {
		fs.transport = nil
		if len(fs.extra) > 0 {
			fs.transport, fs.extra = fs.extra[0], fs.extra[1:]
		}
	}
}

func removeConn(list []*fconn, c *fconn) []*fconn {
	out := list[:0]
	for _, o := range list {
		if o != c {
			out = append(out, o)
		}
	}
	return out
}

// receiversLocked lists every client attached to fs, first the oldest.
func (fs *fsession) receiversLocked() []*fconn {
	if fs.transport == nil {
		return nil
	}
	return append([]*fconn{fs.transport}, fs.extra...)
}

// sendRequestLocked sends a server request frame to every attached
// client that declared server_requests. It reports whether some client
// was attached but none of them can answer (Hermes then withdraws the
// request).
func (s *Server) sendRequestLocked(fs *fsession, frame map[string]any) (unanswerable bool) {
	attached := fs.receiversLocked()
	sent := 0
	for _, c := range attached {
		if c.serverRequests {
			c.sendLocked(frame)
			sent++
		}
	}
	return len(attached) > 0 && sent == 0
}

// Overflow makes every WebSocket client (not peers) look stalled to a
// fan-out gateway: its mailbox overflows (256 frames or 4 MiB). 0.21.1
// detaches it from every session without a word; newer builds close it
// with 1011. On single-client dialects it does nothing.
func (s *Server) Overflow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.opts.Dialect.fanOut() {
		return
	}
	for c := range s.conns {
		if c.peer != nil {
			continue
		}
		if s.opts.Dialect == Requests && !s.opts.SilentOverflow {
			c.closeWith(1011, "client too slow")
			continue
		}
		for _, fs := range s.sessions {
			fs.detachConnLocked(c)
		}
	}
	s.notifyLocked()
}

// Receivers counts the clients attached to a session.
func (s *Server) Receivers(sessionID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.sessions[sessionID]
	if fs == nil {
		return 0
	}
	return len(fs.receiversLocked())
}
