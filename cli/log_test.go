package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/wire"
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

// TestOneSessionNameOnEveryLine: the watch feed, an approval's block, a
// question's block, `pending` and a prompt's header name a session alike:
// its one name (recorded with the request; the feed asks the service) and
// its id in the one form surfaces show it (a session's stored id, an API
// run's whole id, never "run_0129" or "run 0129590f").
func TestOneSessionNameOnEveryLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, stored, live, want string
	}{
		{"dashboard session", "20261203_191047_bc46cf", "644a578b", "“Fix the build” (20261203_191047_bc46cf)"},
		{"API run", "", "run_0129590fab734db4b17ca4033a83db08", "“Fix the build” (run_0129590fab734db4b17ca4033a83db08)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ap := approval.Request{Key: "lab/ev/x/1", Gateway: "lab", Session: tc.live, StoredSession: tc.stored, SessionTitle: "Fix the build", Command: "rm -rf ./build", Kind: approval.KindApproval,
				Choices: []string{"once", "deny"}, ReceivedAt: t0, ExpiresAt: t0.Add(time.Minute), State: approval.StatePending}
			q := ap
			q.Key, q.Kind, q.Command, q.Question, q.Choices = "lab/clarify/1", approval.KindClarify, "", "Deploy?", []string{"yes", "no"}
			var feed, attached, notice strings.Builder
			named := func(gw, live, stored string) string { return "Fix the build" }
			ev := wire.Event{Gateway: "lab", Session: tc.live, StoredSession: tc.stored, Kind: wire.ToolStart, Data: &wire.ToolStartPayload{Name: "terminal"}}
			printEvent(&printer{w: &feed, name: named}, ev, "")
			// An attached watch has no service: the name comes with the
			// event from the running Herald (service.Notify.Name).
			printEvent(&printer{w: &attached}, ev, "Fix the build")
			ev.Data = &wire.NotificationPayload{Text: "Still starting the agent", Level: "info"}
			printEvent(&printer{w: &notice, name: named}, ev, "")
			var qb strings.Builder
			printPrompt(&printer{w: &qb}, "1", approval.Change{Kind: approval.ChangeArrived, Request: q})
			for what, text := range map[string]string{
				"feed":           feed.String(),
				"attached feed":  attached.String(),
				"notice":         notice.String(),
				"approval block": strings.Join(approvalBlock(ap, 1), "\n"),
				"question block": qb.String(),
				"pending":        pendingLine(ap, t0),
				"pending prompt": pendingLine(q, t0),
				"prompt header":  promptHeader(q),
			} {
				want := tc.want
				switch what { // one line per event: the name alone
				case "feed", "attached feed":
					want = "lab · Fix the build ▶"
				case "notice":
					want = "lab · Fix the build ℹ Still starting the agent"
				}
				if !strings.Contains(text, want) {
					t.Errorf("%s %q does not name the session %q", what, text, want)
				}
				if tc.stored == "" && strings.Contains(text, "run_0129 ") {
					t.Errorf("%s %q cuts the run id", what, text)
				}
			}
		})
	}
}

// TestSessionNoticesNameTheSession: what the feed says of a session found,
// offered, followed or taken elsewhere names it by its one name (the
// notice's Name), not by the gateway's raw title or its id; the id stays
// where the line says what to type.
func TestSessionNoticesNameTheSession(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind    service.NoticeKind
		typeKey bool
	}{
		{service.NoticeFound, false},
		{service.NoticeOffer, true},
		{service.NoticeFollowed, false},
		{service.NoticeElsewhere, true},
	} {
		var b strings.Builder
		printSessionNotice(&printer{w: &b}, service.SessionNotice{Kind: tc.kind, Gateway: "lab", Session: "644a578b", Key: "20261203_191047_bc46cf",
			Title: "", Name: "run the tests and fix what fails", Status: "running"})
		line := b.String()
		if !strings.Contains(line, `"run the tests and fix what fails"`) {
			t.Errorf("%s: %q does not name the session by its one name", tc.kind, line)
		}
		if strings.Contains(line, "20261203_191047_bc46cf") != tc.typeKey {
			t.Errorf("%s: %q: the id is there only to be typed", tc.kind, line)
		}
	}
}
