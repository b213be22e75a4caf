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
		Auth: []source.AuthMode{
			{Name: "token", Label: "Session token", Secret: "Token", Flag: "token", Env: "HERALD_TOKEN",
				Hint: "The dashboard's session token. Hermes makes a new one at every start: start it as `HERMES_DASHBOARD_SESSION_TOKEN=your-token hermes dashboard` and give Herald the same value (or copy `window.__HERMES_SESSION_TOKEN__` from the dashboard page's source)."},
			{Name: "password", Label: "Password", Secret: "Password", Username: true, Flag: "password", Env: "HERALD_PASSWORD",
				Hint: "The user name and password of a dashboard started with a password sign-in (gated mode)."},
			{Name: "none", Label: "None"},
		},
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
		return source.CheckResult{Stage: stage, Message: err.Error()}
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

var _ source.Source = (*Source)(nil)

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
