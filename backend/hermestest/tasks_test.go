package hermestest

import (
	"strings"
	"testing"
)

// TestApprovalsInOneTurn: the stub agent's approve-seq and approve-par
// (../shared/hermes-peer README, "Task words"): two approvals in one
// turn, one after the other or both waiting at once. Answered id-less,
// the oldest first: deny, then once. Each command's tool.complete reports
// its answer, the second approval of approve-seq is asked only after the
// first's tool.complete, and message.complete says per command whether
// it was approved or blocked.
func TestApprovalsInOneTurn(t *testing.T) {
	t.Parallel()
	const c1, c2 = "rm -rf ./A-build-cache", "git push --force origin main"
	for _, version := range []string{"0.18.2", "0.19.0"} {
		for _, task := range []string{"approve-seq", "approve-par"} {
			t.Run(version+"/"+task, func(t *testing.T) {
				t.Parallel()
				s := NewServer(Options{Dialect: Legacy, Version: version})
				defer s.Close()
				ws := dial(t, s, nil)
				defer ws.Close()
				sid := newSession(t, ws)
				rpc(t, ws, 2, "prompt.submit", map[string]any{"session_id": sid, "text": task + ": " + c1 + " || " + c2})
				first, _ := untilEvent(t, ws, "approval.request")
				if first["command"] != c1 {
					t.Fatalf("first approval asks %v, want %q", first["command"], c1)
				}
				if task == "approve-par" {
					if second, _ := untilEvent(t, ws, "approval.request"); second["command"] != c2 {
						t.Fatalf("second approval asks %v, want %q", second["command"], c2)
					}
				}
				res, evs := rpc(t, ws, 3, "approval.respond", map[string]any{"session_id": sid, "choice": "deny"})
				if r, _ := res["result"].(map[string]any); r["resolved"] != float64(1) {
					t.Fatalf("deny answered %v", res)
				}
				var seen []string
				for _, ev := range evs {
					typ, _ := eventType(ev)
					seen = append(seen, typ)
				}
				if task == "approve-seq" {
					second, more := untilEvent(t, ws, "approval.request")
					seen = append(seen, more...)
					if second["command"] != c2 || !strings.Contains(strings.Join(seen, ","), "tool.complete,") {
						t.Fatalf("after the deny: %v, then %v; want the first tool.complete before the second approval", seen, second)
					}
				}
				res, _ = rpc(t, ws, 4, "approval.respond", map[string]any{"session_id": sid, "choice": "once"})
				if r, _ := res["result"].(map[string]any); r["resolved"] != float64(1) {
					t.Fatalf("once answered %v", res)
				}
				done, _ := untilEvent(t, ws, "message.complete")
				if want := "blocked: " + c1 + "\napproved: " + c2; done["text"] != want {
					t.Fatalf("turn ended %q, want %q", done["text"], want)
				}
				got := s.Answers()
				if len(got) != 2 || got[0].Command != c1 || got[0].Choice != "deny" || got[1].Command != c2 || got[1].Choice != "once" {
					t.Fatalf("answers %+v", got)
				}
			})
		}
	}
}

// TestApprovalsAnnouncedOutOfOrder: with SwapParallel, approve-par queues
// its two approvals in order and announces them in the other, as two
// threads of 0.18.2 and 0.19.0 can (PROTOCOL.md, "Two approvals in one
// turn"): an id-less deny goes to the queue's head, the approval
// announced second, and its tool.complete names that command.
func TestApprovalsAnnouncedOutOfOrder(t *testing.T) {
	t.Parallel()
	const c1, c2 = "rm -rf ./A-build-cache", "git push --force origin main"
	for _, version := range []string{"0.18.2", "0.19.0"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			s := NewServer(Options{Dialect: Legacy, Version: version, SwapParallel: true})
			defer s.Close()
			ws := dial(t, s, nil)
			defer ws.Close()
			sid := newSession(t, ws)
			rpc(t, ws, 2, "prompt.submit", map[string]any{"session_id": sid, "text": "approve-par: " + c1 + " || " + c2})
			for _, want := range []string{c2, c1} {
				if got, _ := untilEvent(t, ws, "approval.request"); got["command"] != want {
					t.Fatalf("approval announced %v, want %q", got["command"], want)
				}
			}
			rpc(t, ws, 3, "approval.respond", map[string]any{"session_id": sid, "choice": "deny"})
			done, _ := untilEvent(t, ws, "tool.complete")
			if args, _ := done["args"].(map[string]any); args["command"] != c1 {
				t.Fatalf("the deny's tool.complete names %v, want the queue's head %q", done["args"], c1)
			}
			rpc(t, ws, 4, "approval.respond", map[string]any{"session_id": sid, "choice": "once"})
			end, _ := untilEvent(t, ws, "message.complete")
			if want := "blocked: " + c1 + "\napproved: " + c2; end["text"] != want {
				t.Fatalf("turn ended %q, want %q", end["text"], want)
			}
		})
	}
}
