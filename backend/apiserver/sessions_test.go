package apiserver_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Stored sessions are listed with their names and counts, the most
// recently active first; an unknown one and a server without sessions
// say so in words.
func TestStoredSessions(t *testing.T) {
	t.Parallel()
	h := start(t, apiservertest.SingleConsumer, setup{})
	h.srv.AddSession("old", "Refactor the parser", "first question", "first answer")
	h.srv.AddSession("newer", "", "what is in /srv?")
	p, err := h.client.ListSessions(ctxT(t), 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sessions) != 2 || p.More {
		t.Fatalf("listing: %+v", p)
	}
	byID := map[string]apiserver.StoredSession{}
	for _, s := range p.Sessions {
		byID[s.ID] = s
	}
	if s := byID["old"]; s.Title != "Refactor the parser" || s.Preview != "first question" || s.MessageCount != 2 || s.LastActive.IsZero() {
		t.Errorf("old: %+v", s)
	}
	if s := byID["newer"]; s.Title != "" || s.Preview != "what is in /srv?" || s.MessageCount != 1 {
		t.Errorf("newer: %+v", s)
	}
	if p, err := h.client.ListSessions(ctxT(t), 1, 0); err != nil || len(p.Sessions) != 1 || !p.More {
		t.Errorf("one page of one: %+v %v", p, err)
	}
	if _, err := h.client.GetSession(ctxT(t), "gone"); !errors.Is(err, apiserver.ErrNoSuchSession) || !strings.Contains(err.Error(), `no session "gone"`) {
		t.Errorf("unknown session: %v", err)
	}
	created, err := h.client.CreateSession(ctxT(t), "From Herald")
	if err != nil || created.ID == "" || created.Title != "From Herald" {
		t.Fatalf("create: %+v %v", created, err)
	}
	msgs, err := h.client.SessionMessages(ctxT(t), "old")
	if err != nil || len(msgs) != 2 || msgs[0].Role != "user" || msgs[1].Content != "first answer" {
		t.Errorf("messages: %+v %v", msgs, err)
	}

	// A server without the routes (older than the session resources).
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "404: Not Found", http.StatusNotFound)
	}))
	defer old.Close()
	c, err := apiserver.New(apiserver.Config{URL: old.URL, Key: "k", Clock: clock.NewFake(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListSessions(ctxT(t), 10, 0); !errors.Is(err, apiserver.ErrNoSessions) || !strings.Contains(err.Error(), "does not serve sessions") {
		t.Errorf("no sessions: %v", err)
	}
}

// sessionHarness runs a client against a fake whose session chat stream
// speaks ss; the server's clock is never advanced (slow turns hold).
func sessionHarness(t *testing.T, ss apiservertest.SessionStream, more ...func(*apiservertest.Options)) *harness {
	return start(t, apiservertest.SingleConsumer, setup{server: func(o *apiservertest.Options) {
		o.SessionStream = ss
		o.Clock = clock.NewFake(epoch)
		o.StepDelay = time.Second
		for _, f := range more {
			f(o)
		}
	}})
}

// On 0.18.2/0.19.0 a turn sent to a session streams its reply under its
// run id, and the client learns that the server cannot control such turns:
// the turn's note says that a dangerous command is refused without
// asking.
func TestSessionTurnLegacy(t *testing.T) {
	t.Parallel()
	h := sessionHarness(t, apiservertest.SessionStreamLegacy, func(o *apiservertest.Options) { o.StepDelay = 0 })
	sid := h.srv.AddSession("", "Deploy notes")
	turn, err := h.client.ChatSession(ctxT(t), sid, "approve-me: git reset --hard HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if turn.Control != apiserver.TurnUncontrolled || !strings.Contains(turn.Note(), "refuses a dangerous command") || turn.SessionID != sid {
		t.Fatalf("turn: %+v note %q", turn, turn.Note())
	}
	end := waitTurnEnd(t, h, turn.RunID)
	p := end.Data.(*apiserver.RunOutcomePayload)
	if end.Kind != wire.RunCompleted || !strings.HasPrefix(p.Output, "pending: git reset --hard HEAD") || end.StoredSession != sid {
		t.Fatalf("end: %s %+v stored %q", end.Kind, p, end.StoredSession)
	}
	h.rec.waitRun(t, turn.RunID, "done", func(ri apiserver.RunInfo) bool { return ri.Mode == apiserver.ModeDone })
	evs, sts := h.rec.snapshot()
	for _, e := range runEvents(evs, turn.RunID) {
		if e.IsApproval() {
			t.Errorf("an approval on a stream that cannot ask: %+v", e)
		}
	}
	if st := sts[len(sts)-1]; st.SessionTurns != apiserver.TurnUncontrolled {
		t.Errorf("status: %+v", st)
	}
	if got := texts(runEvents(evs, turn.RunID)); !strings.HasPrefix(got, "I will run a command.pending: git reset --hard HEAD") {
		t.Errorf("streamed reply: %q", got)
	}
}

// On such a server a stop of a running session turn says, in words, that
// it cannot be done; the stream stays open (closing it would not stop
// the turn either).
func TestSessionTurnLegacyStop(t *testing.T) {
	t.Parallel()
	h := sessionHarness(t, apiservertest.SessionStreamLegacy)
	sid := h.srv.AddSession("", "Slow")
	slow, err := h.client.ChatSession(ctxT(t), sid, "slow 3")
	if err != nil {
		t.Fatal(err)
	}
	_, err = sourceOf(t, h).Stop(ctxT(t), slow.RunID, source.StopWait{Clock: h.clk, Confirm: time.Minute, Poll: time.Second})
	if err == nil || !strings.Contains(err.Error(), "cannot stop a turn sent to a session") {
		t.Fatalf("stop: %v", err)
	}
	if ri, _ := h.srv.Run(slow.RunID); ri.Subscribers != 1 || ri.Status != "running" {
		t.Errorf("on the server: %+v", ri)
	}
}

// waitTurnEnd advances the fake server's steps until the run ends.
func waitTurnEnd(t *testing.T, h *harness, run string) wire.Event {
	t.Helper()
	var end wire.Event
	h.rec.waitFor(t, "the turn's end", func(evs []wire.Event, _ []apiserver.Status) bool {
		for _, e := range runEvents(evs, run) {
			if wire.IsRunEnd(e.Kind) {
				end = e
				return true
			}
		}
		return false
	})
	return end
}

func sourceOf(t *testing.T, h *harness) *apiserver.Source {
	t.Helper()
	return apiserver.NewSource(h.client)
}

// On a server whose session stream asks (PR #121769), the approval comes
// on the stream, answerable by order until the server has honoured an id
// on this connection; its answer's 200 settles it (the client reports
// it, as no approval.responded follows on the chat stream), a second
// approval of the turn follows, and stop ends a turn mid-approval with
// run.cancelled.
func TestSessionTurnApprovals(t *testing.T) {
	t.Parallel()
	h := sessionHarness(t, apiservertest.SessionStreamApprovals, func(o *apiservertest.Options) { o.StepDelay = 0 })
	sid := h.srv.AddSession("", "Cleanup")
	turn, err := h.client.ChatSession(ctxT(t), sid, "approve-seq: git reset --hard HEAD || rm -rf ./build")
	if err != nil {
		t.Fatal(err)
	}
	a := h.rec.waitKind(t, turn.RunID, wire.ApprovalRequest, 1)[0]
	ap := a.Data.(*wire.ApprovalPayload)
	if ap.Command != "git reset --hard HEAD" || ap.RequestID == "" || !ap.AnswerByOrder || a.StoredSession != sid || ap.SessionID != turn.RunID {
		t.Fatalf("first approval: %+v stored %q", ap, a.StoredSession)
	}
	if h.client.TurnControl() != apiserver.TurnControlled {
		t.Errorf("control: %q", h.client.TurnControl())
	}
	if err := h.client.RespondApproval(ctxT(t), turn.RunID, "once", "stale-id"); !errors.Is(err, apiserver.ErrApprovalNotPending) {
		t.Fatalf("stale id: %v", err)
	}
	if err := h.client.RespondApproval(ctxT(t), turn.RunID, "once", ap.RequestID); err != nil {
		t.Fatal(err)
	}
	h.rec.waitKind(t, turn.RunID, apiserver.ApprovalResponded, 1)
	second := h.rec.waitKind(t, turn.RunID, wire.ApprovalRequest, 2)[1].Data.(*wire.ApprovalPayload)
	if second.Command != "rm -rf ./build" {
		t.Fatalf("second approval: %+v", second)
	}
	if err := h.client.RespondApproval(ctxT(t), turn.RunID, "deny", second.RequestID); err != nil {
		t.Fatal(err)
	}
	if p := waitTurnEnd(t, h, turn.RunID).Data.(*apiserver.RunOutcomePayload); p.Output != "approved: git reset --hard HEAD\nblocked: rm -rf ./build" {
		t.Errorf("output: %q", p.Output)
	}

	// The server honoured an id: the next turn's approval is bound by it.
	next, err := h.client.ChatSession(ctxT(t), sid, "approve-me: rm -rf ./dist")
	if err != nil {
		t.Fatal(err)
	}
	if p := h.rec.waitKind(t, next.RunID, wire.ApprovalRequest, 1)[0].Data.(*wire.ApprovalPayload); p.AnswerByOrder {
		t.Errorf("after the server honoured an id: %+v", p)
	}
	if _, err := h.client.StopRun(ctxT(t), next.RunID); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if end := waitTurnEnd(t, h, next.RunID); end.Kind != wire.RunCancelled {
		t.Fatalf("end: %s", end.Kind)
	}
	got := h.srv.Approvals()
	if len(got) != 3 || got[0].Code != "approval_not_pending" || got[1].RequestID != ap.RequestID || got[2].Choice != "deny" {
		t.Errorf("answers the server took: %+v", got)
	}
}

// A session turn's stream cut mid-approval is never sent again (that would
// be a second turn): its live events are reported interrupted and the
// run's status, where /v1/runs knows it, carries the turn on to its end.
func TestSessionTurnCut(t *testing.T) {
	t.Parallel()
	h := sessionHarness(t, apiservertest.SessionStreamApprovals, func(o *apiservertest.Options) { o.StepDelay = 0 })
	sid := h.srv.AddSession("", "Cut")
	// run.started, message.started, 5 deltas, tool.started, approval.request
	h.srv.SetFaults(apiservertest.Faults{DropStreamAfter: 9})
	turn, err := h.client.ChatSession(ctxT(t), sid, "approve-me: rm -rf ./build")
	if err != nil {
		t.Fatal(err)
	}
	a := h.rec.waitKind(t, turn.RunID, wire.ApprovalRequest, 1)[0].Data.(*wire.ApprovalPayload)
	h.rec.waitKind(t, turn.RunID, wire.Resync, 1)
	ri := h.rec.waitRun(t, turn.RunID, "polling", func(ri apiserver.RunInfo) bool { return ri.Mode == apiserver.ModePolling })
	if !ri.Interrupted || ri.Session != sid {
		t.Errorf("run after the cut: %+v", ri)
	}
	if err := h.client.RespondApproval(ctxT(t), turn.RunID, "deny", a.RequestID); err != nil {
		t.Fatal(err)
	}
	end := h.pollUntil(turn.RunID, wire.RunCompleted)
	if p := end.Data.(*apiserver.RunOutcomePayload); !strings.Contains(p.Output, "blocked: rm -rf ./build") {
		t.Errorf("end: %+v", p)
	}
	chats := 0
	for _, r := range h.srv.Requests() {
		if strings.HasSuffix(r.Path, "/chat/stream") {
			chats++
		}
	}
	if chats != 1 {
		t.Errorf("the prompt was sent %d times", chats)
	}
}
