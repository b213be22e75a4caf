package hermestest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
)

type ringEntry struct {
	seq    uint64
	params map[string]any
}

type fsession struct {
	live, stored      string
	transport         *fconn
	extra             []*fconn // fan-out: the other attached clients
	seq               uint64
	ring              []ringEntry
	evictedThrough    uint64
	pending           []*fapproval // FIFO
	prompts           []*fprompt   // clarify, sudo and secret prompts waiting
	history           []map[string]string
	running           bool
	cold              bool // a restart or reap left only stored history
	hasRow            bool // the store has a row (after the first prompt)
	closeOnDisconnect bool
	stop              chan struct{}
	intr              chan struct{} // closed by session.interrupt
	// What session.active_list shows.
	n                   int // creation order
	title               string
	created, lastActive time.Time
	userText, inflight  string        // the running turn's prompt and streamed text
	release             chan struct{} // ends a "hold" turn
	queued              string        // a prompt submitted during a turn
}

func (fs *fsession) stopAgent() {
	if fs.stop != nil {
		close(fs.stop)
		fs.stop = nil
	}
	fs.intr = nil
	fs.queued = ""
	for _, a := range fs.pending {
		a.finish("")
	}
	fs.pending = nil
	for _, p := range fs.prompts {
		p.finish(PromptResult{Ended: "interrupted"})
	}
	fs.prompts = nil
}

// fapproval is one approval the agent is waiting on.
type fapproval struct {
	id             string // srq id (the server request's JSON-RPC id)
	queueID        string // the approval-queue id (request_id on the wire)
	session        string
	command        string
	description    string
	patternKey     string
	choices        []string
	allowPermanent bool
	serverRequest  bool // sent as an "approval" server request
	expiresAt      time.Time
	monoExpiry     float64 // expires_at as the gateway sends it: its monotonic seconds
	waiter[string]         // done carries the choice; "" for timeout or interrupt
}

// waiter is what an approval and a prompt the agent waits on share: one
// result on done, stopped closed when it ended, and its expiry timer.
type waiter[T any] struct {
	timer    clock.Timer
	done     chan T
	stopped  chan struct{}
	finished bool
}

func newWaiter[T any]() waiter[T] {
	return waiter[T]{done: make(chan T, 1), stopped: make(chan struct{})}
}

// finish ends the wait once with r; later calls do nothing.
func (w *waiter[T]) finish(r T) {
	if w.finished {
		return
	}
	w.finished = true
	close(w.stopped)
	if w.timer != nil {
		w.timer.Stop()
	}
	w.done <- r
}

func (a *fapproval) params() map[string]any {
	p := map[string]any{
		"session_id":      a.session,
		"command":         a.command,
		"description":     a.description,
		"pattern_key":     a.patternKey,
		"pattern_keys":    []string{a.patternKey},
		"allow_permanent": a.allowPermanent,
		"choices":         a.choices,
	}
	return p
}

// serverRequestFrame is the Modern "approval" server request.
func (a *fapproval) serverRequestFrame() map[string]any {
	p := a.params()
	p["request_id"] = a.queueID
	p["approval_id"] = a.queueID
	p["expires_at"] = a.monoExpiry
	id, _ := json.Marshal(a.id)
	return map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": "approval", "params": p}
}

// Session describes a session on the fake gateway.
type Session struct {
	ID, StoredID string
	Attached     bool
	Pending      []string // commands waiting for approval, FIFO
	LatestSeq    uint64
	Running      bool // a turn is in progress
}

// Sessions lists live sessions.
func (s *Server) Sessions() []Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Session
	for _, fs := range s.sessions {
		ss := Session{ID: fs.live, StoredID: fs.stored, Attached: fs.transport != nil, LatestSeq: fs.seq, Running: fs.running}
		for _, a := range fs.pending {
			ss.Pending = append(ss.Pending, a.command)
		}
		out = append(out, ss)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// CreateSession makes a session as another client would (with its stored
// row, no client attached) and returns its live and stored ids; a Herald
// client can then follow it with session.resume.
func (s *Server) CreateSession() (live, stored string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.newSessionLocked("")
	fs.hasRow = true
	s.notifyLocked()
	return fs.live, fs.stored
}

// Prompt starts a turn in a session the way the gateway itself does (a
// queued or scheduled turn): the session's transport does not move. To
// drive a session as another client would, use a Peer: its prompt.submit
// moves the session's live events to it.
func (s *Server) Prompt(sessionID, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.sessions[sessionID]
	if fs == nil {
		return fmt.Errorf("hermestest: no session %q", sessionID)
	}
	if fs.running {
		return fmt.Errorf("hermestest: session %q is busy", sessionID)
	}
	s.startTurnLocked(fs, text)
	return nil
}

// Release ends a "hold" turn (see runAgent).
func (s *Server) Release(sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.sessions[sessionID]
	if fs == nil || fs.release == nil {
		return fmt.Errorf("hermestest: session %q holds no turn", sessionID)
	}
	close(fs.release)
	fs.release = nil
	return nil
}

// SetTitle sets a session's title (as session.title would).
func (s *Server) SetTitle(sessionID, title string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.sessions[sessionID]
	if fs == nil {
		return fmt.Errorf("hermestest: no session %q", sessionID)
	}
	fs.title = title
	s.notifyLocked()
	return nil
}

// liveStatusLocked is a session's status as session.active_list and
// session.resume report it. 0.18.2 says "working" while an approval waits
// (captured: 13_approval_emitted_while_disconnected); newer gateways count
// a pending approval as "waiting".
func (s *Server) liveStatusLocked(fs *fsession) string {
	switch {
	case (len(fs.pending) > 0 || len(fs.prompts) > 0) && s.opts.Dialect.serverRequests():
		return "waiting"
	case fs.running:
		return "working"
	}
	return "idle"
}

// previewLocked mirrors Hermes: the running turn's streamed text, else the
// last message, whitespace collapsed, at most 160 characters.
func (s *Server) previewLocked(fs *fsession) string {
	text := ""
	if fs.running {
		text = fs.inflight
		if text == "" {
			text = fs.userText
		}
	} else if n := len(fs.history); n > 0 {
		text = fs.history[n-1]["text"]
	}
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > 160 {
		text = string(r[:160])
	}
	return text
}

// activeItemLocked is one session.active_list row, with the fields a
// 0.18.2 gateway sends (captured: 10_protocol_probe).
func (s *Server) activeItemLocked(fs *fsession, current string) map[string]any {
	return map[string]any{
		"current": fs.live == current, "id": fs.live,
		"last_active": float64(fs.lastActive.UnixNano()) / 1e9, "message_count": len(fs.history),
		"model": "hermes-stub", "preview": s.previewLocked(fs), "session_key": fs.stored,
		"started_at": float64(fs.created.UnixNano()) / 1e9, "status": s.liveStatusLocked(fs), "title": fs.title,
	}
}

func (s *Server) newSessionLocked(stored string) *fsession {
	if stored == "" {
		stored = s.clk.Now().UTC().Format("20060102_150405_") + newID(6)
	}
	s.nextSession++
	now := s.clk.Now()
	fs := &fsession{live: newID(8), stored: stored, n: s.nextSession, created: now, lastActive: now}
	s.sessions[fs.live] = fs
	s.stored[stored] = fs
	return fs
}

// emitLocked sends an event for a session: stamped with seq and kept for
// replay (Modern), written to the attached transport if there is one.
func (s *Server) emitLocked(fs *fsession, kind string, payload any) {
	fs.lastActive = s.clk.Now()
	switch kind {
	case "message.start":
		fs.inflight = ""
	case "message.delta":
		if p, ok := payload.(map[string]any); ok {
			t, _ := p["text"].(string)
			if len(fs.inflight) < 4096 {
				fs.inflight += t
			}
		}
	case "message.complete":
		fs.inflight = ""
	}
	frame := eventFrame(kind, fs.live, payload)
	if s.opts.Dialect.sequenced() {
		params := frame["params"].(map[string]any)
		fs.seq++
		params["seq"] = fs.seq
		fs.ring = append(fs.ring, ringEntry{seq: fs.seq, params: params})
		for len(fs.ring) > s.opts.ReplayBuffer {
			fs.evictedThrough = fs.ring[0].seq
			fs.ring = fs.ring[1:]
		}
	}
	for _, c := range fs.receiversLocked() {
		c.sendLocked(frame)
	}
}

// Emit sends an event for a live session, as the agent would.
func (s *Server) Emit(sessionID, kind string, payload any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.sessions[sessionID]
	if fs == nil {
		return fmt.Errorf("hermestest: no session %q", sessionID)
	}
	s.emitLocked(fs, kind, payload)
	return nil
}

// ApprovalSpec describes an approval the agent asks for.
type ApprovalSpec struct {
	// ID is the server request id to use (default "srq-N"); a faulty or
	// hostile gateway may reuse one.
	ID          string
	Command     string
	Description string
	// NoPermanent hides "always" (allow_permanent false).
	NoPermanent bool
	// held: queued, but its approval.request (event form) is sent later
	// by announceLocked, as Hermes' two steps allow (Options.SwapParallel).
	held bool
}

// RequestApproval makes the agent of a session ask for approval and returns
// the request's id and a channel that receives the choice ("" on timeout or
// interrupt). It does not block.
func (s *Server) RequestApproval(sessionID string, spec ApprovalSpec) (string, <-chan string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.sessions[sessionID]
	if fs == nil {
		return "", nil, fmt.Errorf("hermestest: no session %q", sessionID)
	}
	a := s.requestApprovalLocked(fs, spec)
	return a.id, a.done, nil
}

func (s *Server) requestApprovalLocked(fs *fsession, spec ApprovalSpec) *fapproval {
	desc := spec.Description
	if desc == "" {
		desc = describe(spec.Command)
	}
	choices := []string{"once", "session", "always", "deny"}
	if spec.NoPermanent {
		choices = []string{"once", "session", "deny"}
	}
	s.nextSRQ++
	id := spec.ID
	if id == "" {
		id = fmt.Sprintf("srq-%d", s.nextSRQ)
		if s.opts.Dialect == Requests {
			id = srqID()
		}
	}
	a := &fapproval{
		id:             id,
		session:        fs.live,
		command:        spec.Command,
		description:    desc,
		patternKey:     desc,
		choices:        choices,
		allowPermanent: !spec.NoPermanent,
		queueID:        newID(32),
		expiresAt:      s.clk.Now().Add(s.opts.ApprovalTimeout),
		monoExpiry:     s.clk.Now().Add(s.opts.ApprovalTimeout).Sub(s.started).Seconds() + 1000,
		waiter:         newWaiter[string](),
	}
	fs.pending = append(fs.pending, a)
	a.timer = s.clk.NewTimer(s.opts.ApprovalTimeout)
	go func(t clock.Timer) {
		select {
		case <-t.C():
			s.mu.Lock()
			s.expireLocked(fs, a)
			s.mu.Unlock()
		case <-a.stopped:
		}
	}(a.timer)
	switch {
	case !s.opts.Dialect.serverRequests():
		if !spec.held {
			s.announceLocked(fs, a)
		}
	case s.opts.Dialect == Requests:
		// Sent to every attached client that can answer it; with none
		// attached it waits for open_requests; with only clients that
		// cannot answer it, it is withdrawn.
		a.serverRequest = true
		if s.sendRequestLocked(fs, a.serverRequestFrame()) {
			s.removePendingLocked(fs, a)
			a.finish("")
			s.withdrawn++
		}
	case fs.transport == nil:
		// Nobody attached: the request waits and is offered through
		// open_requests when a client resumes.
		a.serverRequest = true
	case fs.transport.serverRequests:
		a.serverRequest = true
		fs.transport.sendLocked(a.serverRequestFrame())
	default:
		// The attached client never advertised server requests: Hermes
		// withdraws the approval at once (neither a deny nor a hang).
		s.removePendingLocked(fs, a)
		a.finish("")
		s.withdrawn++
	}
	s.notifyLocked()
	return a
}

// announceLocked sends the event form's approval.request for a, queued.
func (s *Server) announceLocked(fs *fsession, a *fapproval) {
	// No request_id on the event before 0.21.3 (PROTOCOL.md).
	p := a.params()
	delete(p, "session_id")
	if s.is019() {
		p["allow_session"] = true
	}
	s.emitLocked(fs, "approval.request", p)
}

func describe(cmd string) string {
	switch {
	case strings.Contains(cmd, "rm -rf"):
		return "recursive delete"
	case strings.Contains(cmd, "git reset --hard"):
		return "git reset --hard (destroys uncommitted changes)"
	}
	return "dangerous command"
}

func (s *Server) removePendingLocked(fs *fsession, a *fapproval) {
	for i, p := range fs.pending {
		if p == a {
			fs.pending = append(fs.pending[:i], fs.pending[i+1:]...)
			return
		}
	}
}

func (s *Server) expireLocked(fs *fsession, a *fapproval) {
	if a.finished {
		return
	}
	s.removePendingLocked(fs, a)
	a.finish("")
	s.cancelLocked(fs, a, "timeout")
	s.notifyLocked()
}

// cancelLocked withdraws a server request that is no longer pending. Newer
// gateways send request.cancel as a sequenced event, so it is replayed.
func (s *Server) cancelLocked(fs *fsession, a *fapproval, reason string) {
	if !s.opts.Dialect.serverRequests() || !a.serverRequest {
		return
	}
	s.emitLocked(fs, "request.cancel", map[string]any{"id": a.id, "method": "approval", "reason": reason})
}

// resolveLocked records an answer and wakes the agent.
func (s *Server) resolveLocked(fs *fsession, a *fapproval, choice, via string, notifyCancel bool) {
	s.removePendingLocked(fs, a)
	a.finish(choice)
	s.answers = append(s.answers, Answer{Session: fs.live, RequestID: a.id, QueueID: a.queueID, Choice: choice, Via: via, Command: a.command, Resolved: 1})
	if notifyCancel {
		s.cancelLocked(fs, a, "resolved")
	}
	s.notifyLocked()
}

// ResolveElsewhere answers a pending approval as another client would
// (approval.respond by request id from a different connection).
func (s *Server) ResolveElsewhere(sessionID, srqID, choice string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.sessions[sessionID]
	if fs == nil {
		return 0, fmt.Errorf("hermestest: no session %q", sessionID)
	}
	for _, a := range fs.pending {
		if a.id == srqID {
			s.resolveLocked(fs, a, choice, "elsewhere", true)
			return 1, nil
		}
	}
	return 0, nil
}

// SendServerRequest sends an arbitrary server request (method, params) to
// the client attached to a session and returns its id; the client's
// response is kept for Response.
func (s *Server) SendServerRequest(sessionID, method string, params map[string]any) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.sessions[sessionID]
	if fs == nil || fs.transport == nil {
		return "", fmt.Errorf("hermestest: session %q has no attached client", sessionID)
	}
	s.nextSRQ++
	id := fmt.Sprintf("srq-x%d", s.nextSRQ)
	if params == nil {
		params = map[string]any{}
	}
	params["session_id"] = sessionID
	raw, _ := json.Marshal(id)
	fs.transport.sendLocked(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(raw), "method": method, "params": params})
	return id, nil
}

// Response returns the client's whole response frame to a server request.
func (s *Server) Response(id string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.responses[id]
	return r, ok
}

// serverRequestAnsweredLocked handles a client response to a server request.
func (s *Server) serverRequestAnsweredLocked(c *fconn, f rpcFrame) {
	var id string
	if json.Unmarshal(f.ID, &id) != nil {
		return
	}
	whole, _ := json.Marshal(f)
	s.responses[id] = whole
	s.notifyLocked()
	s.answerRequestLocked(c, f, "response")
}

// answerRequestLocked settles the open request f.ID with f's result or
// error; false when nothing waits under that id (the first answer won).
func (s *Server) answerRequestLocked(c *fconn, f rpcFrame, via string) bool {
	var id string
	if json.Unmarshal(f.ID, &id) != nil {
		return false
	}
	if s.promptAnsweredLocked(id, f) {
		return true
	}
	for _, fs := range s.sessions {
		for _, a := range fs.pending {
			if a.id != id {
				continue
			}
			var r struct {
				Choice string `json:"choice"`
			}
			if len(f.Error) > 0 {
				// An error response settles the request for every
				// client: the approval is withdrawn (not denied).
				s.removePendingLocked(fs, a)
				a.finish("")
				s.withdrawn++
				if s.opts.Dialect.fanOut() && !s.opts.NoCancelAfterResponse {
					s.cancelLocked(fs, a, "resolved")
				}
				s.notifyLocked()
				return true
			}
			if json.Unmarshal(f.Result, &r) != nil || r.Choice == "" {
				r.Choice = "deny" // Hermes: str(result.get("choice") or "deny")
			}
			if !validChoice(r.Choice) {
				r.Choice = "deny"
			}
			// The first answer wins. Whether the others hear of it
			// depends on the reading (Options.NoCancelAfterResponse).
			// request.answer settles through the approval queue, whose
			// settle hook always withdraws the request everywhere.
			s.resolveLocked(fs, a, r.Choice, via, via == "request.answer" || s.opts.Dialect.fanOut() && !s.opts.NoCancelAfterResponse)
			return true
		}
	}
	return false
}

func validChoice(c string) bool {
	switch c {
	case "once", "session", "always", "deny":
		return true
	}
	return false
}

func (s *Server) openRequestsLocked(fs *fsession) []any {
	out := []any{}
	if !s.opts.Dialect.serverRequests() {
		return out
	}
	for _, a := range fs.pending {
		out = append(out, a.serverRequestFrame())
	}
	return append(out, s.openPromptFramesLocked(fs)...)
}
