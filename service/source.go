package service

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/source"
)

// Kind is the transport of a Source (see backend/source).
type Kind = source.Kind

// Source kinds.
const (
	// KindGateway is the dashboard gateway's WebSocket (/api/ws JSON-RPC).
	KindGateway = gateway.Kind
	// KindAPIServer is Hermes' API server (/v1 HTTP and SSE).
	KindAPIServer = apiserver.Kind
)

// ParseKind reads a kind as settings and flags spell it ("" is ws).
func ParseKind(s string) (Kind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "ws", "gateway", "websocket":
		return KindGateway, nil
	case "api", "apiserver", "api-server":
		return KindAPIServer, nil
	}
	return "", fmt.Errorf("%q is not a kind of gateway: use ws (the dashboard gateway) or api (the API server)", s)
}

// Source is one way Herald follows Hermes (the contract of
// backend/source). Every surface reaches every transport through it, via
// the Service.
type Source = source.Source

// RunStarter is a Source that can start runs (the API server).
type RunStarter = source.RunStarter

// SourceConfig describes a source to add. Secrets are passed in, never
// stored by the service.
type SourceConfig struct {
	Kind Kind
	Name string
	URL  string
	// Token, Username and Password sign in to a gateway (ws).
	Token, Username, Password string
	// Key is the API server's key (api).
	Key string
	// RootCAs, when set, replaces the system roots for https/wss.
	RootCAs *x509.CertPool
	// Clock and Logger override the service's.
	Clock  clock.Clock
	Logger *slog.Logger
	// OnStatus sees this source's status changes before the service does.
	// It must not block.
	OnStatus func(gateway.Status)
}

// AddSource starts following a gateway or an API server. Names are unique
// across both kinds.
func (s *Service) AddSource(cfg SourceConfig) (Source, error) {
	switch cfg.Kind {
	case KindGateway, "":
		c, err := s.AddGateway(gateway.Config{
			Name: cfg.Name, URL: cfg.URL, Token: cfg.Token, Username: cfg.Username, Password: cfg.Password,
			RootCAs: cfg.RootCAs, Clock: cfg.Clock, Logger: cfg.Logger, OnStatus: cfg.OnStatus,
		})
		if err != nil {
			return nil, err
		}
		src, _ := s.Source(c.Name())
		return src, nil
	case KindAPIServer:
		return s.addAPI(cfg)
	}
	return nil, fmt.Errorf("unknown kind of gateway %q", cfg.Kind)
}

// sources is the registry of both kinds. WebSocket clients run in the
// gateway pool; API-server clients in goroutines of their own.
type sources struct {
	mu     sync.Mutex
	byName map[string]*sourceEntry
}

type sourceEntry struct {
	src    Source
	cancel context.CancelFunc // api only; the pool runs ws clients
	done   chan struct{}
}

func (s *Service) register(src Source, cancel context.CancelFunc, done chan struct{}) error {
	s.src.mu.Lock()
	defer s.src.mu.Unlock()
	if s.src.byName == nil {
		s.src.byName = map[string]*sourceEntry{}
	}
	if old, dup := s.src.byName[src.Name()]; dup {
		what := "a gateway"
		if old.src.Kind() == KindAPIServer {
			what = "an API server"
		}
		return fmt.Errorf("%s named %q is already configured; pick another name", what, src.Name())
	}
	s.src.byName[src.Name()] = &sourceEntry{src: src, cancel: cancel, done: done}
	return nil
}

func (s *Service) taken(name string) error {
	if _, ok := s.Source(name); ok {
		return fmt.Errorf("a gateway named %q is already configured; pick another name", name)
	}
	return nil
}

// Source returns a source by name.
func (s *Service) Source(name string) (Source, bool) {
	s.src.mu.Lock()
	defer s.src.mu.Unlock()
	e, ok := s.src.byName[name]
	if !ok {
		return nil, false
	}
	return e.src, true
}

// Sources lists every source, sorted by name.
func (s *Service) Sources() []Source {
	s.src.mu.Lock()
	out := make([]Source, 0, len(s.src.byName))
	for _, e := range s.src.byName {
		out = append(out, e.src)
	}
	s.src.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// Gateway returns a WebSocket source's client, for gateway-only calls
// (sessions, JSON-RPC).
func (s *Service) Gateway(name string) (*gateway.Client, bool) {
	src, ok := s.Source(name)
	if !ok {
		return nil, false
	}
	w, ok := src.(*wsSource)
	if !ok {
		return nil, false
	}
	return w.c, true
}

// APIServer returns an API-server source's client, for API-only calls
// (stopping runs, starting them with options).
func (s *Service) APIServer(name string) (*apiserver.Client, bool) {
	src, ok := s.Source(name)
	if !ok {
		return nil, false
	}
	a, ok := src.(*apiSource)
	if !ok {
		return nil, false
	}
	return a.c, true
}

// kindOf is a source's kind as a string ("" when unknown).
func (s *Service) kindOf(name string) string {
	if src, ok := s.Source(name); ok {
		return string(src.Kind())
	}
	return ""
}

// Follow follows a session or run on a source.
func (s *Service) Follow(ctx context.Context, source, id string) error {
	src, ok := s.Source(source)
	if !ok {
		return fmt.Errorf("no gateway named %q is configured", source)
	}
	return src.Follow(ctx, id)
}

// StartRun starts a run on an API server and follows it.
func (s *Service) StartRun(ctx context.Context, source, input string) (string, error) {
	src, ok := s.Source(source)
	if !ok {
		return "", fmt.Errorf("no gateway named %q is configured", source)
	}
	st, ok := src.(RunStarter)
	if !ok {
		return "", fmt.Errorf("%s is a WebSocket gateway: runs are started on API servers (--api)", source)
	}
	return st.StartRun(ctx, input)
}

// Remove stops a source (either kind), waits for it and forgets its
// sessions.
func (s *Service) Remove(name string) {
	s.src.mu.Lock()
	e, ok := s.src.byName[name]
	delete(s.src.byName, name)
	s.src.mu.Unlock()
	if ok && e.cancel != nil {
		e.cancel()
		<-e.done
	}
	s.pool.Remove(name)
	s.forgetLive(name)
	s.mu.Lock()
	delete(s.statuses, name)
	for k, v := range s.sessions {
		if v.Gateway == name {
			delete(s.sessions, k)
		}
	}
	delete(s.sessionCount, name)
	delete(s.sessionsDropped, name)
	s.mu.Unlock()
	s.changed()
}

// Reconnect asks a source to reconnect now.
func (s *Service) Reconnect(name string) error {
	src, ok := s.Source(name)
	if !ok {
		return fmt.Errorf("no gateway named %q is configured", name)
	}
	src.ReconnectNow()
	return nil
}

func (s *Service) closeSources() {
	s.src.mu.Lock()
	entries := s.src.byName
	s.src.byName = nil
	s.src.mu.Unlock()
	for _, e := range entries {
		if e.cancel != nil {
			e.cancel()
		}
	}
	for _, e := range entries {
		if e.cancel != nil {
			<-e.done
		}
	}
}

// ---- the WebSocket gateway ----

// wsSource is a gateway client as a Source. Sessions asked for before the
// gateway is connected are resumed when it connects (the client itself
// re-attaches followed sessions after every reconnect).
type wsSource struct {
	c   *gateway.Client
	svc *Service

	mu      sync.Mutex
	pending []string
}

func (w *wsSource) Name() string { return w.c.Name() }
func (w *wsSource) Kind() Kind   { return KindGateway }
func (w *wsSource) Status() gateway.Status {
	st := w.c.Status()
	st.Kind = string(KindGateway)
	return st
}
func (w *wsSource) ReconnectNow() { w.c.ReconnectNow() }

// Run is the gateway client's; the pool runs it.
func (w *wsSource) Run(ctx context.Context) error { return w.c.Run(ctx) }

func (w *wsSource) RespondApproval(ctx context.Context, sessionID, choice, requestID string) (int, error) {
	return w.c.RespondApproval(ctx, sessionID, choice, requestID)
}

func (w *wsSource) RespondServerRequest(ctx context.Context, requestID, choice string) error {
	return w.c.RespondServerRequest(ctx, requestID, choice)
}

func (w *wsSource) Follow(ctx context.Context, id string) error {
	id = strings.TrimSpace(id)
	if id == "" {
		return errors.New("no session id given")
	}
	if w.c.Status().State != gateway.StateConnected {
		w.mu.Lock()
		w.pending = append(w.pending, id)
		w.mu.Unlock()
		// It may have connected meanwhile: attach what is pending.
		if w.c.Status().State == gateway.StateConnected {
			w.attachPending()
		}
		return nil
	}
	_, err := w.c.AttachSession(ctx, id)
	return err
}

func (w *wsSource) Unfollow(id string) {
	w.mu.Lock()
	out := w.pending[:0]
	for _, p := range w.pending {
		if p != id {
			out = append(out, p)
		}
	}
	w.pending = out
	w.mu.Unlock()
	for _, s := range w.c.Sessions() {
		if s.ID == id || s.StoredID == id {
			w.c.Forget(s.ID)
		}
	}
}

func (w *wsSource) hasPending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending) > 0
}

// attachPending resumes the sessions asked for before the connection.
func (w *wsSource) attachPending() {
	w.mu.Lock()
	ids := w.pending
	w.pending = nil
	w.mu.Unlock()
	for _, id := range ids {
		if _, err := w.c.AttachSession(w.svc.ctx, id); err != nil && w.svc.ctx.Err() == nil {
			w.svc.problem(w.Name(), fmt.Errorf("following session %s: %w", id, err))
		}
	}
}

// ---- the API server ----

// apiSource is an API-server client as a Source: runs are its sessions,
// and "nothing pending" (409) is a resolved count of 0.
type apiSource struct{ c *apiserver.Client }

func (a *apiSource) Name() string                  { return a.c.Name() }
func (a *apiSource) Kind() Kind                    { return KindAPIServer }
func (a *apiSource) Status() gateway.Status        { return a.c.Status().Source() }
func (a *apiSource) ReconnectNow()                 { a.c.ReconnectNow() }
func (a *apiSource) Unfollow(id string)            { a.c.Forget(id) }
func (a *apiSource) Run(ctx context.Context) error { return a.c.Run(ctx) }

func (a *apiSource) Follow(_ context.Context, id string) error {
	id = strings.TrimSpace(id)
	if id == "" {
		return errors.New("no run id given")
	}
	a.c.Follow(id)
	return nil
}

func (a *apiSource) StartRun(ctx context.Context, input string) (string, error) {
	r, err := a.c.StartRun(ctx, apiserver.RunRequest{Input: input})
	if err != nil {
		return "", err
	}
	return r.ID, nil
}

func (a *apiSource) RespondApproval(ctx context.Context, runID, choice, requestID string) (int, error) {
	err := a.c.RespondApproval(ctx, runID, choice, requestID)
	if errors.Is(err, apiserver.ErrApprovalNotPending) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return 1, nil
}

func (a *apiSource) RespondServerRequest(context.Context, string, string) error {
	return errors.New("the API server has no server requests")
}

func (s *Service) addAPI(cfg SourceConfig) (Source, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = s.log
	}
	clk := cfg.Clock
	if clk == nil {
		clk = s.clk
	}
	user := cfg.OnStatus
	c, err := apiserver.New(apiserver.Config{
		Name: cfg.Name, URL: cfg.URL, Key: cfg.Key, RootCAs: cfg.RootCAs,
		Clock: clk, Logger: logger, OnEvent: s.onEvent,
		OnStatus: func(st apiserver.Status) {
			gs := st.Source()
			if user != nil {
				user(gs)
			}
			s.onStatus(gs)
		},
	})
	if err != nil {
		return nil, err
	}
	src := &apiSource{c: c}
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan struct{})
	if err := s.register(src, cancel, done); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(done)
		src.Run(ctx)
	}()
	// Approvals restored from the history (Herald restarted while they
	// waited) belong to runs nobody follows now: follow them, so their
	// end settles the approvals.
	for _, r := range s.inbox.Pending() {
		if r.Gateway == src.Name() && r.Uncertain && r.Session != "" {
			c.Follow(r.Session)
		}
	}
	s.changed()
	return src, nil
}
