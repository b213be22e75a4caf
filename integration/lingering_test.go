//go:build unix

package integration

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermespeer"
	"github.com/herald-desktop/herald/service"
)

// TestUnknownAnswerSettledWhenTheGatewayReturns: a deny sent while the
// real 0.19.0 gateway is frozen (SIGSTOP) has an unknown outcome; the
// gateway is then killed and started again. The answer stays unknown
// (never pending, never sent again) while the gateway is away, and is
// settled, still unknown whether it took effect, by the first thing the
// returned gateway says: the session's old runtime is gone. It no longer
// lingers until the request's 5-minute deadline.
func TestUnknownAnswerSettledWhenTheGatewayReturns(t *testing.T) {
	t.Parallel()
	p := hermespeer.Start(t, hermespeer.WS, "0.19.0")
	r := newFollowRig(t, p, service.FollowAsk)
	ctx := context.Background()
	if _, err := r.svc.Ask(ctx, service.AskRequest{Gateway: "lab", Text: "approve-me: rm -rf ./build"}); err != nil {
		t.Fatal(err)
	}
	var key string
	r.wait(t, "the approval pending", func() bool {
		for _, a := range r.svc.View().Approvals {
			if a.Command == "rm -rf ./build" && a.State == approval.StatePending {
				key = a.Key
				return true
			}
		}
		return false
	})
	state := func() approval.Request { rq, _ := r.svc.Inbox().Get(key); return rq }
	if err := syscall.Kill(p.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	err := r.svc.Answer(ctx, key, approval.ChoiceDeny, "notification", false)
	if !errors.As(err, new(*approval.UnknownOutcomeError)) {
		t.Fatalf("a deny to a frozen gateway: %v, want its outcome unknown", err)
	}
	if rq := state(); rq.State != approval.StateSentUnknown {
		t.Fatalf("after the answer: %s", rq.State)
	}
	syscall.Kill(p.Pid(), syscall.SIGKILL)
	r.wait(t, "Herald to see the gateway gone", func() bool {
		for _, g := range r.svc.View().Gateways {
			if g.Gateway == "lab" && g.State != "connected" {
				return true
			}
		}
		return false
	})
	if rq := state(); rq.State != approval.StateSentUnknown {
		t.Fatalf("settled while the gateway was away: %s %q", rq.State, rq.Outcome.Detail)
	}
	p.Restart(t)
	back := time.Now()
	r.wait(t, "the unknown answer settled", func() bool { return !state().State.Live() })
	rq := state()
	if rq.State != approval.StateOutcomeUnknown || rq.Outcome.Choice != approval.ChoiceDeny {
		t.Fatalf("settled as %s %+v, want outcome-unknown of the deny", rq.State, rq.Outcome)
	}
	t.Logf("settled %s after the gateway was back: %s", time.Since(back).Round(time.Millisecond), rq.Outcome.Detail)
}
