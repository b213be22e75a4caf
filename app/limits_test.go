package app

import (
	"testing"

	"github.com/herald-desktop/herald/approval"
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
