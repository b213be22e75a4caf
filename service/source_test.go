package service

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
)

const srcGuard = 20 * time.Second

// changes is a broadcast of the service's OnChange, for testwait.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func newChanges() *changes { return &changes{ch: make(chan struct{})} }

func (c *changes) poke() {
	c.mu.Lock()
	close(c.ch)
	c.ch = make(chan struct{})
	c.mu.Unlock()
}

func (c *changes) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch
}

// sourceRig is one fake Hermes of either kind behind a Source.
type sourceRig struct {
	kind    Kind
	cfg     SourceConfig
	follow  string                         // the session or run to follow ("" for none)
	ask     func(t *testing.T, s *Service) // makes the agent ask for approval of "rm -rf ./build"
	answers func() []string                // choices the fake received
	changed func() <-chan struct{}
}

func wsRig(t *testing.T) *sourceRig {
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	t.Cleanup(srv.Close)
	live, stored := srv.CreateSession()
	return &sourceRig{
		kind: KindGateway, cfg: SourceConfig{Kind: KindGateway, Config: source.Config{Name: "src", URL: srv.URL, Secrets: map[string]string{"token": srv.Token()}}},
		follow: stored,
		ask: func(t *testing.T, _ *Service) {
			testwait.Until(t, srcGuard, "the session attached", srv.Changed, func() bool {
				for _, s := range srv.Sessions() {
					if s.ID == live && s.Attached {
						return true
					}
				}
				return false
			})
			if _, _, err := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf ./build"}); err != nil {
				t.Fatal(err)
			}
		},
		answers: func() []string {
			var out []string
			for _, a := range srv.Answers() {
				out = append(out, a.Choice)
			}
			return out
		},
		changed: srv.Changed,
	}
}

func apiRig(t *testing.T) *sourceRig {
	srv := apiservertest.NewServer(apiservertest.Options{Dialect: apiservertest.SingleConsumer})
	t.Cleanup(srv.Close)
	return &sourceRig{
		kind: KindAPIServer, cfg: SourceConfig{Kind: KindAPIServer, Config: source.Config{Name: "src", URL: srv.URL, Secrets: map[string]string{"key": srv.Key()}}},
		ask: func(t *testing.T, s *Service) {
			if _, err := s.StartRun(context.Background(), "src", "approve-me: rm -rf ./build"); err != nil {
				t.Fatal(err)
			}
		},
		answers: func() []string {
			var out []string
			for _, a := range srv.Approvals() {
				out = append(out, a.Choice)
			}
			return out
		},
		changed: srv.Changed,
	}
}

// TestSourceBothKinds drives a WebSocket gateway and an API server through
// the one Source interface: status in the same terms, follow, approvals
// into the one inbox, answers back to the right fake, reconnect and
// remove.
func TestSourceBothKinds(t *testing.T) {
	t.Parallel()
	for _, mk := range []func(*testing.T) *sourceRig{wsRig, apiRig} {
		rig := mk(t)
		t.Run(string(rig.kind), func(t *testing.T) {
			t.Parallel()
			ch := newChanges()
			s := New(Config{Store: approval.NewMemoryStore()})
			onChange(s, ch.poke)
			defer s.Close()
			src, err := s.AddSource(rig.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if src.Kind() != rig.kind || src.Name() != "src" {
				t.Fatalf("source %s %s", src.Kind(), src.Name())
			}
			if got, ok := s.Source("src"); !ok || got != src {
				t.Fatal("the service does not list the source")
			}
			if rig.follow != "" {
				// Asked before the connection: followed once connected.
				if err := s.Follow(context.Background(), "src", rig.follow); err != nil {
					t.Fatal(err)
				}
			}
			testwait.Until(t, srcGuard, "connected", ch.next, func() bool { return src.Status().State == source.StateConnected })
			if st := src.Status(); st.Kind != string(rig.kind) || st.Gateway != "src" {
				t.Fatalf("status %+v", st)
			}
			v := s.View()
			if len(v.Gateways) != 1 || v.Gateways[0].Kind != string(rig.kind) || v.Gateways[0].Gateway != "src" {
				t.Fatalf("view gateways %+v", v.Gateways)
			}

			rig.ask(t, s)
			var req approval.Request
			testwait.Until(t, srcGuard, "the approval in the inbox", ch.next, func() bool {
				p := s.Inbox().Pending()
				if len(p) == 1 {
					req = p[0]
				}
				return len(p) == 1
			})
			if req.Gateway != "src" || req.Command != "rm -rf ./build" {
				t.Fatalf("request %+v", req)
			}
			if err := s.Answer(context.Background(), req.Key, "deny", "test", false); err != nil {
				t.Fatal(err)
			}
			testwait.Until(t, srcGuard, "the fake to get the answer", rig.changed, func() bool { return len(rig.answers()) == 1 })
			if got := rig.answers(); got[0] != "deny" {
				t.Fatalf("the fake got %v", got)
			}

			if err := s.Reconnect("src"); err != nil {
				t.Fatal(err)
			}
			s.Remove("src")
			if _, ok := s.Source("src"); ok {
				t.Fatal("removed source still listed")
			}
			if v := s.View(); len(v.Gateways) != 0 {
				t.Fatalf("removed source still shown: %+v", v.Gateways)
			}
			if err := s.Reconnect("src"); err == nil {
				t.Fatal("reconnecting a removed source did not fail")
			}
		})
	}
}

// TestSourceNamesAndRuns: names are unique across both kinds, and only an
// API server starts runs.
func TestSourceNamesAndRuns(t *testing.T) {
	t.Parallel()
	ws, api := wsRig(t), apiRig(t)
	s := New(Config{})
	defer s.Close()
	if _, err := s.AddSource(ws.cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSource(api.cfg); err == nil || !strings.Contains(err.Error(), `named "src" is already configured`) {
		t.Fatalf("an API server under a gateway's name: %v", err)
	}
	api.cfg.Name = "api"
	if _, err := s.AddSource(api.cfg); err != nil {
		t.Fatal(err)
	}
	ws.cfg.Name = "api"
	if _, err := s.AddSource(ws.cfg); err == nil {
		t.Fatal("a gateway under an API server's name was accepted")
	}
	if _, err := s.StartRun(context.Background(), "src", "hello"); err == nil || !strings.Contains(err.Error(), "WebSocket gateway") {
		t.Fatalf("a run on a WebSocket gateway: %v", err)
	}
	if names := len(s.Sources()); names != 2 {
		t.Fatalf("%d sources", names)
	}
}
