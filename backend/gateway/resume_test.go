package gateway

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// session opens a session with a stored row (first prompt done).
func (h *harness) session(t *testing.T) SessionRef {
	t.Helper()
	ref, err := h.client.CreateSession(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(kinds(h, wire.MessageComplete))
	if err := h.client.Call(ctxT(t), "prompt.submit", map[string]any{"session_id": ref.ID, "text": "hello"}, nil); err != nil {
		t.Fatal(err)
	}
	h.rec.waitKind(t, wire.MessageComplete, n+1)
	return ref
}

func kinds(h *harness, kind string) []wire.Event {
	evs, _ := h.rec.snapshot()
	var out []wire.Event
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func resyncReasons(h *harness) []string {
	var out []string
	for _, e := range kinds(h, wire.Resync) {
		out = append(out, e.Data.(*wire.ResyncPayload).Reason)
	}
	return out
}

func deltas(h *harness) []string {
	var out []string
	for _, e := range kinds(h, wire.MessageDelta) {
		out = append(out, e.Data.(*wire.DeltaPayload).Text)
	}
	return out
}

// TestLegacyReconnectSaysEventsMayBeMissed: 0.18.2 has no replay, so after
// a reconnect the client re-attaches the session and says, in its state and
// with a resync event, that events may have been missed.
func TestLegacyReconnectSaysEventsMayBeMissed(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	defer srv.Close()
	h := start(t, srv, nil)
	h.rec.waitState(t, source.StateConnected)
	ref := h.session(t)
	if st := h.client.Status(); st.MayHaveMissedEvents {
		t.Fatal("fresh connection claims missed events")
	}
	m := h.rec.mark()
	srv.Kick()
	srv.Emit(ref.ID, wire.MessageDelta, map[string]any{"text": "lost"}) // nobody attached: lost
	h.rec.waitReconnected(t, m)
	st := h.client.Status()
	if !st.MayHaveMissedEvents || st.MissedReason != "no-replay" {
		t.Fatalf("status after 0.18.2 reconnect = %+v, want may-have-missed no-replay", st)
	}
	h.rec.waitKind(t, wire.Resync, 1)
	if got := resyncReasons(h); len(got) != 1 || got[0] != "no-replay" {
		t.Fatalf("resync events %v, want [no-replay]", got)
	}
	// Re-attached: new events for the session arrive again.
	srv.Emit(ref.ID, wire.MessageDelta, map[string]any{"text": "after"})
	h.rec.waitFor(t, "delta after reconnect", func([]wire.Event, []source.Status) bool {
		d := deltas(h)
		return len(d) > 0 && d[len(d)-1] == "after"
	})
	// A second drop: the client remembers the gateway has no replay.
	m = h.rec.mark()
	srv.Kick()
	h.rec.waitReconnected(t, m)
	if got := count(srv.Methods(), "session.resume"); got != 2 {
		t.Fatalf("session.resume called %d times, want 2", got)
	}
	if got := count(srv.Methods(), "session.events.since"); got != 1 {
		t.Fatalf("client asked a 0.18.2 gateway for replay %d times, want once (then remember -32601)", got)
	}
}

// TestRestartWithNewEpoch: a gateway restart resets seq numbering; the
// client must notice the new epoch, reset its watermark and keep
// delivering (a stale watermark would silently drop every new event).
// Of the followed sessions it resumes only those the restarted gateway
// lists live (here one another client resumed meanwhile); the others
// died with the old process and are dropped with a SessionGone event,
// not resumed (each resume builds an agent on the server), and the
// resumed one's old runtime id is reported gone too.
func TestRestartWithNewEpoch(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := start(t, srv, nil)
	h.rec.waitState(t, source.StateConnected)
	ref := h.session(t)
	dead := h.session(t)
	for i := 0; i < 20; i++ {
		srv.Emit(ref.ID, wire.MessageDelta, map[string]any{"text": "old" + strconv.Itoa(i)})
	}
	h.rec.waitFor(t, "old deltas", func([]wire.Event, []source.Status) bool { return len(deltas(h)) == 20 })
	oldEpoch := h.client.Status().Epoch
	h.manual.Store(true)
	srv.SetFaults(hermestest.Faults{RejectUpgrade: 503})
	m := h.rec.mark()
	srv.Restart()
	retry := h.rec.waitStateAfter(t, m, source.StateReconnecting)
	peer := srv.NewPeer()
	defer peer.Close()
	if err := peer.Resume(ref.StoredID); err != nil {
		t.Fatal(err)
	}
	resumes := count(srv.Methods(), "session.resume")
	srv.SetFaults(hermestest.Faults{})
	h.clk.Advance(retry.NextRetry.Sub(h.clk.Now()))
	h.rec.waitReconnected(t, m)
	h.manual.Store(false)
	st := h.client.Status()
	if st.Epoch == oldEpoch || st.Epoch != srv.Epoch() {
		t.Fatalf("epoch %q after restart, want the new %q", st.Epoch, srv.Epoch())
	}
	h.rec.waitKind(t, wire.Resync, 1)
	got := resyncReasons(h)
	if !strings.Contains(strings.Join(got, ","), "epoch") {
		t.Fatalf("resync reasons %v, want epoch", got)
	}
	if n := count(srv.Methods(), "session.resume") - resumes; n != 1 {
		t.Fatalf("Herald resumed %d sessions after the restart, want 1 (the live one)", n)
	}
	// The cold resume gave the live session a new runtime id; the dead
	// one is no longer followed.
	refs := h.client.Sessions()
	if len(refs) != 1 || refs[0].StoredID != ref.StoredID || refs[0].ID == ref.ID {
		t.Fatalf("sessions after restart = %+v, want only stored %s under a new id", refs, ref.StoredID)
	}
	h.rec.waitKind(t, wire.SessionGone, 2)
	gone := map[string]bool{}
	for _, e := range kinds(h, wire.SessionGone) {
		gone[e.Session] = true
	}
	if !gone[dead.ID] || !gone[ref.ID] || len(gone) != 2 {
		t.Fatalf("sessions reported gone %v, want the dead %s and the old id %s", gone, dead.ID, ref.ID)
	}
	for i := 0; i < 5; i++ {
		srv.Emit(refs[0].ID, wire.MessageDelta, map[string]any{"text": "new" + strconv.Itoa(i)})
	}
	h.rec.waitFor(t, "new deltas", func([]wire.Event, []source.Status) bool { return len(deltas(h)) == 25 })
	for _, e := range kinds(h, wire.MessageDelta)[20:] {
		if e.StoredSession != ref.StoredID {
			t.Fatalf("event after restart lost its stored session: %+v", e)
		}
	}
}

// TestTruncatedReplaySaysRefetch: when the gateway's ring no longer
// reaches back to the watermark, the client delivers what there is and
// flags the session for a refetch.
func TestTruncatedReplaySaysRefetch(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, ReplayBuffer: 8})
	defer srv.Close()
	h := start(t, srv, nil)
	h.manual.Store(true)
	h.rec.waitState(t, source.StateConnected)
	ref := h.session(t)
	m := h.rec.mark()
	srv.Kick()
	h.rec.waitStateAfter(t, m, source.StateReconnecting)
	for i := 0; i < 30; i++ {
		srv.Emit(ref.ID, wire.MessageDelta, map[string]any{"text": strconv.Itoa(i)})
	}
	h.client.ReconnectNow()
	h.rec.waitReconnected(t, m)
	st := h.client.Status()
	if !st.MayHaveMissedEvents || st.MissedReason != "truncated" {
		t.Fatalf("status = %+v, want may-have-missed truncated", st)
	}
	h.rec.waitKind(t, wire.Resync, 1)
	h.rec.waitKind(t, wire.MessageDelta, 8)
	d := deltas(h)
	if len(d) != 8 || d[0] != "22" || d[7] != "29" {
		t.Fatalf("replayed deltas %v, want the ring's last 8 (22..29)", d)
	}
}

// TestUnknownServerRequestRefusedAtOnce: a server request Herald cannot
// serve is answered -32601 immediately, and still reported.
func TestUnknownServerRequestRefusedAtOnce(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := start(t, srv, nil)
	h.rec.waitState(t, source.StateConnected)
	ref := h.session(t)
	id, err := srv.SendServerRequest(ref.ID, "vault.code", map[string]any{"site": "which?"})
	if err != nil {
		t.Fatal(err)
	}
	var resp json.RawMessage
	waitServer(t, srv, "response", func() bool { var ok bool; resp, ok = srv.Response(id); return ok })
	var f struct {
		Error *wire.RPCError `json:"error"`
	}
	if json.Unmarshal(resp, &f); f.Error == nil || f.Error.Code != wire.CodeMethodNotFound {
		t.Fatalf("response to unknown server request = %s, want -32601", resp)
	}
	evs := h.rec.waitKind(t, wire.ServerRequestUnknown, 1)
	if evs[0].RequestID != id || !strings.Contains(string(evs[0].Payload), "vault.code") {
		t.Fatalf("unknown request event = %+v", evs[0])
	}
}

// TestPendingApprovalSurvivesReconnect: an approval that arrived before a
// drop is not delivered twice (open_requests repeats it), and one that the
// gateway settled while Herald was away is withdrawn with a cancel.
func TestPendingApprovalSurvivesReconnect(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := start(t, srv, nil)
	h.manual.Store(true)
	h.rec.waitState(t, source.StateConnected)
	ref := h.session(t)
	keep, _, _ := srv.RequestApproval(ref.ID, hermestest.ApprovalSpec{Command: "rm -rf ./a"})
	gone, goneDone, _ := srv.RequestApproval(ref.ID, hermestest.ApprovalSpec{Command: "rm -rf ./b"})
	h.rec.waitFor(t, "two approvals", func(evs []wire.Event, _ []source.Status) bool { return len(approvals(evs)) == 2 })
	m := h.rec.mark()
	srv.CloseAll(1001, "going away")
	h.rec.waitStateAfter(t, m, source.StateReconnecting)
	// While Herald is away, the gateway settles one approval through
	// another client (its request.cancel goes nowhere).
	if _, err := srv.ResolveElsewhere(ref.ID, gone, "deny"); err != nil {
		t.Fatal(err)
	}
	if c := <-goneDone; c != "deny" {
		t.Fatalf("agent got %q", c)
	}
	h.client.ReconnectNow()
	h.rec.waitReconnected(t, m)
	h.rec.waitKind(t, wire.RequestCancel, 1)
	evs, _ := h.rec.snapshot()
	if n := len(approvals(evs)); n != 2 {
		t.Fatalf("%d approval events after reconnect, want the original 2 (no duplicates)", n)
	}
	cancels := kinds(h, wire.RequestCancel)
	if len(cancels) != 1 || cancels[0].RequestID != gone {
		t.Fatalf("cancels after reconnect = %+v, want one for %s", cancels, gone)
	}
	a := approvals(evs)[0]
	if a.RequestID != keep {
		t.Fatalf("first approval %s, want %s", a.RequestID, keep)
	}
	if err := h.client.RespondServerRequest(ctxT(t), keep, "once"); err != nil {
		t.Fatal(err)
	}
	waitServer(t, srv, "answer", func() bool { return len(srv.Answers()) == 2 })
	if got := srv.Answers()[1]; got.RequestID != keep || got.Choice != "once" {
		t.Fatalf("answer = %+v", got)
	}
}
