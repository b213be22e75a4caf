// Package service composes Herald's core for every user surface (the
// terminal commands and the desktop app): the sources (opened through the
// drivers registered with backend/source and run here), the approval
// inbox fed by their events, a live view of sessions and tool activity, a
// local control socket through which another Herald process can list and
// answer approvals, and one typed event stream (Subscribe) that every
// surface reads.
//
// Who may import whom: surfaces (cli, app) import service and
// backend/source, never a transport. Service imports backend/source,
// backend/wire and approval, and reaches each transport only through the
// contract: source.Source, its optional capabilities (SessionFollower,
// Asker, Stopper, RunStarter, LinkChecker, found by type assertion) and
// the driver registry. The one import that names the transports is the
// blank import of backend/transports (transports.go), which registers
// them.
//
// Where things go: a new transport is a package under backend/ with a
// fake beside it and one line in backend/transports; a new surface
// subscribes to the event stream (Subscribe); a new setting of a source
// goes in source.Config or the driver's AuthModes. It is plain Go: no
// Wails, no globals; the clock and store are passed in.
package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Config wires a Service.
type Config struct {
	Clock  clock.Clock
	Store  approval.Store // audit log; nil keeps none
	Logger *slog.Logger
	// Timeout is a gateway's approval timeout (default 300 s).
	Timeout func(gateway string) time.Duration
	// FollowPolicy is what Herald does with sessions other clients drive
	// (default FollowAsk); SetFollowPolicy changes it per gateway.
	FollowPolicy FollowPolicy
	// DiscoveryInterval is how often gateways list their live sessions
	// (0: the transport's default, with the liveness check).
	DiscoveryInterval time.Duration
}

// Service is Herald's running core.
type Service struct {
	cfg   Config
	clk   clock.Clock
	log   *slog.Logger
	inbox *approval.Inbox
	ctx   context.Context
	stop  context.CancelFunc

	bus   bus
	turns turnWaiters
	src   sources
	live  liveSessions
	// wg counts the sources' background work (attaching sessions). A
	// source may still report a listing after Close stopped it (one in
	// flight), so work is added only until bgClosed, under bgMu
	// (goBackground).
	bgMu     sync.Mutex
	bgClosed bool
	wg       sync.WaitGroup
	// window serves window processes (see SetWindowHost).
	window atomic.Pointer[windowHost]
	// controlBound, when set (tests), runs once the control socket is
	// bound and private, before it appears at its path.
	controlBound func(tmp string)

	mu       sync.Mutex
	sessions map[string]*SessionView // by gateway + "/" + session
	// sessionCount and sessionsDropped bound the live view per gateway
	// (see MaxSessionsPerGateway).
	sessionCount, sessionsDropped map[string]int
	// firstPrompts are the prompts that started the sessions and runs
	// Herald started, until their first event makes their view.
	firstPrompts map[string]string
	statuses     map[string]source.Status
	// stored keeps each server's last listing of stored sessions.
	stored storedState
}

// SessionView is what Herald shows about one session.
type SessionView struct {
	Gateway  string `json:"gateway"`
	ID       string `json:"id"`
	StoredID string `json:"stored_id,omitempty"`
	Title    string `json:"title,omitempty"`
	Model    string `json:"model,omitempty"`
	Running  bool   `json:"running"`
	// Tool is the tool running now ("terminal: Running git status").
	Tool string `json:"tool,omitempty"`
	// Status is the latest status line or turn outcome.
	Status   string    `json:"status,omitempty"`
	LastText string    `json:"last_text,omitempty"`
	Tokens   int64     `json:"tokens,omitempty"`
	Updated  time.Time `json:"updated"`
	// FirstPrompt is the first words of the prompt that started it,
	// when Herald sent it (approval.FirstWords); Started is when Herald
	// first saw it; Word what its transport calls it ("session",
	// "run"). With Title they make its one name (Naming).
	FirstPrompt string    `json:"first_prompt,omitempty"`
	Started     time.Time `json:"started,omitzero"`
	Word        string    `json:"word,omitempty"`
	// Since is when Herald saw the running turn start (zero while none
	// runs): surfaces say for how long it runs.
	Since time.Time `json:"since,omitempty"`
	// Name is what every surface calls the session (SessionNames); a
	// surface fills it.
	Name string `json:"name"`
	// ShownID is its id in the one form surfaces show
	// (approval.SessionID); a surface fills it.
	ShownID string `json:"shown_id,omitempty"`
}

// runTitle is the start of a prompt, as a session or run is named by it
// (approval.FirstWords).
func runTitle(input string) string { return approval.FirstWords(input) }

// New builds a service; call Close when done.
func New(cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Service{
		cfg: cfg, clk: cfg.Clock, log: cfg.Logger, ctx: ctx, stop: stop,
		sessions: map[string]*SessionView{},

		sessionCount:    map[string]int{},
		firstPrompts:    map[string]string{},
		sessionsDropped: map[string]int{},
		statuses:        map[string]source.Status{},
	}
	s.bus.now = cfg.Clock.Now
	s.inbox = approval.New(approval.Options{
		Clock:     cfg.Clock,
		Store:     cfg.Store,
		Timeout:   cfg.Timeout,
		Answerers: s.answerer,
		// Called under the inbox's lock: sessionTitle takes the live
		// view's locks and never calls the inbox.
		SessionTitle: s.sessionTitle,
		Notify: func(c approval.Change) {
			s.bus.publish(WatchApprovals, Notify{Approval: &c})
			s.changed()
		},
	})
	return s
}

func (s *Service) changed() { s.bus.publish(WatchChanges, Notify{Changed: true}) }

func (s *Service) answerer(name string) (approval.Answerer, bool) {
	return s.Source(name)
}

func (s *Service) problem(source string, err error) {
	s.bus.publish(WatchProblems, Notify{Problem: &Problem{Source: source, Err: err}})
	s.log.Warn("gateway problem", "gateway", source, "err", err)
}

// Inbox is the approval inbox.
func (s *Service) Inbox() *approval.Inbox { return s.inbox }

// Answer sends a user's choice through the inbox, with only "always"
// confirmed (confirmAlways): see AnswerConfirmed.
func (s *Service) Answer(ctx context.Context, key, choice, surface string, confirmAlways bool) error {
	return s.AnswerConfirmed(ctx, key, choice, surface, approval.Confirmed{Always: confirmAlways})
}

// AnswerConfirmed sends a user's choice through the inbox with what the
// user confirmed on their surface (approval.Inbox.AnswerConfirmed).
func (s *Service) AnswerConfirmed(ctx context.Context, key, choice, surface string, c approval.Confirmed) error {
	key, err := s.resolveKey(key)
	if err != nil {
		return err
	}
	return s.inbox.AnswerConfirmed(ctx, key, choice, surface, c)
}

// Dismiss ends an uncertain request without sending anything.
func (s *Service) Dismiss(key, surface string) error {
	key, err := s.resolveKey(key)
	if err != nil {
		return err
	}
	return s.inbox.Dismiss(key, surface)
}

// resolveKey accepts a full key or a unique prefix of one, or of its
// short form (ShortKey).
func (s *Service) resolveKey(k string) (string, error) {
	k = strings.TrimSpace(k)
	if k == "" {
		return "", errors.New("no approval id given: run `herald pending` to list them")
	}
	if _, ok := s.inbox.Get(k); ok {
		return k, nil
	}
	var hits []string
	for _, r := range s.inbox.Snapshot().Requests {
		if strings.HasPrefix(ShortKey(r.Key), k) || strings.HasPrefix(r.Key, k) {
			hits = append(hits, r.Key)
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("no approval with id %q: run `herald pending` to list them", k)
	case 1:
		return hits[0], nil
	}
	return "", fmt.Errorf("approval id %q is ambiguous (%d match): give more of it", k, len(hits))
}

// ShortKey is an approval's short id for typing: 12 hex digits (48 bits)
// of its key's SHA-256, so that two requests Herald holds share one only
// with a chance of about n²/2⁴⁹, and keys that differ in one character
// get unrelated ids; resolveKey refuses an id that matches more than one
// anyway.
func ShortKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}

func (s *Service) onStatus(st source.Status) {
	s.mu.Lock()
	was := s.statuses[st.Gateway].State
	s.statuses[st.Gateway] = st
	s.mu.Unlock()
	s.bus.publish(WatchStatus, Notify{Status: &st})
	if st.State == source.StateConnected && was != source.StateConnected {
		s.retryBridgeOf(st.Gateway)
	}
	s.changed()
}

// onEvent feeds the inbox and the live view, in order per gateway.
func (s *Service) onEvent(ev wire.Event) {
	s.inbox.Ingest(ev)
	s.updateView(ev)
	s.turns.observe(ev)
	s.noticeFromEvent(ev)
	s.bus.publish(WatchEvents, Notify{Event: &ev})
	s.changed()
}

const lastTextMax = 240

func (s *Service) updateView(ev wire.Event) {
	if ev.Session == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := ev.Gateway + "/" + ev.Session
	v := s.sessions[k]
	if ev.Kind == wire.SessionGone {
		if v != nil {
			delete(s.sessions, k)
			s.sessionCount[ev.Gateway]--
		}
		return
	}
	if v == nil {
		s.makeRoomLocked(ev.Gateway)
		v = &SessionView{Gateway: ev.Gateway, ID: ev.Session, FirstPrompt: s.firstPrompts[k], Started: ev.ReceivedAt, Word: conversationWord(s.kindOf(ev.Gateway))}
		delete(s.firstPrompts, k)
		s.sessions[k] = v
		s.sessionCount[ev.Gateway]++
	}
	defer boundSession(v)
	defer func(was bool) {
		switch {
		case !v.Running:
			v.Since = time.Time{}
		case !was || v.Since.IsZero():
			v.Since = ev.ReceivedAt
		}
	}(v.Running)
	if ev.StoredSession != "" {
		v.StoredID = ev.StoredSession
	}
	v.Updated = ev.ReceivedAt
	switch d := ev.Data.(type) {
	case *wire.SessionInfoPayload:
		v.Model, v.Title, v.Running = d.Model, d.Title, d.Running
		if d.Usage != nil {
			v.Tokens = d.Usage.Total
		}
	case *wire.ToolStartPayload:
		v.Running = true
		v.Tool = d.Name
		if d.Context != "" {
			// The live view is a glance (window, tray, `herald stop`):
			// obvious secrets are masked as in the notifications; the
			// approval sheet shows a command in full.
			v.Tool += ": " + approval.Redact(d.Context)
		}
	case *wire.ToolCompletePayload:
		v.Tool = ""
	case *wire.DeltaPayload:
		v.Running = true
		v.LastText = tail(v.LastText+d.Text, lastTextMax)
	case *wire.CompletePayload:
		v.Running, v.Tool = false, ""
		v.Status = d.Status
		v.LastText = tail(d.Text, lastTextMax)
		if d.Usage != nil {
			v.Tokens = d.Usage.Total
		}
	case *wire.StatusPayload:
		v.Status = d.Text
	case *wire.ErrorPayload:
		v.Status = "error: " + d.Message
	}
	switch ev.Kind {
	case wire.MessageStart:
		// A new turn: the last one's end ("complete", "interrupted") is
		// no status of this one.
		v.Running, v.LastText, v.Status, v.Since = true, "", "", ev.ReceivedAt
	case wire.RunCompleted, wire.RunFailed, wire.RunCancelled, wire.RunInterrupted:
		v.Running, v.Tool = false, ""
		v.Status = strings.TrimPrefix(ev.Kind, "run.")
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// View is everything a surface shows.
type View struct {
	At        time.Time          `json:"at"`
	Gateways  []source.Status    `json:"gateways"`
	Sessions  []SessionView      `json:"sessions"`
	Approvals []approval.Request `json:"approvals"` // live, oldest first
	Recent    []approval.Request `json:"recent"`    // ended, newest first
	// AuditError says the audit log could not be written.
	AuditError string `json:"audit_error,omitempty"`
	// Live is every WebSocket gateway's live sessions (the Sessions panel).
	Live []GatewaySessions `json:"live"`
	// Floods are gateways that sent more open approvals than Herald takes.
	Floods []approval.Flood `json:"floods,omitempty"`
	// Limits says, one line each, which bounds a gateway hit (floods,
	// too many sessions), for surfaces to show.
	Limits []string `json:"limits,omitempty"`
	// Stored is each server's last listing of its stored sessions
	// (StoredSessions), by gateway name.
	Stored []StoredSessionsView `json:"stored,omitempty"`
}

// View returns a consistent snapshot.
func (s *Service) View() View { return s.view(s.inbox.Snapshot()) }

// LiveView is View without the ended requests (Recent is empty): what the
// tray shows, cheap to build on every change however many requests
// ended.
func (s *Service) LiveView() View { return s.view(s.inbox.LiveSnapshot()) }

func (s *Service) view(snap approval.Snapshot) View {
	v := View{At: s.clk.Now(), AuditError: snap.AuditError, Live: s.LiveSessions(), Floods: snap.Floods, Stored: s.storedListings()}
	for _, r := range snap.Requests {
		if r.State.Live() {
			v.Approvals = append(v.Approvals, r)
		} else {
			v.Recent = append(v.Recent, r)
		}
	}
	slices.Reverse(v.Recent) // newest first; one pass, not a prepend per request
	s.mu.Lock()
	for _, st := range s.statuses {
		v.Gateways = append(v.Gateways, st)
	}
	for _, sv := range s.sessions {
		v.Sessions = append(v.Sessions, *sv)
	}
	v.Limits = s.limitWarningsLocked(snap.Floods)
	s.mu.Unlock()
	sort.Slice(v.Gateways, func(i, j int) bool { return v.Gateways[i].Gateway < v.Gateways[j].Gateway })
	sort.Slice(v.Sessions, func(i, j int) bool {
		a, b := v.Sessions[i], v.Sessions[j]
		if a.Gateway != b.Gateway {
			return a.Gateway < b.Gateway
		}
		return a.ID < b.ID
	})
	return v
}

// History lists audit entries, each with its session's one name.
func (s *Service) History(f approval.Filter) ([]LogEntry, error) {
	if s.cfg.Store == nil {
		return nil, errors.New("Herald keeps no audit log in this mode")
	}
	es, err := s.cfg.Store.List(f)
	if err != nil {
		return nil, err
	}
	return NamedEntries(es, s.View().Names()), nil
}

// Close stops every channel and the inbox.
func (s *Service) Close() {
	s.closeSources()
	s.stop()
	s.bgMu.Lock()
	s.bgClosed = true
	s.bgMu.Unlock()
	s.wg.Wait()
	s.inbox.Close()
	s.bus.shutdown()
}
