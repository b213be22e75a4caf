package service

import (
	"context"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
)

// TestAPIRunEndSettlesItsApproval: an API-server run that ends while its
// approval waits (stopped, or the approval timed out on the server) ends
// the approval in the inbox and the audit log, with the run's outcome.
func TestAPIRunEndSettlesItsApproval(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		end   func(t *testing.T, s *Service, srvClk *clock.Fake, run string)
		state approval.State
	}{
		{name: "stopped", state: approval.StateCancelled, end: func(t *testing.T, s *Service, _ *clock.Fake, run string) {
			c, _ := s.apiClient("api")
			if _, err := c.StopRun(context.Background(), run); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "timed out on the server", state: approval.StateExpired, end: func(t *testing.T, _ *Service, srvClk *clock.Fake, _ string) {
			srvClk.BlockUntil(1)
			srvClk.Advance(time.Hour)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srvClk := clock.NewFake(time.Unix(1_800_000_000, 0))
			api := apiservertest.NewServer(apiservertest.Options{Clock: srvClk, Keepalive: -1, ApprovalTimeout: time.Minute})
			t.Cleanup(api.Close)
			ch := newChanges()
			store := approval.NewMemoryStore()
			s := New(Config{Store: store})
			onChange(s, ch.poke)
			defer s.Close()
			if _, err := s.AddSource(SourceConfig{Kind: KindAPIServer, Config: source.Config{Name: "api", URL: api.URL, Secrets: map[string]string{"key": api.Key()}}}); err != nil {
				t.Fatal(err)
			}
			run, err := s.StartRun(context.Background(), "api", "approve-me: rm -rf ./build")
			if err != nil {
				t.Fatal(err)
			}
			var key string
			testwait.Until(t, srcGuard, "the approval", ch.next, func() bool {
				p := s.Inbox().Pending()
				if len(p) == 1 {
					key = p[0].Key
				}
				return len(p) == 1
			})
			tc.end(t, s, srvClk, run)
			// The inbox shows the end before it is written to the audit
			// log (the change is recorded, then announced): wait for both.
			testwait.Until(t, srcGuard, "the approval to end in the inbox and the audit log", ch.next, func() bool {
				r, _ := s.Inbox().Get(key)
				es, _ := store.List(approval.Filter{Key: key})
				return !r.State.Live() && len(es) > 0 && !es[len(es)-1].State.Live()
			})
			r, _ := s.Inbox().Get(key)
			if r.State != tc.state {
				t.Fatalf("ended %s (%+v), want %s", r.State, r.Outcome, tc.state)
			}
			es, _ := store.List(approval.Filter{Key: key})
			if last := es[len(es)-1]; last.State != tc.state {
				t.Fatalf("audit log ends %s", last.State)
			}
		})
	}
}
