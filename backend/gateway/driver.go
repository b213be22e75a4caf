package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

func init() {
	source.Register(source.Driver{
		Kind:       Kind,
		Aliases:    []string{"gateway", "websocket"},
		Title:      "Dashboard gateway",
		Default:    true,
		Hint:       "WebSocket, port " + DefaultPort,
		DefaultURL: "http://127.0.0.1:" + DefaultPort,
		Flag:       "gateway",
		Auth: []source.AuthMode{
			{Name: "token", Label: "Session token", Secret: "Token", Flag: "token", Env: "HERALD_TOKEN",
				Hint: "The dashboard's session token. Hermes makes a new one at every start: start it as `HERMES_DASHBOARD_SESSION_TOKEN=your-token hermes dashboard` and give Herald the same value (or copy `window.__HERMES_SESSION_TOKEN__` from the dashboard page's source)."},
			{Name: "password", Label: "Password", Secret: "Password", Username: true, Flag: "password", Env: "HERALD_PASSWORD",
				Hint: "The user name and password of a dashboard started with a password sign-in (gated mode)."},
			source.NoAuth,
		},
		// A dashboard lists its live sessions, each of which takes
		// prompts; a stop interrupts the session's turn.
		Words:  source.Words{Conversation: "session", Interrupted: "Turn interrupted"},
		Offers: source.Offers{ListsSessions: true, AskNew: true, AskFollowed: true},
		Open: func(cfg source.Config, h source.Hooks) (source.Source, error) {
			gc := configOf(cfg)
			gc.OnEvent, gc.OnStatus, gc.OnDiscovery = h.OnEvent, h.OnStatus, h.OnDiscovery
			return NewSource(gc, h.OnProblem)
		},
		Check: check,
		Detect: func(ctx context.Context, cfg source.Config) (source.Detected, error) {
			c, err := New(Config{URL: cfg.URL, RootCAs: cfg.RootCAs})
			if err != nil {
				return source.Detected{}, err
			}
			info, err := c.Probe(ctx)
			if err != nil {
				return source.Detected{}, err
			}
			d := source.Detected{Version: info.Version, AuthRequired: info.AuthRequired, Auth: "token"}
			if info.AuthRequired {
				d.Auth = "password"
			}
			return d, nil
		},
	})
}

// configOf is a client's configuration from the contract's.
func configOf(cfg source.Config) Config {
	return Config{
		Name: cfg.Name, URL: cfg.URL, Token: cfg.Secrets["token"], Username: cfg.Username, Password: cfg.Secrets["password"],
		RootCAs: cfg.RootCAs, Clock: cfg.Clock, Logger: cfg.Logger, DiscoveryInterval: cfg.DiscoveryInterval,
	}
}

// check is the driver's Check: HTTP, the upgrade and the gateway.ready
// handshake, with the credentials given.
func check(ctx context.Context, cfg source.Config) source.CheckResult {
	gc := configOf(cfg)
	gc.Name = "test"
	stage, err := Check(ctx, gc)
	if err != nil {
		return source.CheckFailed(stage, err)
	}
	return source.CheckResult{OK: true, Stage: "handshake", Message: "Connected: the gateway answered over WebSocket"}
}

// Source is a Client as a source.Source. Sessions asked for before the
// gateway is connected are resumed when it connects (the client itself
// re-attaches followed sessions after every reconnect).
type Source struct {
	c         *Client
	onProblem func(error)

	mu      sync.Mutex
	pending []string
	runCtx  context.Context
	wg      sync.WaitGroup
}

// The dashboard gateway follows live sessions by stored id, takes
// prompts, interrupts turns and checks its link on demand.
var (
	_ source.Source          = (*Source)(nil)
	_ source.SessionFollower = (*Source)(nil)
	_ source.Asker           = (*Source)(nil)
	_ source.Stopper         = (*Source)(nil)
	_ source.LinkChecker     = (*Source)(nil)
)

// NewSource returns a client for cfg as a source; onProblem (may be nil)
// hears of sessions that could not be followed once connected.
func NewSource(cfg Config, onProblem func(error)) (*Source, error) {
	s := &Source{onProblem: onProblem}
	user := cfg.OnStatus
	cfg.OnStatus = func(st source.Status) {
		if user != nil {
			user(st)
		}
		if st.State == source.StateConnected && s.hasPending() {
			s.attachPendingAsync()
		}
	}
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	s.c = c
	return s, nil
}

// Client is the gateway client, for the gateway-only calls (live
// sessions, JSON-RPC).
func (s *Source) Client() *Client { return s.c }

func (s *Source) Name() string          { return s.c.Name() }
func (s *Source) Kind() source.Kind     { return Kind }
func (s *Source) Status() source.Status { return s.c.Status() }
func (s *Source) ReconnectNow()         { s.c.ReconnectNow() }
func (s *Source) CheckLink()            { s.c.CheckLink() }
func (s *Source) hasPending() bool      { s.mu.Lock(); defer s.mu.Unlock(); return len(s.pending) > 0 }
func (s *Source) runContext() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runCtx
}

// Run keeps the channel up until ctx ends.
func (s *Source) Run(ctx context.Context) error {
	s.mu.Lock()
	s.runCtx = ctx
	s.mu.Unlock()
	err := s.c.Run(ctx)
	s.wg.Wait()
	return err
}

func (s *Source) RespondApproval(ctx context.Context, sessionID, choice, requestID string) (int, error) {
	return s.c.RespondApproval(ctx, sessionID, choice, requestID)
}

func (s *Source) RespondServerRequest(ctx context.Context, requestID, choice string) error {
	return s.c.RespondServerRequest(ctx, requestID, choice)
}

// Follow attaches a stored session, now or once the gateway is connected.
func (s *Source) Follow(ctx context.Context, id string) error {
	id = strings.TrimSpace(id)
	if id == "" {
		return errors.New("no session id given")
	}
	if s.c.Status().State != source.StateConnected {
		s.mu.Lock()
		s.pending = append(s.pending, id)
		s.mu.Unlock()
		// It may have connected meanwhile: attach what is pending.
		if s.c.Status().State == source.StateConnected {
			s.attachPending()
		}
		return nil
	}
	_, err := s.c.AttachSession(ctx, id)
	return err
}

// Unfollow forgets a session (pending or attached).
func (s *Source) Unfollow(id string) {
	s.mu.Lock()
	out := s.pending[:0]
	for _, p := range s.pending {
		if p != id {
			out = append(out, p)
		}
	}
	s.pending = out
	s.mu.Unlock()
	for _, ss := range s.c.Sessions() {
		if ss.ID == id || ss.StoredID == id {
			s.c.Forget(ss.ID)
		}
	}
}

func (s *Source) attachPendingAsync() {
	s.mu.Lock()
	if s.runCtx == nil || s.runCtx.Err() != nil {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		s.attachPending()
	}()
}

// attachPending resumes the sessions asked for before the connection.
func (s *Source) attachPending() {
	ctx := s.runContext()
	if ctx == nil {
		return
	}
	s.mu.Lock()
	ids := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, id := range ids {
		if _, err := s.c.AttachSession(ctx, id); err != nil && ctx.Err() == nil && s.onProblem != nil {
			s.onProblem(fmt.Errorf("following session %s: %w", id, err))
		}
	}
}

// RespondPrompt answers a clarify, sudo or secret prompt on this
// gateway's connection (approval.PromptAnswerer).
func (s *Source) RespondPrompt(ctx context.Context, a wire.PromptAnswer) (bool, error) {
	return s.c.RespondPrompt(ctx, a)
}

func followedOf(r SessionRef) source.FollowedSession {
	return source.FollowedSession{ID: r.ID, StoredID: r.StoredID, Elsewhere: r.Elsewhere}
}

// Followed lists the sessions the client follows.
func (s *Source) Followed() []source.FollowedSession {
	refs := s.c.Sessions()
	out := make([]source.FollowedSession, len(refs))
	for i, r := range refs {
		out[i] = followedOf(r)
	}
	return out
}

// Attach follows a stored session now (session.resume). A session with
// no stored row yet (error 4007) matches source.ErrNotStarted.
func (s *Source) Attach(ctx context.Context, storedID string) (source.FollowedSession, error) {
	r, err := s.c.AttachSession(ctx, storedID)
	var re *wire.RPCError
	if errors.As(err, &re) && re.Code == 4007 {
		err = notStartedError{err}
	}
	return followedOf(r), err
}

// notStartedError is session.resume's 4007 as the contract's
// ErrNotStarted, with the gateway's text.
type notStartedError struct{ error }

func (e notStartedError) Is(target error) bool { return target == source.ErrNotStarted }
func (e notStartedError) Unwrap() error        { return e.error }

// TakeBack resumes a followed session another client took.
func (s *Source) TakeBack(ctx context.Context, id string) error {
	_, err := s.c.TakeBack(ctx, id)
	return err
}

// FanOut reports whether this gateway sends each session's events to
// every client that follows it.
func (s *Source) FanOut() bool { return s.c.FanOut() }

// Ask submits a prompt to a followed session, a stored session (followed
// first, with session.resume) or a new one (session.create first), with
// prompt.submit.
func (s *Source) Ask(ctx context.Context, session, text string) (source.Asked, error) {
	c := s.c
	var res source.Asked
	switch live, stored, ok := s.followed(session); {
	case session == "":
		ref, err := c.CreateSession(ctx, nil)
		if err != nil {
			return res, askError(c.Name(), err)
		}
		res.Session, res.StoredSession, res.NewSession = ref.ID, ref.StoredID, true
	case ok:
		res.Session, res.StoredSession = live, stored
	default:
		// Follow the stored session first (session.resume), so its turn
		// shows up here.
		ref, err := c.AttachSession(ctx, session)
		if err != nil {
			return res, askError(c.Name(), err)
		}
		res.Session, res.StoredSession = ref.ID, ref.StoredID
	}
	var r struct {
		Status string `json:"status"`
	}
	if err := c.Call(ctx, "prompt.submit", map[string]any{"session_id": res.Session, "text": text}, &r); err != nil {
		return res, askError(c.Name(), err)
	}
	res.Status = r.Status
	if res.Status == "" {
		res.Status = "submitted"
	}
	switch {
	case res.NewSession || c.FanOut():
	case res.Status == "queued":
		// A busy session queues the text (0.19's "queued" reply); the
		// queued turn's events go to the client that submitted it.
		res.Note = "the session was busy: your text runs after the current turn, and its events come to Herald (this gateway sends each session's events to one client at a time, so other clients showing it stop receiving them)"
	default:
		res.Note = "this gateway sends each session's events to one client at a time: its live events now go to Herald only; other clients showing it stop receiving them until they resume it"
	}
	return res, nil
}

// followed finds a session the client follows by live or stored id.
func (s *Source) followed(id string) (live, stored string, ok bool) {
	if id == "" {
		return "", "", false
	}
	for _, r := range s.c.Sessions() {
		if r.ID == id || (r.StoredID != "" && r.StoredID == id) {
			return r.ID, r.StoredID, true
		}
	}
	return "", "", false
}

func askError(gw string, err error) error {
	var re *wire.RPCError
	switch {
	case errors.Is(err, ErrNotConnected):
		return notSent(gw)
	case errors.As(err, &re) && (re.Code == 4001 || re.Code == 4007):
		return fmt.Errorf("%s: %v; nothing was sent: check the session id (`herald watch` shows them)", gw, err)
	}
	return fmt.Errorf("%s: %v; the prompt may not have been sent: check the session before sending it again", gw, err)
}

// Stop interrupts a session's turn (session.interrupt) and returns once
// the gateway confirmed its end: by the turn's end event, or by
// session.status (the turn's events may go to another client on 0.18.2).
func (s *Source) Stop(ctx context.Context, id string, w source.StopWait) (source.Stopped, error) {
	c, gw := s.c, s.c.Name()
	var r struct {
		Status string `json:"status"`
	}
	if err := c.Call(ctx, "session.interrupt", map[string]any{"session_id": id}, &r); err != nil {
		return source.Stopped{}, interruptError(gw, id, err)
	}
	if r.Status == "not_interrupted" {
		return source.Stopped{Outcome: source.OutcomeNotRunning, Message: fmt.Sprintf("%s/%s: the gateway says nothing was running to interrupt", gw, id)}, nil
	}
	if w.Known && !w.Running {
		// Herald saw the session idle: ask instead of waiting for a
		// turn end that will not come.
		return s.confirmByStatus(ctx, id, w, false)
	}
	res, done, err := w.Wait(ctx, func(ev wire.Event) source.Stopped {
		res := source.Stopped{Outcome: outcomeInterrupted}
		if cp, ok := ev.Data.(*wire.CompletePayload); ok && cp.Status != "" && cp.Status != outcomeInterrupted {
			res.Outcome = cp.Status // the turn ended on its own first
		}
		res.Message = fmt.Sprintf("%s/%s: turn %s (confirmed by the gateway)", gw, id, res.Outcome)
		return res
	}, func() (source.Stopped, bool) {
		if !s.agentIdle(ctx, id) {
			return source.Stopped{}, false
		}
		return endedByStatus(gw, id), true
	})
	switch {
	case err != nil:
		return res, fmt.Errorf("%s/%s: the interrupt was sent but Herald stopped waiting before the gateway confirmed it (%v); check the session with `herald watch`", gw, id, err)
	case !done:
		return s.confirmByStatus(ctx, id, w, true)
	}
	return res, nil
}

const outcomeInterrupted = "interrupted"

// endedByStatus: session.status says the interrupted turn has ended.
func endedByStatus(gw, id string) source.Stopped {
	return source.Stopped{Outcome: outcomeInterrupted, Message: fmt.Sprintf("%s/%s: the turn has ended (confirmed by session.status; its live events go to another client)", gw, id)}
}

// agentIdle reports whether session.status says the agent is not running.
func (s *Source) agentIdle(ctx context.Context, id string) bool {
	var st struct {
		Output string `json:"output"`
	}
	return s.c.Call(ctx, "session.status", map[string]any{"session_id": id}, &st) == nil && strings.Contains(st.Output, "Agent Running: No")
}

// confirmByStatus asks session.status whether the agent still runs (the
// turn's events may go to another client on 0.18.2).
func (s *Source) confirmByStatus(ctx context.Context, id string, w source.StopWait, waited bool) (source.Stopped, error) {
	gw := s.c.Name()
	var res source.Stopped
	var st struct {
		Output string `json:"output"`
	}
	err := s.c.Call(ctx, "session.status", map[string]any{"session_id": id}, &st)
	switch {
	case err != nil:
		return res, fmt.Errorf("%s/%s: the interrupt was sent, but whether the turn ended is unknown: asking the gateway failed (%v); check the session with `herald watch`", gw, id, err)
	case strings.Contains(st.Output, "Agent Running: No"):
		if waited {
			res = endedByStatus(gw, id)
		} else {
			res.Outcome = source.OutcomeNotRunning
			res.Message = fmt.Sprintf("%s/%s: nothing was running", gw, id)
		}
		return res, nil
	case strings.Contains(st.Output, "Agent Running: Yes"):
		return res, fmt.Errorf("%s/%s: the gateway accepted the interrupt but the agent is still running after %s (a tool may not be interruptible); try again, or stop it on the Hermes host", gw, id, w.Confirm)
	}
	return res, fmt.Errorf("%s/%s: the interrupt was sent, but the gateway did not say whether the turn ended; check the session with `herald watch`", gw, id)
}

func interruptError(gw, id string, err error) error {
	var re *wire.RPCError
	switch {
	case errors.Is(err, ErrNotConnected):
		return notSent(gw)
	case errors.As(err, &re) && re.Code == 4001:
		return fmt.Errorf("%s has no session %s (it ended or was reclaimed); nothing was interrupted", gw, id)
	}
	return fmt.Errorf("interrupting %s/%s failed: %v; try again", gw, id, err)
}

// notSent is the error of a call made while the gateway is not connected.
func notSent(gw string) error {
	return fmt.Errorf("%s is not connected, so nothing was sent; Herald reconnects by itself: try again once it shows connected", gw)
}
