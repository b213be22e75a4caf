// Package apiservertest is an in-process fake of the Hermes API server's
// /v1/runs surface (the messaging gateway's OpenAI-compatible server,
// default port 8642), in the spirit of net/http/httptest. It follows the
// captures of a real Hermes 0.18.2 server (shared/hermes-wire/api-server):
// bearer-key auth with the {"error":{...}} envelope, 403 for any Origin
// header, 202 run admission, pollable run status, the run event stream
// with ": keepalive" and ": stream closed" comments, approvals with 409
// approval_not_pending / approval_not_active, and stop.
//
// It speaks two dialects. SingleConsumer is 0.18.2: events carry no "id:"
// lines, a run's events are queued for exactly one reader, and once that
// reader goes (finished or disconnected) the stream is forgotten and every
// later subscribe answers 404 run_not_found while the run goes on.
// LastEventID keeps each run's events, numbers them with "id:" lines, sends
// "retry:", and resumes any number of readers from Last-Event-ID; it also
// adds request_id to approvals and the pending approval to the run status,
// as newer servers do.
//
// Runs are played by a small scripted agent that answers inputs like
// Hermes' stub agent: "approve-me: CMD" asks for approval of CMD and waits
// for the answer; "slow N" ticks N times; "fail", "fail-soft", "reason",
// "tool: NAME"; anything else gets "stub answer: ...". Faults are injected
// with SetFaults: a stream cut after N events, a start whose answer is
// lost after the run was created, 429 with Retry-After, 503, delays and a
// refused key. The server records every request (and whether any carried
// an Origin header), the approvals it received and the Idempotency-Keys.
package apiservertest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
)

// Dialect selects which generation of the API server the fake speaks.
type Dialect int

const (
	// SingleConsumer is Hermes 0.18.2: no event ids, one reader per run,
	// a second subscribe (or any after the reader left) is 404.
	SingleConsumer Dialect = iota
	// LastEventID numbers events with "id:" lines and resumes readers
	// from Last-Event-ID; approvals carry request_id.
	LastEventID
)

// String names the dialect.
func (d Dialect) String() string {
	if d == LastEventID {
		return "last-event-id"
	}
	return "single-consumer"
}

// real019 is the SingleConsumer dialect as the real 0.19.0 speaks it
// (Options.Version "0.19.0"): approval.request adds allow_session, and a
// wrong key is a gateway_auth_error (gateway_auth_failed). Found by
// integration/apiconformance_test.go against the real server.
func (s *Server) real019() bool {
	return s.opts.Dialect == SingleConsumer && s.opts.Version == "0.19.0"
}

// DefaultKey is the key a fake accepts unless Options.Key says otherwise.
const DefaultKey = "herald-test-key-0123456789"

// Options configures a fake server.
type Options struct {
	// Dialect is the server generation to mimic.
	Dialect Dialect
	// Key is the accepted API_SERVER_KEY (default DefaultKey).
	Key string
	// Clock drives step pacing, approval timeouts, keepalives and delay
	// faults (default real).
	Clock clock.Clock
	// StepDelay paces the scripted agent between events (default 0).
	StepDelay time.Duration
	// ApprovalTimeout is how long an approval waits (default 300 s).
	ApprovalTimeout time.Duration
	// Keepalive is the idle interval of ": keepalive" comments (default
	// 30 s, as Hermes; negative disables).
	Keepalive time.Duration
	// MaxConcurrentRuns answers 429 rate_limit_exceeded past this many
	// active runs (0: unlimited).
	MaxConcurrentRuns int
	// Version is what /health reports (default by dialect).
	Version string
	// NoEventStreams advertises run_events_sse false and answers every
	// event-stream subscribe 404, like a server with streams turned off.
	NoEventStreams bool
	// SessionStream is how a session's chat stream behaves (default
	// SessionStreamLegacy, as 0.18.2 and 0.19.0).
	SessionStream SessionStream
	// IgnoreRequestID makes the approval endpoint resolve a run's oldest
	// pending approval whatever request_id the answer names, and not echo
	// the id: the endpoint hermes-desktop#904 reported (mid-August 2026),
	// on a server whose events carry ids.
	IgnoreRequestID bool
}

// Faults are injected into requests. Set them with SetFaults.
type Faults struct {
	// Path limits RateLimited, Unavailable and Delay to requests whose
	// "METHOD /path" starts with it (e.g. "POST /v1/runs"); empty means
	// every authenticated request.
	Path string
	// DropStreamAfter cuts the next event stream abruptly (no ": stream
	// closed", no chunked terminator) after that many events; 0 = never.
	// It applies to one stream.
	DropStreamAfter int
	// DropStartResponse cuts the connection instead of answering the next
	// N starts; a new start still creates its run first, a retried one
	// (same Idempotency-Key) finds it.
	DropStartResponse int
	// DropApprovalResponse cuts the connection instead of answering the
	// next N approval answers, after acting on them (the answer was
	// taken; its reply is lost).
	DropApprovalResponse int
	// LoseApproval cuts the connection on the next N approval answers
	// before acting on them (written by the client, never taken).
	LoseApproval int
	// RateLimited answers the next N matching requests 429.
	RateLimited int
	// Unavailable answers the next N matching requests 503.
	Unavailable int
	// RetryAfter is sent with 429 and 503 answers (default 1 s; negative
	// sends none).
	RetryAfter time.Duration
	// Delay waits this long (on the server's clock) before answering each
	// matching request.
	Delay time.Duration
	// RejectKey answers every authenticated request 401, whatever the key.
	RejectKey bool
}

// Request is one request the server received.
type Request struct {
	// Method and Path are the request line.
	Method, Path string
	// Header is the request's header, with Authorization replaced by
	// "Bearer [ok]" or "Bearer [wrong]" so tests can check it without the
	// key.
	Header http.Header
}

// Approval is one approval answer the server received.
type Approval struct {
	// RunID is the run answered.
	RunID string
	// Choice is the answer after aliasing ("approve" -> "once").
	Choice string
	// RequestID is the request_id sent, if any.
	RequestID string
	// Resolved is how many pending approvals it resolved; Status and Code
	// are the HTTP answer (200, or 409 approval_not_pending, ...).
	Resolved int
	Status   int    // HTTP status answered
	Code     string // error code answered, if any
}

// Server is a running fake API server.
type Server struct {
	// URL is the base URL (http://127.0.0.1:PORT).
	URL string

	opts Options
	clk  clock.Clock
	hs   *httptest.Server

	mu        sync.Mutex
	runs      map[string]*frun
	order     []string
	idem      map[string]idemEntry
	faults    Faults
	requests  []Request
	approvals []Approval
	permanent map[string]bool // "always"-approved patterns
	changed   chan struct{}

	sessions    map[string]*fsession
	turns       map[string]*frun // session chat stream turns by run id
	turnOrder   []string
	nextMessage int
	closed      bool
}

type idemEntry struct {
	runID       string
	fingerprint string
}

// NewServer starts a fake API server on a loopback port.
func NewServer(opts Options) *Server {
	if opts.Key == "" {
		opts.Key = DefaultKey
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = 300 * time.Second
	}
	if opts.Keepalive == 0 {
		opts.Keepalive = 30 * time.Second
	}
	if opts.Version == "" {
		opts.Version = "0.18.2"
		if opts.Dialect == LastEventID {
			opts.Version = "0.19.0"
		}
	}
	s := &Server{
		opts:      opts,
		clk:       opts.Clock,
		runs:      map[string]*frun{},
		idem:      map[string]idemEntry{},
		permanent: map[string]bool{},
		changed:   make(chan struct{}),
		sessions:  map[string]*fsession{},
		turns:     map[string]*frun{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.serveHealth)
	mux.HandleFunc("GET /v1/health", s.serveHealth)
	mux.HandleFunc("GET /v1/capabilities", s.serveCapabilities)
	mux.HandleFunc("POST /v1/runs", s.serveStart)
	mux.HandleFunc("GET /v1/runs/{id}", s.serveStatus)
	mux.HandleFunc("GET /v1/runs/{id}/events", s.serveEvents)
	mux.HandleFunc("POST /v1/runs/{id}/approval", s.serveApproval)
	mux.HandleFunc("POST /v1/runs/{id}/stop", s.serveStop)
	mux.HandleFunc("GET /api/sessions", s.serveSessions)
	mux.HandleFunc("POST /api/sessions", s.serveCreateSession)
	mux.HandleFunc("GET /api/sessions/{id}", s.serveSession)
	mux.HandleFunc("GET /api/sessions/{id}/messages", s.serveSessionMessages)
	mux.HandleFunc("POST /api/sessions/{id}/chat/stream", s.serveChatStream)
	s.hs = httptest.NewServer(s.middleware(mux))
	s.URL = s.hs.URL
	return s
}

// Close stops the server, every run and every connection.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for _, r := range s.runs {
		r.stopAgent()
	}
	for _, r := range s.turns {
		r.stopAgent()
	}
	s.notifyLocked()
	s.mu.Unlock()
	s.hs.CloseClientConnections()
	s.hs.Close()
}

// Key returns the accepted key.
func (s *Server) Key() string { return s.opts.Key }

// Dialect returns the dialect the server speaks.
func (s *Server) Dialect() Dialect { return s.opts.Dialect }

// SetFaults replaces the injected faults.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	s.faults = f
	s.mu.Unlock()
}

// Changed returns a channel closed at the next change of state (request,
// event, answer); tests wait on it instead of sleeping.
func (s *Server) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Requests returns every request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// OriginSeen reports whether any request carried an Origin header.
func (s *Server) OriginSeen() bool {
	for _, r := range s.Requests() {
		if _, ok := r.Header["Origin"]; ok {
			return true
		}
	}
	return false
}

// Approvals returns every approval answer received, in order.
func (s *Server) Approvals() []Approval {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Approval(nil), s.approvals...)
}

// IdempotencyKeys returns the Idempotency-Key of every POST /v1/runs
// received (answered or refused), in order ("" for a start without one).
func (s *Server) IdempotencyKeys() []string {
	var keys []string
	for _, r := range s.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/runs" {
			keys = append(keys, r.Header.Get("Idempotency-Key"))
		}
	}
	return keys
}

// RunIDs returns the ids of every run created, in order.
func (s *Server) RunIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.order...)
}

// RunInfo describes a run on the fake.
type RunInfo struct {
	// ID, Input and Status are the run id, its input and Hermes status.
	ID, Input, Status string
	// Pending lists the commands waiting for approval, oldest first.
	Pending []string
	// Events counts events the run emitted; Subscribers counts open
	// streams; Gone is set once a SingleConsumer stream was forgotten.
	Events, Subscribers int
	Gone                bool // SingleConsumer: the stream was forgotten
	// Session is the session_id a /v1/runs start named (the run id when
	// none); History counts the conversation_history entries it sent.
	Session string
	History int
}

// Run describes one run.
func (s *Server) Run(id string) (RunInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[id]
	if r == nil {
		r = s.turns[id]
	}
	if r == nil {
		return RunInfo{}, false
	}
	ri := RunInfo{ID: r.id, Input: r.input, Status: r.status, Events: r.emitted, Subscribers: r.subscribers, Gone: r.gone, Session: r.session, History: r.history}
	for _, a := range r.pending {
		ri.Pending = append(ri.Pending, a.command)
	}
	return ri, true
}

// Emit makes a run emit an arbitrary event (name and fields), as the agent
// would; tests use it for kinds the scripted agent never sends.
func (s *Server) Emit(runID, name string, fields map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[runID]
	if r == nil {
		return fmt.Errorf("apiservertest: no run %q", runID)
	}
	o := obj{}
	for k, v := range fields {
		o = append(o, kv{k, v})
	}
	s.emitLocked(r, name, o)
	return nil
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Server) now() float64 {
	return float64(s.clk.Now().UnixNano()) / 1e9
}

// writeJSON answers with a Python-style JSON body.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(pyJSON(v))
}

// writeError answers with Hermes' OpenAI-style error envelope.
func writeError(w http.ResponseWriter, code int, msg, errCode string) {
	var c any
	if errCode != "" {
		c = errCode
	}
	writeJSON(w, code, obj{{"error", obj{{"message", msg}, {"type", "invalid_request_error"}, {"param", nil}, {"code", c}}}})
}

func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		if a := h.Get("Authorization"); a != "" {
			if a == "Bearer "+s.opts.Key {
				h.Set("Authorization", "Bearer [ok]")
			} else {
				h.Set("Authorization", "Bearer [wrong]")
			}
		}
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: h})
		s.notifyLocked()
		f := s.faults
		s.mu.Unlock()

		// aiohttp's CORS guard: an Origin it was not configured for is a
		// bare 403, before authentication.
		if r.Header.Get("Origin") != "" {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if r.URL.Path == "/health" || r.URL.Path == "/v1/health" {
			next.ServeHTTP(w, r)
			return
		}
		if f.RejectKey || r.Header.Get("Authorization") != "Bearer "+s.opts.Key {
			// The 401 envelope has no "param" key.
			if s.real019() {
				writeJSON(w, http.StatusUnauthorized, obj{{"error", obj{{"message", "Invalid gateway API key (API_SERVER_KEY)"}, {"type", "gateway_auth_error"}, {"code", "gateway_auth_failed"}}}})
				return
			}
			writeJSON(w, http.StatusUnauthorized, obj{{"error", obj{{"message", "Invalid API key"}, {"type", "invalid_request_error"}, {"code", "invalid_api_key"}}}})
			return
		}
		if strings.HasPrefix(r.Method+" "+r.URL.Path, f.Path) {
			if f.Delay > 0 {
				t := s.clk.NewTimer(f.Delay)
				select {
				case <-t.C():
				case <-r.Context().Done():
					t.Stop()
					return
				}
			}
			if s.takeFault(func(f *Faults) *int { return &f.RateLimited }) {
				s.retryAfter(w, f)
				writeJSON(w, http.StatusTooManyRequests, obj{{"error", obj{{"message", "Too many concurrent runs (max 10)"}, {"type", "rate_limit_error"}, {"param", nil}, {"code", "rate_limit_exceeded"}}}})
				return
			}
			if s.takeFault(func(f *Faults) *int { return &f.Unavailable }) {
				s.retryAfter(w, f)
				writeJSON(w, http.StatusServiceUnavailable, obj{{"error", obj{{"message", "Gateway is draining existing work"}, {"type", "server_error"}, {"param", nil}, {"code", "gateway_draining"}}}})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) retryAfter(w http.ResponseWriter, f Faults) {
	d := f.RetryAfter
	if d == 0 {
		d = time.Second
	}
	if d > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
	}
}

// takeFault decrements a fault counter, reporting whether it was set.
func (s *Server) takeFault(field func(*Faults) *int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := field(&s.faults)
	if *p <= 0 {
		return false
	}
	*p--
	return true
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, obj{{"status", "ok"}, {"platform", "hermes-agent"}, {"version", s.opts.Version}})
}

func (s *Server) serveCapabilities(w http.ResponseWriter, r *http.Request) {
	if s.opts.Dialect == SingleConsumer && !s.opts.NoEventStreams {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte(capabilities018))
		return
	}
	var caps map[string]any
	_ = json.Unmarshal([]byte(capabilities018), &caps)
	f, _ := caps["features"].(map[string]any)
	if s.opts.Dialect == LastEventID {
		f["run_events_resume"] = true
		caps["idempotency"] = map[string]any{"supported": true, "durable": false, "retention_seconds": 86400}
	}
	if s.opts.NoEventStreams {
		f["run_events_sse"] = false
	}
	writeJSON(w, http.StatusOK, caps)
}
