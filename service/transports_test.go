package service

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/bridge"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
)

// A WebSocket source answers prompts; an API server has none.
var _ approval.PromptAnswerer = (*gateway.Source)(nil)

// addGateway adds a dashboard gateway as AddSource does, for tests that
// drive its client itself.
func addGateway(s *Service, cfg gateway.Config) (*gateway.Client, error) {
	src, err := s.AddSource(SourceConfig{Kind: KindGateway, Config: source.Config{Name: cfg.Name, URL: cfg.URL, Secrets: map[string]string{"token": cfg.Token}, Clock: cfg.Clock}})
	if err != nil {
		return nil, err
	}
	return src.(*gateway.Source).Client(), nil
}

// The transports' kinds, as tests name them: the service itself names
// none (it opens sources through the drivers).
const (
	KindGateway   = gateway.Kind
	KindAPIServer = apiserver.Kind
	KindBridge    = bridge.Kind
	TransportWS   = string(gateway.Kind)
	TransportAPI  = string(apiserver.Kind)
)

// Every transport Herald is built with is registered.
func TestKindsAreRegistered(t *testing.T) {
	t.Parallel()
	for _, k := range []source.Kind{KindGateway, KindAPIServer, KindBridge} {
		if d, err := source.Lookup(string(k)); err != nil || d.Kind != k {
			t.Errorf("Lookup(%q) = %v, %v", k, d.Kind, err)
		}
	}
}

// gatewayClient is a dashboard gateway source's client, for tests.
func (s *Service) gatewayClient(name string) (*gateway.Client, bool) {
	src, _ := s.Source(name)
	g, ok := src.(*gateway.Source)
	if !ok {
		return nil, false
	}
	return g.Client(), true
}

// apiClient is an API-server source's client, for tests.
func (s *Service) apiClient(name string) (*apiserver.Client, bool) {
	src, _ := s.Source(name)
	a, ok := src.(*apiserver.Source)
	if !ok {
		return nil, false
	}
	return a.Client(), true
}

// A session Hermes has not stored yet (no first prompt) cannot be
// followed: the gateway's 4007 reaches the service as
// source.ErrNotStarted, and the user is told to wait for the first prompt.
func TestFollowSessionNotStartedYet(t *testing.T) {
	t.Parallel()
	r := newLiveRig(t, hermestest.Modern, FollowAsk)
	r.connect()
	err := r.svc.FollowSession(context.Background(), "lab", "20261203_080000_abcdef")
	if err == nil || !strings.Contains(err.Error(), "cannot be followed yet") {
		t.Fatalf("FollowSession of an unstored session = %v, want \"cannot be followed yet\"", err)
	}
	f, _ := r.svc.follower("lab")
	_, err = f.Attach(context.Background(), "20261203_080000_abcdef")
	if !errors.Is(err, source.ErrNotStarted) || !strings.Contains(err.Error(), "session not found") {
		t.Fatalf("Attach = %v, want source.ErrNotStarted with the gateway's text", err)
	}
}
