package service

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
)

// TestRestoredAPIApprovalFollowsItsRun: Herald stops while an API-server
// run waits for approval. At the next start the approval is shown again
// and its run is followed, so the run's end settles it (here: the run is
// stopped elsewhere), in both stream dialects.
func TestRestoredAPIApprovalFollowsItsRun(t *testing.T) {
	t.Parallel()
	for _, d := range []apiservertest.Dialect{apiservertest.SingleConsumer, apiservertest.LastEventID} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srvClk := clock.NewFake(time.Unix(1_800_000_000, 0))
			api := apiservertest.NewServer(apiservertest.Options{Dialect: d, Clock: srvClk, Keepalive: -1})
			t.Cleanup(api.Close)
			db := filepath.Join(t.TempDir(), "audit.db")
			clk := clock.NewFake(time.Now()) // Herald's clock: status polls wait on it
			start := func() (*Service, *changes, func()) {
				st, err := approval.OpenStore(db, approval.StoreOptions{})
				if err != nil {
					t.Fatal(err)
				}
				ch := newChanges()
				s := New(Config{Clock: clk, Store: st})
				onChange(s, ch.poke)
				if _, err := s.AddSource(SourceConfig{Kind: KindAPIServer, Config: source.Config{Name: "api", URL: api.URL, Secrets: map[string]string{"key": api.Key()}}}); err != nil {
					t.Fatal(err)
				}
				return s, ch, func() { s.Close(); st.Close() }
			}

			s, ch, stop := start()
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
			stop() // Herald stops while the run waits

			s, ch, stop = start()
			defer stop()
			r, ok := s.Inbox().Get(key)
			if !ok || r.State != approval.StatePending || r.Command != "rm -rf ./build" {
				t.Fatalf("restored %+v %v", r, ok)
			}
			// Followed again: whatever the stream or the polled status
			// offers is the same request, not a second one.
			testwait.Until(t, srcGuard, "the run followed", ch.next, func() bool {
				src, _ := s.Source("api")
				return src.Status().Sessions == 1
			})
			c, _ := s.apiClient("api")
			if _, err := c.StopRun(context.Background(), run); err != nil {
				t.Fatal(err)
			}
			testwait.Until(t, srcGuard, "the approval settled by the run's end", ch.next, func() bool {
				r, _ := s.Inbox().Get(key)
				if r.State.Live() {
					clk.Advance(apiserver.DefaultPollInterval) // fire a status poll, if one waits
				}
				return !r.State.Live()
			})
			if all := s.Inbox().Snapshot().Requests; len(all) != 1 {
				t.Fatalf("%d requests after the restart, want the one restored: %+v", len(all), all)
			}
			r, _ = s.Inbox().Get(key)
			if r.State != approval.StateCancelled {
				t.Fatalf("ended %s %+v", r.State, r.Outcome)
			}
		})
	}
}
