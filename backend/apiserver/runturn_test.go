package apiserver_test

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/wire"
)

// chatStreams counts the prompts the server took on a chat stream.
func chatStreams(srv *apiservertest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/chat/stream") {
			n++
		}
	}
	return n
}

// Once the connection learned that the session chat stream cannot ask
// approvals or stop (0.18.2/0.19.0), the next turn to a session goes as a
// run with session_id and the session's messages as its history: its
// approval reaches Herald under the session, the deny is taken, and the
// prompt and reply are stored in the session.
func TestSessionTurnAsRun(t *testing.T) {
	t.Parallel()
	h := sessionHarness(t, apiservertest.SessionStreamLegacy, func(o *apiservertest.Options) { o.StepDelay = 0 })
	sid := h.srv.AddSession("", "Deploy notes", "what is deployed?", "v1.2")
	first, err := h.client.ChatSession(ctxT(t), sid, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if first.Via != apiserver.ViaChatStream || first.Control != apiserver.TurnUncontrolled {
		t.Fatalf("first turn: %+v", first)
	}
	waitTurnEnd(t, h, first.RunID)
	if note := apiserver.NewSource(h.client).TurnNote(); note != apiserver.RunTurnsNote {
		t.Errorf("note: %q", note)
	}

	turn, err := h.client.ChatSession(ctxT(t), sid, "approve-me: git reset --hard HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if turn.Via != apiserver.ViaRun || turn.SessionID != sid || turn.HistorySent != 4 || turn.HistoryStored != 4 || turn.Note() != "" {
		t.Fatalf("turn: %+v note %q", turn, turn.Note())
	}
	a := h.rec.waitKind(t, turn.RunID, wire.ApprovalRequest, 1)[0]
	if p := a.Data.(*wire.ApprovalPayload); p.Command != "git reset --hard HEAD" || a.StoredSession != sid {
		t.Fatalf("approval: %+v stored %q", p, a.StoredSession)
	}
	if err := h.client.RespondApproval(ctxT(t), turn.RunID, "deny", ""); err != nil {
		t.Fatal(err)
	}
	end := h.rec.waitKind(t, turn.RunID, wire.RunCompleted, 1)[0]
	if p := end.Data.(*apiserver.RunOutcomePayload); !strings.HasPrefix(p.Output, "blocked: git reset --hard HEAD") || end.StoredSession != sid {
		t.Errorf("end: %+v stored %q", p, end.StoredSession)
	}
	if ri, _ := h.srv.Run(turn.RunID); ri.Session != sid || ri.History != 4 {
		t.Errorf("on the server: %+v", ri)
	}
	si, _ := h.srv.Session(sid)
	if n := len(si.Messages); n != 6 || si.Messages[4] != "user: approve-me: git reset --hard HEAD" || !strings.HasPrefix(si.Messages[5], "assistant: blocked: git reset --hard HEAD") {
		t.Errorf("the session holds %q", si.Messages)
	}
	if n := chatStreams(h.srv); n != 1 {
		t.Errorf("%d prompts on the chat stream", n)
	}
	h.rec.waitRun(t, turn.RunID, "done", func(ri apiserver.RunInfo) bool { return ri.Mode == apiserver.ModeDone })
	if ri := h.rec.waitRun(t, turn.RunID, "done", func(ri apiserver.RunInfo) bool { return true }); ri.Session != sid {
		t.Errorf("run info: %+v", ri)
	}
}

// A turn sent as a run stops (run.cancelled), is listed as the session's
// turn while it runs, and a second prompt to the session meanwhile is
// refused in words rather than run beside it.
func TestSessionTurnAsRunStops(t *testing.T) {
	t.Parallel()
	h := sessionHarness(t, apiservertest.SessionStreamLegacy)
	sid := h.srv.AddSession("", "Slow")
	apiserver.SetTurnControl(h.client, apiserver.TurnUncontrolled) // as learned by an earlier turn
	slow, err := h.client.ChatSession(ctxT(t), sid, "slow 3")
	if err != nil {
		t.Fatal(err)
	}
	if slow.Via != apiserver.ViaRun {
		t.Fatalf("turn: %+v", slow)
	}
	h.rec.waitKind(t, slow.RunID, wire.MessageDelta, 1)
	listed, err := apiserver.NewSource(h.client).StoredSessions(ctxT(t), 10)
	if err != nil || len(listed.Sessions) != 1 || listed.Sessions[0].Turn != slow.RunID {
		t.Fatalf("listed: %+v %v", listed, err)
	}
	if _, err := h.client.ChatSession(ctxT(t), sid, "hello"); err == nil || !strings.Contains(err.Error(), "already has a turn running") {
		t.Fatalf("second prompt: %v", err)
	}
	if st, err := h.client.StopRun(ctxT(t), slow.RunID); err != nil || st.Status != "stopping" {
		t.Fatalf("stop: %+v %v", st, err)
	}
	if end := waitTurnEnd(t, h, slow.RunID); end.Kind != wire.RunCancelled || end.StoredSession != sid {
		t.Fatalf("end: %s stored %q", end.Kind, end.StoredSession)
	}
	si, _ := h.srv.Session(sid)
	if len(si.Messages) != 2 || si.Messages[0] != "user: slow 3" {
		t.Errorf("the session holds %q", si.Messages)
	}
	if n := chatStreams(h.srv); n != 0 {
		t.Errorf("%d prompts on the chat stream", n)
	}
}

// A session longer than the bound sends only its most recent messages,
// and the turn says so.
func TestSessionTurnAsRunBoundsHistory(t *testing.T) {
	t.Parallel()
	h := sessionHarness(t, apiservertest.SessionStreamLegacy, func(o *apiservertest.Options) { o.StepDelay = 0 })
	msgs := make([]string, 0, 250)
	for i := range 250 {
		msgs = append(msgs, strings.Repeat("x", i%7+1))
	}
	sid := h.srv.AddSession("", "Long", msgs...)
	apiserver.SetTurnControl(h.client, apiserver.TurnUncontrolled)
	turn, err := h.client.ChatSession(ctxT(t), sid, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if turn.HistorySent != apiserver.MaxTurnHistoryMessages || turn.HistoryStored != 250 ||
		!strings.Contains(turn.Note(), "last 200 of 250 stored messages") {
		t.Fatalf("turn: %+v note %q", turn, turn.Note())
	}
	if ri, _ := h.srv.Run(turn.RunID); ri.History != apiserver.MaxTurnHistoryMessages {
		t.Errorf("on the server: %+v", ri)
	}
}

// The history a run turn sends: user and assistant messages with text,
// the most recent first kept, within the message and byte bounds; every
// stored message counted; a cut answer is an error.
func TestDecodeHistory(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("b", 100)
	for _, tc := range []struct {
		name            string
		answer          string
		maxMsgs, maxLen int
		want            string
		total           int
		err             bool
	}{
		{"roles and text", `{"object":"list","session_id":"s","data":[{"role":"system","content":"sys"},{"role":"user","content":"hi","id":1},{"role":"assistant","content":null,"tool_calls":[{}]},{"role":"tool","content":"out"},{"role":"assistant","content":"hello"},{"role":"user","content":[{"type":"text","text":"img"}]}]}`, 10, 1000, "user:hi|assistant:hello", 6, false},
		{"count bound keeps the newest", `{"data":[{"role":"user","content":"1"},{"role":"assistant","content":"2"},{"role":"user","content":"3"},{"role":"assistant","content":"4"},{"role":"user","content":"5"}]}`, 2, 1000, "assistant:4|user:5", 5, false},
		{"byte bound keeps the newest", `{"data":[{"role":"user","content":"` + big + `"},{"role":"assistant","content":"` + big + `"},{"role":"user","content":"` + big + `"}]}`, 10, 250, "assistant:" + big + "|user:" + big, 3, false},
		{"a newest message over the byte bound sends none", `{"data":[{"role":"user","content":"` + big + `"}]}`, 10, 50, "", 1, false},
		{"data after other keys", `{"session_id":"s","extra":{"a":[1,2]},"data":[{"role":"user","content":"x"}]}`, 10, 100, "user:x", 1, false},
		{"cut", `{"data":[{"role":"user","content":"x"}`, 10, 100, "", 0, true},
		{"not an object", `[]`, 10, 100, "", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hist, total, err := apiserver.DecodeHistory(strings.NewReader(tc.answer), tc.maxMsgs, tc.maxLen)
			if (err != nil) != tc.err {
				t.Fatalf("err %v", err)
			}
			var got []string
			for _, m := range hist {
				got = append(got, m.Role+":"+m.Content)
			}
			if strings.Join(got, "|") != tc.want || total != tc.total {
				t.Errorf("got %q total %d, want %q total %d", strings.Join(got, "|"), total, tc.want, tc.total)
			}
		})
	}
}

// A turn sent as a run is sent once: a start whose answer is lost is an
// unknown outcome in words, never retried into a second turn (the server
// does not say it honours Idempotency-Key); an unknown session is named.
func TestSessionTurnAsRunSentOnce(t *testing.T) {
	t.Parallel()
	h := sessionHarness(t, apiservertest.SessionStreamLegacy, func(o *apiservertest.Options) { o.StepDelay = 0 })
	sid := h.srv.AddSession("", "Once", "q", "a")
	apiserver.SetTurnControl(h.client, apiserver.TurnUncontrolled)
	if _, err := h.client.ChatSession(ctxT(t), "gone", "hello"); err == nil || !strings.Contains(err.Error(), `no session "gone"`) {
		t.Errorf("unknown session: %v", err)
	}
	h.srv.SetFaults(apiservertest.Faults{DropStartResponse: 1})
	_, err := h.client.ChatSession(ctxT(t), sid, "hello")
	if err == nil || !strings.Contains(err.Error(), "may have reached session "+sid+" before the link failed; whether a turn runs is unknown") {
		t.Fatalf("lost answer: %v", err)
	}
	if runs := h.srv.RunIDs(); len(runs) != 1 {
		t.Errorf("the server started %d runs", len(runs))
	}
}
