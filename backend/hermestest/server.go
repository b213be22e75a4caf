// Package hermestest is an in-process fake of the Hermes gateway's /api/ws
// JSON-RPC protocol, in the spirit of net/http/httptest. It speaks both the
// 0.18.2 dialect (no ping, capabilities or replay; approval.request events
// answered FIFO per session) and the newer one (per-session seq, replay
// epoch, session.events.since, approval server requests, request.cancel,
// open_requests, password sign-in with single-use WebSocket tickets), and it
// injects faults: dropped connections at a chosen frame, delays, duplicated
// frames, restarts with a new epoch and refused authentication.
//
// Tests drive it directly (Emit, RequestApproval, RequestPrompt) or through
// prompts that a small scripted agent answers like Hermes' stub agent
// ("approve-me: CMD", "clarify: QUESTION", "sudo: CMD", "secret: ENV").
// Clarify, sudo and secret prompts come in both dialects (events answered
// with <kind>.respond, or server requests); PROMPTS.md records the real
// protocol they follow.
package hermestest

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/herald-desktop/herald/backend/clock"
)

// Dialect selects which Hermes protocol generation the fake speaks.
type Dialect int

const (
	// Legacy is Hermes 0.18.2: no gateway.ping, client.capabilities or
	// session.events.since (-32601), no seq, approvals as events without
	// ids, answered FIFO; events for a detached session are lost.
	Legacy Dialect = iota
	// Modern adds seq/replay_epoch, session.events.since, gateway.ping,
	// client.capabilities, approval server requests and request.cancel,
	// on a gateway that still sends each session's events to one client
	// at a time. No release is exactly that: it is the reading of
	// 0.21.3 under which fan-out is absent (see dialect.go for the
	// release dialects).
	Modern
)

// Options configures a fake gateway.
type Options struct {
	Dialect Dialect
	// ReuseIDsAfterRestart starts server request ids again at srq-1 after
	// Restart, as a restarted process with a counter would.
	ReuseIDsAfterRestart bool
	// Token is the loopback token (?token=). Empty means "test-token".
	Token string
	// Password switches on gated mode (password login + tickets); the
	// query token is then not accepted.
	Password string
	// ReplayBuffer is the per-session ring size (Modern; default 512).
	ReplayBuffer int
	// ApprovalTimeout is how long the agent waits for an answer
	// (default 300 s), measured on Clock.
	ApprovalTimeout time.Duration
	// Clock drives approval timeouts and ticket lifetimes (default real).
	Clock clock.Clock
	// StepDelay paces the scripted agent's frames (default 0).
	StepDelay time.Duration
	// TLS serves https/wss with a self-signed certificate (see
	// Server.Certificate).
	TLS bool
	// Version is the release a Legacy fake speaks as: "0.18.2" (the
	// default) or "0.19.0", which adds allow_session to approval.request,
	// says desktop_contract 4 and marks a finished turn idle only a moment
	// (Settle) after message.complete, so that a prompt.submit in between
	// answers "queued" (see PROTOCOL.md, "Conformance").
	Version string
	// Settle is that moment for Version "0.19.0", on Clock (default 200ms).
	Settle time.Duration
	// ExclusiveSubmit models newer builds that refuse a prompt.submit on
	// a session another connected client owns (error 4090) instead of
	// moving it.
	ExclusiveSubmit bool
	// NoCancelAfterResponse models server_requests.py@087bb308, where a
	// response frame pops the request before the approval queue settles
	// it, so no request.cancel reaches the other attached clients.
	// Without it, every settlement withdraws the request everywhere
	// (the settle-hook reading). Herald must work under both.
	NoCancelAfterResponse bool
	// SilentOverflow makes Overflow detach silently on the Requests
	// dialect too (builds between 0.21.1's silent detach and the 1011
	// close are not dated; see PROTOCOL.md).
	SilentOverflow bool
	// ActiveSessionLimit refuses session.create beyond this many live
	// sessions with 4090 "at the active session limit (N/M)" (0 = none).
	ActiveSessionLimit int
	// ResolvedAsBool answers approval.respond with {"resolved": true}
	// (false when nothing was pending) instead of the count, as 0.21.0
	// did by third-party ledgers of the real gateway (see PROTOCOL.md;
	// not confirmed from Hermes' source).
	ResolvedAsBool bool
	// SwapParallel makes approve-par (event form) queue its approvals in
	// order and announce them in the reverse order, which 0.18.2 and
	// 0.19.0 allow when two threads of one session ask at once: each
	// queues its approval, runs plugin hooks, then announces it
	// (PROTOCOL.md, "Two approvals in one turn"). An id-less answer
	// still goes to the queue's head: the approval announced last.
	SwapParallel bool
}

// Answer is one approval answer the gateway received.
type Answer struct {
	Session   string // live session id
	RequestID string // srq id of the approval answered (empty if none was pending)
	QueueID   string // its approval-queue id (request_id on the wire)
	Choice    string
	Via       string // "approval.respond" or "response"
	Command   string // the command it resolved; empty if nothing was pending
	Resolved  int
}

// Server is a running fake gateway.
type Server struct {
	// URL is the HTTP base URL (http://127.0.0.1:PORT).
	URL  string
	opts Options
	clk  clock.Clock
	hs   *httptest.Server

	mu       sync.Mutex
	epoch    string
	conns    map[*fconn]struct{}
	sessions map[string]*fsession // by live id
	stored   map[string]*fsession // by stored id
	answers  []Answer
	// loseNext: the next call of this method is read, then lost with
	// the link before the gateway acts on it (LoseNext).
	loseNext string
	// cutOnNext: the next call of this method is acted on, then the link
	// drops before the reply or any other frame (CutOnNext).
	cutOnNext string
	// promptAnswers are answers to clarify, sudo and secret prompts.
	promptAnswers []PromptAnswer
	dials         int
	nextSRQ       int
	nextTool      int
	nextSession   int
	cookies       map[string]bool
	tickets       map[string]time.Time
	faults        Faults
	changed       chan struct{}
	closed        bool
	methods       []string // every method the clients called, in order
	started       time.Time
	upgrades      []http.Header
	// responses holds client responses to server requests, by id.
	responses map[string]json.RawMessage
	// withdrawn counts approvals withdrawn unanswered (no capable client,
	// or an error response).
	withdrawn int
	// interrupts counts session.interrupt calls.
	interrupts int
}

// Withdrawn counts approvals the gateway withdrew without an answer.
func (s *Server) Withdrawn() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.withdrawn
}

// Faults are injected into connections. Set them with SetFaults.
type Faults struct {
	// DropAfterFrames cuts the connection abruptly (no close frame) after
	// that many server-to-client frames on the next connection; 0 = never.
	DropAfterFrames int
	// DuplicateEvents sends every event frame twice.
	DuplicateEvents bool
	// Delay is slept before each server-to-client frame.
	Delay time.Duration
	// RejectUpgrade answers every WebSocket upgrade with this HTTP status.
	RejectUpgrade int
	// RespondReply, when set, is approval.respond's result after the
	// gateway acted on the answer: a reply Herald may not understand.
	RespondReply json.RawMessage
}

// NewServer starts a fake gateway on a loopback port.
func NewServer(opts Options) *Server {
	if opts.Token == "" && opts.Password == "" {
		opts.Token = "test-token"
	}
	if opts.ReplayBuffer <= 0 {
		opts.ReplayBuffer = 512
	}
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = 300 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	s := &Server{
		opts:     opts,
		clk:      opts.Clock,
		epoch:    newID(16),
		conns:    map[*fconn]struct{}{},
		sessions: map[string]*fsession{},
		stored:   map[string]*fsession{},
		cookies:  map[string]bool{},
		tickets:  map[string]time.Time{},
		changed:  make(chan struct{}),

		responses: map[string]json.RawMessage{},
	}
	s.started = s.clk.Now()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/ws", s.serveWS)
	mux.HandleFunc("/api/status", s.serveStatus)
	mux.HandleFunc("/auth/password-login", s.serveLogin)
	mux.HandleFunc("/api/auth/ws-ticket", s.serveTicket)
	if opts.TLS {
		s.hs = httptest.NewTLSServer(mux)
	} else {
		s.hs = httptest.NewServer(mux)
	}
	s.URL = s.hs.URL
	return s
}

// Close stops the server and every connection.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.cut()
	}
	for _, fs := range s.sessions {
		fs.stopAgent()
	}
	s.mu.Unlock()
	s.hs.CloseClientConnections()
	s.hs.Close()
}

// Certificate returns the TLS certificate (nil without Options.TLS).
func (s *Server) Certificate() *x509.Certificate {
	if !s.opts.TLS {
		return nil
	}
	return s.hs.Certificate()
}

// UpgradeHeaders returns the request headers of every WebSocket upgrade
// attempt, in order (accepted or not).
func (s *Server) UpgradeHeaders() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.upgrades...)
}

// Token returns the loopback token.
func (s *Server) Token() string { return s.opts.Token }

// Epoch returns the current replay epoch.
func (s *Server) Epoch() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch
}

// Addr returns host:port.
func (s *Server) Addr() string { u, _ := url.Parse(s.URL); return u.Host }

// SetFaults replaces the injected faults.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	s.faults = f
	s.mu.Unlock()
}

// Dials counts accepted WebSocket connections.
func (s *Server) Dials() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dials
}

// Conns counts open WebSocket connections (not peers).
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if c.peer == nil {
			n++
		}
	}
	return n
}

// Methods returns every JSON-RPC method clients called, in order.
func (s *Server) Methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.methods...)
}

// Answers returns every approval answer received, in order.
func (s *Server) Answers() []Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Answer(nil), s.answers...)
}

// Changed returns a channel closed at the next state change (connection,
// answer, session); tests wait on it instead of sleeping.
func (s *Server) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// CutAfter makes every open connection drop abruptly after n more
// server-to-client frames (n = 0 drops before the next frame).
func (s *Server) CutAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.peer != nil {
			continue
		}
		c.faults.DropAfterFrames = c.sent + n
		if n == 0 {
			c.faults.DropAfterFrames = c.sent
			if c.faults.DropAfterFrames == 0 {
				c.cut()
			}
		}
	}
}

// LoseNext makes the next call of method from a client (not a peer) be
// read and then lost: the link drops before the gateway acts on it or
// answers. The client wrote it, so for the client the outcome is
// unknown, but the gateway never took it (CutAfter(0) is the other
// case: the gateway acts, then the link drops before its reply).
func (s *Server) LoseNext(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseNext = method
}

// CutOnNext makes the next call of method from a client (not a peer) be
// acted on by the gateway, then the link drops abruptly before its reply
// or any other frame: the gateway took it, the client never hears so.
// Unlike CutAfter(0), frames the gateway sends before that call (a
// turn's events) do not cut the link early.
func (s *Server) CutOnNext(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cutOnNext = method
}

// Kick cuts every WebSocket connection abruptly (TCP close, no close
// frame). Peers (NewPeer) stay connected.
func (s *Server) Kick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.peer == nil {
			c.cut()
		}
	}
}

// CloseAll closes every WebSocket connection with a close code. Peers
// stay connected.
func (s *Server) CloseAll(code int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.peer == nil {
			c.closeWith(code, reason)
		}
	}
}

// RevokeAuth forgets every sign-in and ticket and closes connections 4401.
func (s *Server) RevokeAuth() {
	s.mu.Lock()
	s.cookies = map[string]bool{}
	s.tickets = map[string]time.Time{}
	s.mu.Unlock()
	s.CloseAll(4401, "authentication revoked")
}

// Restart simulates a gateway restart: every connection drops, a new replay
// epoch begins, seq counters and rings reset, running agents die, and live
// sessions survive only as stored history (resume takes the cold path).
func (s *Server) Restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.cut()
	}
	s.epoch = newID(16)
	if s.opts.ReuseIDsAfterRestart {
		s.nextSRQ = 0
	}
	for id, fs := range s.sessions {
		fs.stopAgent()
		fs.cold = true
		delete(s.sessions, id)
	}
	s.notifyLocked()
}

func newID(n int) string {
	b := make([]byte, n/2)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	gated := s.opts.Password != ""
	st := map[string]any{
		"version":        s.version(),
		"auth_required":  gated,
		"auth_providers": []string{},
		"auth_flows":     []string{},
	}
	if gated {
		st["auth_providers"] = []string{"password"}
		st["auth_flows"] = []string{"password"}
	}
	writeJSON(w, 200, st)
}

// version is what /api/status and session.info say. Herald must never
// decide anything from it; Modern says 0.19.0 on purpose.
func (s *Server) version() string {
	if s.opts.Version != "" {
		return s.opts.Version
	}
	if s.opts.Dialect == Modern {
		return "0.19.0"
	}
	return s.opts.Dialect.String()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

const cookieName = "hermes_session"

func (s *Server) serveLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || s.opts.Password == "" {
		writeJSON(w, 404, map[string]any{"detail": "Not Found"})
		return
	}
	var body struct {
		Password string `json:"password"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.Password != s.opts.Password {
		writeJSON(w, 401, map[string]any{"detail": "invalid credentials"})
		return
	}
	id := newID(32)
	s.mu.Lock()
	s.cookies[id] = true
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true})
	writeJSON(w, 200, map[string]any{"ok": true})
}

func (s *Server) signedIn(r *http.Request) bool {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cookies[c.Value]
}

// TicketTTL is how long a WebSocket ticket stays valid.
const TicketTTL = 30 * time.Second

func (s *Server) serveTicket(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || s.opts.Password == "" {
		writeJSON(w, 404, map[string]any{"detail": "Not Found"})
		return
	}
	if !s.signedIn(r) {
		writeJSON(w, 401, map[string]any{"detail": "not signed in"})
		return
	}
	t := newID(32)
	s.mu.Lock()
	s.tickets[t] = s.clk.Now().Add(TicketTTL)
	s.mu.Unlock()
	writeJSON(w, 200, map[string]any{"ticket": t, "expires_in": int(TicketTTL / time.Second)})
}

// useTicket consumes a ticket; it is valid once, within its lifetime.
func (s *Server) useTicket(t string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tickets[t]
	delete(s.tickets, t)
	return ok && s.clk.Now().Before(exp)
}

func loopbackHost(h string) bool {
	host := h
	if hh, _, err := net.SplitHostPort(h); err == nil {
		host = hh
	}
	host = strings.Trim(host, "[]")
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// originAllowed mirrors Hermes: no Origin, non-web origins (file://) and
// loopback origins pass; foreign web origins are refused.
func originAllowed(o string) bool {
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return true
	}
	return loopbackHost(u.Host)
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.upgrades = append(s.upgrades, r.Header.Clone())
	s.notifyLocked()
	reject := s.faults.RejectUpgrade
	s.mu.Unlock()
	if reject != 0 {
		http.Error(w, "", reject)
		return
	}
	var subprotocol string
	if s.opts.Password != "" {
		ok := false
		for _, p := range websocket.Subprotocols(r) {
			if t, found := strings.CutPrefix(p, "hermes-gateway-ticket."); found {
				ok = s.useTicket(t)
			}
		}
		if !ok {
			http.Error(w, "", http.StatusForbidden)
			return
		}
		subprotocol = "hermes-gateway-v1"
	} else if r.URL.Query().Get("token") != s.opts.Token {
		// Hermes checks the token first: a wrong token is a plain 403.
		http.Error(w, "", http.StatusForbidden)
		return
	}
	if !loopbackHost(r.Host) || !originAllowed(r.Header.Get("Origin")) {
		http.Error(w, "", http.StatusForbidden)
		return
	}
	hdr := http.Header{}
	if subprotocol != "" {
		hdr.Set("Sec-WebSocket-Protocol", subprotocol)
	}
	ws, err := upgrader.Upgrade(w, r, hdr)
	if err != nil {
		return
	}
	c := &fconn{s: s, ws: ws}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ws.Close()
		return
	}
	s.dials++
	c.faults = s.faults
	s.faults.DropAfterFrames = 0 // a drop applies to the next connection only
	s.conns[c] = struct{}{}
	ready := map[string]any{"skin": map[string]any{"name": "default"}}
	if d := s.opts.Dialect; d.sequenced() {
		// events.py@08757920: {skin, change_events, replay_epoch,
		// heartbeat?}; capabilities and protocol only on builds with
		// gateway_capabilities.py (#130702), which we give the newest.
		ready["change_events"] = true
		ready["replay_epoch"] = s.epoch
		if d.serverRequests() {
			ready["capabilities"] = map[string]any{"event_replay": true, "change_events": true}
			ready["protocol"] = map[string]any{"version": 1}
			ready["heartbeat"] = true
		}
	}
	c.sendLocked(eventFrame("gateway.ready", "", ready))
	s.notifyLocked()
	s.mu.Unlock()
	c.readLoop()
}
