package service

import (
	"strings"
	"testing"
)

// TestMissedTextHasNoCodes: every reason reads as words; no code a user
// cannot act on (no-replay, epoch, …) is shown.
func TestMissedTextHasNoCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ reason, want string }{
		{"", ""},
		{"no-replay", "this gateway cannot send what happened while Herald was away"},
		{"epoch", "the gateway restarted"},
		{"new-runtime", "the session was restarted on the gateway"},
		{"truncated", "the gateway no longer holds everything that happened while Herald was away"},
		{"resume-failed", "following the session again failed"},
		{"replay-failed", "fetching what happened while Herald was away failed"},
		{"overflow", "more happened at once than Herald keeps while it catches up"},
		{"unreadable-frame", "the gateway sent something Herald could not read"},
		{"odd-new-code", "the connection was interrupted"},
		{"the API server dropped the stream (Hermes 0.18.2 cannot resume)", "the connection was interrupted"},
	} {
		got := MissedText(tc.reason)
		if got != tc.want {
			t.Errorf("MissedText(%q) = %q, want %q", tc.reason, got, tc.want)
		}
		if tc.reason != "" && !strings.Contains(tc.reason, " ") && strings.Contains(got, tc.reason) {
			t.Errorf("MissedText(%q) shows the code: %q", tc.reason, got)
		}
	}
}
