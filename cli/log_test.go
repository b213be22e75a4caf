package cli

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/service"
)

// TestLogIsOneLinePerRequest: `herald log` shows each request once, with
// its outcome and its command (from its arrival when the last entry has
// none), and a request still waiting reads "waiting", not "pending".
func TestLogIsOneLinePerRequest(t *testing.T) {
	t.Parallel()
	e := func(key string, st approval.State, cmd, choice string) service.LogEntry {
		return service.LogEntry{Entry: approval.Entry{At: t0, Key: key, Gateway: "lab", State: st, Command: cmd, Choice: choice}, SessionName: "Fix the build"}
	}
	sudo := e("lab/sudo/1", approval.StatePending, "", "")
	sudo.RequestKind, sudo.Question = approval.KindSudo, "sudo password"
	sudoEnd := e("lab/sudo/1", approval.StateResolved, "", "password provided")
	sudoEnd.RequestKind, sudoEnd.SessionName = approval.KindSudo, ""
	for _, tc := range []struct {
		name    string
		entries []service.LogEntry
		want    []string // one per line, in order
	}{
		{"answered", []service.LogEntry{
			e("lab/ev/a", approval.StatePending, "rm -rf ./build", ""),
			e("lab/ev/a", approval.StateAnswering, "rm -rf ./build", "once"),
			e("lab/ev/a", approval.StateResolved, "rm -rf ./build", "once"),
		}, []string{"resolved   session “Fix the build”  rm -rf ./build  choice=once"}},
		{"expired, its command from its arrival", []service.LogEntry{
			e("lab/ev/b", approval.StatePending, "git push --force", ""),
			e("lab/ev/b", approval.StateExpired, "", ""),
		}, []string{"expired    session “Fix the build”  git push --force"}},
		{"still waiting", []service.LogEntry{e("lab/ev/c", approval.StatePending, "make clean", "")}, []string{"waiting    session “Fix the build”  make clean"}},
		{"a prompt keeps its question", []service.LogEntry{sudo, sudoEnd}, []string{"resolved   session “Fix the build”  sudo: sudo password  choice=password provided"}},
		{"interleaved, by last change", []service.LogEntry{
			e("lab/ev/a", approval.StatePending, "one", ""),
			e("lab/ev/b", approval.StatePending, "two", ""),
			e("lab/ev/a", approval.StateResolved, "one", "deny"),
		}, []string{"waiting    session “Fix the build”  two", "resolved   session “Fix the build”  one  choice=deny"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := onePerRequest(tc.entries)
			if len(got) != len(tc.want) {
				t.Fatalf("%d lines, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				if l := logLine(got[i]); !strings.Contains(l, w) {
					t.Errorf("line %d %q lacks %q", i, l, w)
				}
			}
		})
	}
}
