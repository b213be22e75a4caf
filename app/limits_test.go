package app

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
)

// TestNoOneClickForBoundedRequests: a command Herald had to truncate, or
// one whose id the gateway used for another command, is never offered
// "Approve once" in a notification or the tray.
func TestNoOneClickForBoundedRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		tweak func(*approval.Request)
		want  bool
	}{
		{"plain", func(*approval.Request) {}, true},
		{"truncated", func(r *approval.Request) { r.Truncated, r.CommandBytes = true, 100000 }, false},
		{"conflict", func(r *approval.Request) {
			r.Conflict = "the gateway sent different commands under the same request id"
		}, false},
	} {
		r := pendingRequest("k", "ls -la")
		tc.tweak(&r)
		n := approvalNotification(r, t0)
		if hasAction(n, approval.ChoiceOnce) != tc.want || oneClick(r, trayLabelMax) != tc.want {
			t.Errorf("%s: notification offers once %v, tray %v; want %v", tc.name, hasAction(n, approval.ChoiceOnce), oneClick(r, trayLabelMax), tc.want)
		}
	}
}

// TestFloodNotification: refused approvals raise one notification per
// gateway per floodThrottle, never one each.
func TestFloodNotification(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	n := newNotifier(clk, nil)
	p := newFakePlatform()
	n.attach(p)
	refused := approval.Change{Kind: approval.ChangeRefused, Request: approval.Request{Gateway: "lab", Command: "junk", State: approval.StateFailed,
		Outcome: approval.Outcome{Error: "refused: gateway lab already has 256 approvals open (Herald's limit)"}}}
	for range 500 {
		n.approval(refused)
	}
	clk.Advance(floodThrottle)
	n.approval(refused)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.notified) != 2 || !strings.Contains(p.notified[0].Title, "lab is flooding") || !strings.Contains(p.notified[0].Body, "256") || hasAction(p.notified[0], approval.ChoiceOnce) {
		t.Fatalf("notifications %+v", p.notified)
	}
}
