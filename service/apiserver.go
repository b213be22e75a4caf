package service

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/gateway"
)

// apiServers holds the API-server clients (Hermes' HTTP API, runs over
// SSE) that run next to the WebSocket gateways.
type apiServers struct {
	mu      sync.Mutex
	clients map[string]*apiEntry
}

type apiEntry struct {
	c      *apiserver.Client
	cancel context.CancelFunc
	done   chan struct{}
}

// apiAnswerer adapts an API-server client to the inbox: the run id is the
// session, and "nothing pending" (409) is a resolved count of 0.
type apiAnswerer struct{ c *apiserver.Client }

func (a apiAnswerer) RespondApproval(ctx context.Context, runID, choice, requestID string) (int, error) {
	err := a.c.RespondApproval(ctx, runID, choice, requestID)
	if errors.Is(err, apiserver.ErrApprovalNotPending) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return 1, nil
}

func (a apiAnswerer) RespondServerRequest(context.Context, string, string) error {
	return errors.New("the API server has no server requests")
}

// AddAPIServer starts following a Hermes API server. Its runs, events and
// approvals join the same view and inbox as the gateways'.
func (s *Service) AddAPIServer(cfg apiserver.Config) (*apiserver.Client, error) {
	if cfg.Clock == nil {
		cfg.Clock = s.clk
	}
	if cfg.Logger == nil {
		cfg.Logger = s.log
	}
	user := cfg.OnStatus
	cfg.OnEvent = s.onEvent
	cfg.OnStatus = func(st apiserver.Status) {
		if user != nil {
			user(st)
		}
		s.onStatus(GatewayStatus(st))
	}
	c, err := apiserver.New(cfg)
	if err != nil {
		return nil, err
	}
	s.api.mu.Lock()
	if s.api.clients == nil {
		s.api.clients = map[string]*apiEntry{}
	}
	if _, dup := s.api.clients[c.Name()]; dup {
		s.api.mu.Unlock()
		return nil, fmt.Errorf("an API server named %q is already configured; pick another name", c.Name())
	}
	if _, dup := s.pool.Get(c.Name()); dup {
		s.api.mu.Unlock()
		return nil, fmt.Errorf("a gateway named %q is already configured; pick another name", c.Name())
	}
	ctx, cancel := context.WithCancel(s.ctx)
	e := &apiEntry{c: c, cancel: cancel, done: make(chan struct{})}
	s.api.clients[c.Name()] = e
	s.api.mu.Unlock()
	s.mu.Lock()
	s.kinds[c.Name()] = "api"
	s.mu.Unlock()
	go func() {
		defer close(e.done)
		c.Run(ctx)
	}()
	return c, nil
}

// APIServer returns a followed API server's client.
func (s *Service) APIServer(name string) (*apiserver.Client, bool) {
	s.api.mu.Lock()
	defer s.api.mu.Unlock()
	e, ok := s.api.clients[name]
	if !ok {
		return nil, false
	}
	return e.c, true
}

func (s *Service) apiAnswerer(name string) (approval.Answerer, bool) {
	c, ok := s.APIServer(name)
	if !ok {
		return nil, false
	}
	return apiAnswerer{c}, true
}

func (s *Service) closeAPI() {
	s.api.mu.Lock()
	entries := s.api.clients
	s.api.clients = nil
	s.api.mu.Unlock()
	for _, e := range entries {
		e.cancel()
	}
	for _, e := range entries {
		<-e.done
	}
}

// GatewayStatus presents an API server's status like a gateway's, so
// every surface shows both side by side.
func GatewayStatus(st apiserver.Status) gateway.Status {
	state := gateway.State(st.State)
	return gateway.Status{
		Gateway: st.Gateway, State: state, Err: st.Err, Attempt: st.Attempt, NextRetry: st.NextRetry,
		ConnectedAt: st.ConnectedAt, Version: st.Version,
		MayHaveMissedEvents: st.MayHaveMissedEvents, MissedReason: st.MissedReason,
		Sessions: len(st.Runs),
	}
}
