package service

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
)

// liveGateway is a service following one session of a fake gateway.
func liveGateway(t *testing.T, opt hermestest.Options) (*hermestest.Server, *Service, *gateway.Client, *changes, string) {
	t.Helper()
	srv := hermestest.NewServer(opt)
	t.Cleanup(srv.Close)
	live, stored := srv.CreateSession()
	ch := newChanges()
	s := New(Config{})
	onChange(s, ch.poke)
	t.Cleanup(s.Close)
	c, err := addGateway(s, gateway.Config{Name: "gw", URL: srv.URL, Token: srv.Token()})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 20*time.Second, "connected", ch.next, func() bool { return c.Status().State == source.StateConnected })
	if _, err := c.AttachSession(context.Background(), stored); err != nil {
		t.Fatal(err)
	}
	return srv, s, c, ch, live
}

func find(s *Service, cmd string) (approval.Request, bool) {
	for _, r := range s.Inbox().Snapshot().Requests {
		if r.Command == cmd {
			return r, true
		}
	}
	return approval.Request{}, false
}

// TestRestartedGatewayRelistsAreNewRequests: a gateway that restarts (new
// replay epoch) and then asks again under an id it used before gets a new
// request in Herald; the old one is withdrawn and keeps its own command,
// and an answer goes to the new command.
func TestRestartedGatewayRelistsAreNewRequests(t *testing.T) {
	t.Parallel()
	srv, s, c, ch, live := liveGateway(t, hermestest.Options{Dialect: hermestest.Modern, ReuseIDsAfterRestart: true})
	id1, _, err := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "ls ./old"})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 20*time.Second, "the first request", ch.next, func() bool { _, ok := find(s, "ls ./old"); return ok })
	oldEpoch := c.Status().Epoch
	stored := c.Sessions()[0].StoredID
	srv.Restart()
	// The session died with the old process: Herald does not resume it by
	// itself (that would build an agent for it); following it again does.
	testwait.Until(t, 20*time.Second, "reconnected under the new epoch", ch.next, func() bool {
		st := c.Status()
		return st.State == source.StateConnected && st.Epoch != oldEpoch && len(c.Sessions()) == 0
	})
	if _, err := c.AttachSession(context.Background(), stored); err != nil {
		t.Fatal(err)
	}
	if ss := c.Sessions(); len(ss) != 1 || ss[0].ID == live {
		t.Fatalf("sessions after following again: %+v (old id %s)", ss, live)
	}
	testwait.Until(t, 20*time.Second, "the old request withdrawn", ch.next, func() bool {
		r, _ := find(s, "ls ./old")
		return r.State == approval.StateCancelled
	})
	old, _ := find(s, "ls ./old")
	if !strings.Contains(old.Outcome.Detail, "restarted") {
		t.Fatalf("old request ended with %q", old.Outcome.Detail)
	}
	id2, done, err := srv.RequestApproval(c.Sessions()[0].ID, hermestest.ApprovalSpec{Command: "rm -rf ./new"})
	if err != nil {
		t.Fatal(err)
	}
	if id2 != id1 {
		t.Fatalf("the fake gave a new id %s (old %s); the test needs a reused one", id2, id1)
	}
	testwait.Until(t, 20*time.Second, "the re-used id as a new request", ch.next, func() bool { _, ok := find(s, "rm -rf ./new"); return ok })
	nr, _ := find(s, "rm -rf ./new")
	if nr.State != approval.StatePending || nr.Key == old.Key || nr.Conflict != "" || nr.Epoch != srv.Epoch() {
		t.Fatalf("new request %+v (old key %s)", nr, old.Key)
	}
	if o, _ := s.Inbox().Get(old.Key); o.Command != "ls ./old" || o.State != approval.StateCancelled {
		t.Fatalf("the old request changed: %+v", o)
	}
	if err := s.Answer(context.Background(), nr.Key, "once", "test", false); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != "once" {
		t.Fatalf("the gateway got %q", got)
	}
	as := srv.Answers()
	if last := as[len(as)-1]; last.Command != "rm -rf ./new" || last.RequestID != id2 {
		t.Fatalf("the answer resolved %+v", last)
	}
}

// TestDuplicateIDFromGatewayIsFlagged: a gateway that sends two different
// commands under one open server request id gets both shown, flagged,
// and neither approvable; deny goes through.
func TestDuplicateIDFromGatewayIsFlagged(t *testing.T) {
	t.Parallel()
	srv, s, _, ch, live := liveGateway(t, hermestest.Options{Dialect: hermestest.Modern})
	for _, cmd := range []string{"ls ./harmless", "rm -rf ~"} {
		if _, _, err := srv.RequestApproval(live, hermestest.ApprovalSpec{ID: "srq-dup", Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	testwait.Until(t, 20*time.Second, "both commands shown, flagged", ch.next, func() bool {
		a, okA := find(s, "ls ./harmless")
		b, okB := find(s, "rm -rf ~")
		return okA && okB && a.Conflict != "" && b.Conflict != ""
	})
	a, _ := find(s, "ls ./harmless")
	var ce *approval.ConflictError
	if err := s.Answer(context.Background(), a.Key, "once", "test", false); !errors.As(err, &ce) {
		t.Fatalf("approving a conflicting request: %v", err)
	} else {
		t.Logf("user sees: %v", err)
	}
	if err := s.Answer(context.Background(), a.Key, "deny", "test", false); err != nil {
		t.Fatalf("deny: %v", err)
	}
	for _, an := range srv.Answers() {
		if an.Choice != "deny" {
			t.Fatalf("the gateway got %+v", an)
		}
	}
}
