package apiserver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

func TestProbe(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			h := start(t, d, setup{})
			st := h.client.Status()
			if st.Version == "" || !st.Features.RunEvents || !st.Features.RunApproval || !st.Features.RunStop {
				t.Fatalf("status %+v", st)
			}
			if st.Features.Idempotency != (d == apiservertest.LastEventID) {
				t.Errorf("idempotency feature %v in %s", st.Features.Idempotency, d)
			}
			info, err := h.client.Probe(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if !info.HasCapabilities || !info.AuthRequired || info.FeatureString("session_continuity_header") != "X-Hermes-Session-Id" || info.Feature("no_such_feature") {
				t.Errorf("info %+v", info)
			}
		})
	}
}

// TestApprovalRoundTrip: start a run, the approval arrives, Herald answers,
// the server records the answer, approval.responded confirms it and the run
// completes, in both dialects and for every choice.
func TestApprovalRoundTrip(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		for _, choice := range []string{"once", "session", "always", "deny"} {
			t.Run(d.String()+"/"+choice, func(t *testing.T) {
				t.Parallel()
				h := start(t, d, setup{})
				run := h.startRun("approve-me: git reset --hard HEAD")
				ap := h.rec.waitKind(t, run, wire.ApprovalRequest, 1)[0]
				a, ok := ap.Approval()
				if !ok || a.Command != "git reset --hard HEAD" || a.Description != "git reset --hard (destroys uncommitted changes)" || a.SessionID != run {
					t.Fatalf("approval %+v", a)
				}
				if (ap.RequestID != "") != (d == apiservertest.LastEventID) || a.RequestID != ap.RequestID {
					t.Fatalf("request id %q / %q in %s", ap.RequestID, a.RequestID, d)
				}
				h.rec.waitRun(t, run, "one pending approval", func(ri apiserver.RunInfo) bool { return ri.PendingApprovals == 1 })
				if err := h.client.RespondApproval(ctxT(t), ap.Session, choice, ap.RequestID); err != nil {
					t.Fatal(err)
				}
				got := h.srv.Approvals()
				if len(got) != 1 || got[0].RunID != run || got[0].Choice != choice || got[0].Resolved != 1 || got[0].RequestID != ap.RequestID {
					t.Fatalf("server recorded %+v", got)
				}
				h.rec.waitKind(t, run, apiserver.RunCompleted, 1)
				evs, _ := h.rec.snapshot()
				evs = streamOrder(runEvents(evs, run))
				if !reflect.DeepEqual(kinds(evs), approvedRunKinds) {
					t.Fatalf("kinds\n got %v\nwant %v", kinds(evs), approvedRunKinds)
				}
				if r := evs[7].Data.(*apiserver.ApprovalRespondedPayload); r.Choice != choice || r.Synthesized {
					t.Errorf("responded %+v", r)
				}
				out := evs[len(evs)-1].Data.(*apiserver.RunOutcomePayload)
				prefix := "approved: git reset --hard HEAD"
				if choice == "deny" {
					prefix = "blocked: git reset --hard HEAD"
				}
				if !strings.HasPrefix(out.Output, prefix) || out.Synthesized {
					t.Errorf("outcome %+v", out)
				}
				if tc := evs[8].Data.(*wire.ToolCompletePayload); tc.Name != "terminal" {
					t.Errorf("tool complete %+v", tc)
				}
				ri := h.rec.waitRun(t, run, "done", func(ri apiserver.RunInfo) bool { return ri.Mode == apiserver.ModeDone })
				if ri.Interrupted || ri.Status != "completed" || ri.PendingApprovals != 0 || ri.Events != len(approvedRunKinds) {
					t.Errorf("run info %+v", ri)
				}
				if st := h.client.Status(); st.MayHaveMissedEvents {
					t.Errorf("status says events were missed: %+v", st)
				}
			})
		}
	}
}

// TestApprovalNotPending: answering when nothing waits is a distinct error
// and approves nothing, whether the run is alive or over.
func TestApprovalNotPending(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			// The server's own clock never moves: "slow" holds at tick 1.
			h := start(t, d, setup{server: func(o *apiservertest.Options) {
				o.Clock = clock.NewFake(epoch)
				o.StepDelay = time.Second
			}})
			run := h.startRun("slow 3")
			h.rec.waitKind(t, run, wire.MessageDelta, 1)

			err := h.client.RespondApproval(ctxT(t), run, "once", "")
			var np *apiserver.ApprovalNotPendingError
			if !errors.As(err, &np) || !errors.Is(err, apiserver.ErrApprovalNotPending) || np.Code != "approval_not_pending" || np.RunID != run {
				t.Fatalf("alive run: err = %v (%T)", err, err)
			}
			if !strings.Contains(err.Error(), "nothing was approved") {
				t.Errorf("message %q", err)
			}

			if _, err := h.client.StopRun(ctxT(t), run); err != nil {
				t.Fatal(err)
			}
			h.rec.waitKind(t, run, apiserver.RunCancelled, 1)
			err = h.client.RespondApproval(ctxT(t), run, "deny", "")
			if !errors.As(err, &np) || np.Code != "approval_not_active" {
				t.Fatalf("finished run: err = %v", err)
			}
			if err := h.client.RespondApproval(ctxT(t), run, "approve", ""); err == nil {
				t.Fatal("an alias choice was sent")
			} else if ce := (*source.ChoiceError)(nil); !errors.As(err, &ce) {
				t.Fatalf("alias choice: %v", err)
			}
			for _, a := range h.srv.Approvals() {
				if a.Resolved != 0 {
					t.Errorf("something was approved: %+v", a)
				}
			}
			if n := len(h.srv.Approvals()); n != 2 {
				t.Errorf("server saw %d answers, want 2 (invalid choices never leave Herald)", n)
			}
		})
	}
}

// TestStop: stopping a run that waits for approval cancels it.
func TestStop(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			h := start(t, d, setup{})
			run := h.startRun("approve-me: rm -rf ./build")
			h.rec.waitKind(t, run, wire.ApprovalRequest, 1)
			st, err := h.client.StopRun(ctxT(t), run)
			if err != nil || st.Status != "stopping" {
				t.Fatalf("stop: %+v %v", st, err)
			}
			h.rec.waitKind(t, run, apiserver.RunCancelled, 1)
			evs, _ := h.rec.snapshot()
			evs = runEvents(evs, run)
			if !strings.HasSuffix(texts(evs), "blocked: rm -rf ./build") {
				t.Errorf("text %q", texts(evs))
			}
			if len(h.srv.Approvals()) != 0 {
				t.Errorf("stop sent an approval: %+v", h.srv.Approvals())
			}
			h.rec.waitRun(t, run, "done", func(ri apiserver.RunInfo) bool { return ri.Mode == apiserver.ModeDone && ri.Status == "cancelled" })
			st, err = h.client.GetRun(ctxT(t), run)
			if err != nil || st.Status != "cancelled" || !st.Terminal() {
				t.Fatalf("status %+v %v", st, err)
			}
			// Stopping again: 0.18.2 has forgotten the run's agent (404),
			// newer servers answer the final status.
			st, err = h.client.StopRun(ctxT(t), run)
			if d == apiservertest.SingleConsumer {
				if !errors.Is(err, apiserver.ErrNotFound) {
					t.Fatalf("second stop: %v", err)
				}
			} else if err != nil || st.Status != "cancelled" {
				t.Fatalf("second stop: %+v %v", st, err)
			}
		})
	}
}

// TestResumeWithLastEventID: a dropped stream resumes from its last id,
// with no event lost or repeated and no interruption reported.
func TestResumeWithLastEventID(t *testing.T) {
	t.Parallel()
	for _, cut := range []int{1, 3, 6, 7} {
		t.Run(fmt.Sprintf("cut after %d", cut), func(t *testing.T) {
			t.Parallel()
			h := start(t, apiservertest.LastEventID, setup{})
			h.srv.SetFaults(apiservertest.Faults{DropStreamAfter: cut})
			run := h.startRun("approve-me: git reset --hard HEAD")
			ap := h.rec.waitKind(t, run, wire.ApprovalRequest, 1)[0]
			if err := h.client.RespondApproval(ctxT(t), run, "once", ap.RequestID); err != nil {
				t.Fatal(err)
			}
			h.rec.waitKind(t, run, apiserver.RunCompleted, 1)
			evs, sts := h.rec.snapshot()
			evs = streamOrder(runEvents(evs, run))
			if !reflect.DeepEqual(kinds(evs), approvedRunKinds) {
				t.Fatalf("kinds\n got %v\nwant %v", kinds(evs), approvedRunKinds)
			}
			for i, e := range evs {
				if e.Seq != uint64(i+1) {
					t.Fatalf("event %d has seq %d: lost or repeated events", i, e.Seq)
				}
			}
			if got := texts(evs); got != "I will run a command.approved: git reset --hard HEAD" {
				t.Errorf("text %q", got)
			}
			resumed := false
			for _, r := range h.srv.Requests() {
				if r.Header.Get("Last-Event-ID") == strconv.Itoa(cut) && strings.HasSuffix(r.Path, "/events") {
					resumed = true
				}
			}
			if !resumed {
				t.Errorf("no resubscribe with Last-Event-ID: %d", cut)
			}
			for _, s := range sts {
				if s.MayHaveMissedEvents {
					t.Fatalf("a resumable drop was reported as missed events: %+v", s)
				}
			}
		})
	}
}

// TestSingleConsumerFallsBackToPolling: 0.18.2 forgets a run's stream when
// its reader drops, so Herald polls the status, says live events were
// interrupted, still lets the user answer, and reports the outcome.
func TestSingleConsumerFallsBackToPolling(t *testing.T) {
	t.Parallel()
	h := start(t, apiservertest.SingleConsumer, setup{manual: true})
	h.srv.SetFaults(apiservertest.Faults{DropStreamAfter: 3})
	run := h.startRun("approve-me: git reset --hard HEAD")

	// A stream without event ids cannot be resumed: the client polls at
	// once, without subscribing again.
	ri := h.rec.waitRun(t, run, "polling", func(ri apiserver.RunInfo) bool { return ri.Mode == apiserver.ModePolling && ri.Interrupted })
	if !strings.Contains(ri.Reason, "one event stream per run") {
		t.Errorf("reason %q", ri.Reason)
	}
	if s := h.client.Status(); !s.MayHaveMissedEvents || s.MissedReason == "" {
		t.Errorf("status does not say events were missed: %+v", s)
	}
	h.rec.waitKind(t, run, wire.Resync, 1)
	ap := h.rec.waitKind(t, run, wire.ApprovalRequest, 1)[0]
	a, _ := ap.Approval()
	if a.Command != "" || !reflect.DeepEqual(a.Choices, []string{"deny"}) || !strings.Contains(string(ap.Payload), "details_missing") {
		t.Errorf("synthesized approval %+v %s", a, ap.Payload)
	}
	if err := h.client.RespondApproval(ctxT(t), run, "deny", ""); err != nil {
		t.Fatal(err)
	}
	if got := h.srv.Approvals(); len(got) != 1 || got[0].Choice != "deny" || got[0].Resolved != 1 {
		t.Fatalf("server recorded %+v", got)
	}
	resp := h.rec.waitKind(t, run, apiserver.ApprovalResponded, 1)[0]
	if p := resp.Data.(*apiserver.ApprovalRespondedPayload); !p.Synthesized || p.Choice != "deny" {
		t.Errorf("confirmation %+v", p)
	}
	waitServer(t, h.srv, "the run to end", func() bool { ri, _ := h.srv.Run(run); return ri.Status == "completed" })
	done := h.pollUntil(run, apiserver.RunCompleted)
	out := done.Data.(*apiserver.RunOutcomePayload)
	if !out.Synthesized || !strings.HasPrefix(out.Output, "blocked: git reset --hard HEAD") || out.Usage == nil {
		t.Errorf("outcome %+v", out)
	}
	evs, _ := h.rec.snapshot()
	evs = runEvents(evs, run)
	if got := kinds(evs[:3]); !reflect.DeepEqual(got, repeat(wire.MessageDelta, 3)) {
		t.Errorf("live part %v", got)
	}
	statuses := 0
	for _, e := range evs {
		if e.Kind == apiserver.RunStatusChanged {
			statuses++
			if _, ok := e.Data.(*apiserver.RunStatus); !ok {
				t.Errorf("status event data %T", e.Data)
			}
		}
	}
	if statuses < 2 {
		t.Errorf("%d status events", statuses)
	}
	h.rec.waitRun(t, run, "done", func(ri apiserver.RunInfo) bool { return ri.Mode == apiserver.ModeDone && ri.Interrupted })
	// No second subscribe: on 0.18.2 it would be refused (404) or split
	// the run's event queue with the dead reader.
	subs := 0
	for _, r := range h.srv.Requests() {
		if strings.HasSuffix(r.Path, "/events") {
			subs++
		}
	}
	if subs != 1 {
		t.Errorf("%d subscribes, want 1", subs)
	}
}

// TestIdempotentStartRetry: the server creates the run but the answer is
// lost. Where the server honours Idempotency-Key (it says so), the retry
// carries the same key and gets the same run; where it does not, the
// start is not retried and Herald says the run may have started.
func TestIdempotentStartRetry(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			h := start(t, d, setup{})
			h.srv.SetFaults(apiservertest.Faults{DropStartResponse: 2})
			r, err := h.client.StartRun(ctxT(t), apiserver.RunRequest{Input: "hello there"})
			if d == apiservertest.SingleConsumer {
				// 0.18.2/0.19.0 ignore the key on /v1/runs: a retry would
				// be a second run. Sent once; that it may have started is
				// said, never retried blind.
				if err == nil || !strings.Contains(err.Error(), "may have started") {
					t.Fatalf("a start whose answer was lost, on a server ignoring keys: %v", err)
				}
				if ids := h.srv.RunIDs(); len(ids) != 1 {
					t.Fatalf("server runs %v, want exactly one", ids)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ids := h.srv.RunIDs()
			if len(ids) != 1 || ids[0] != r.ID {
				t.Fatalf("server runs %v, client got %s", ids, r.ID)
			}
			keys := h.srv.IdempotencyKeys()
			if len(keys) < 3 || keys[0] == "" || r.IdempotencyKey != keys[0] {
				t.Fatalf("keys %v, client %q", keys, r.IdempotencyKey)
			}
			for _, k := range keys {
				if k != keys[0] {
					t.Fatalf("a retry changed the key: %v", keys)
				}
			}
			if r.Replayed != (d == apiservertest.LastEventID) {
				t.Errorf("replayed = %v in %s", r.Replayed, d)
			}
			h.rec.waitKind(t, r.ID, apiserver.RunCompleted, 1)
			evs, _ := h.rec.snapshot()
			if got := texts(runEvents(evs, r.ID)); got != "stub answer: hello there" {
				t.Errorf("text %q", got)
			}
			// A new logical start gets a new key.
			r2, err := h.client.StartRun(ctxT(t), apiserver.RunRequest{Input: "hello again"})
			if err != nil || r2.IdempotencyKey == r.IdempotencyKey || r2.ID == r.ID {
				t.Fatalf("second start %+v %v", r2, err)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	t.Run("401 wrong key", func(t *testing.T) {
		t.Parallel()
		const wrong = "wrong-key-that-is-long-enough"
		h := start(t, apiservertest.SingleConsumer, setup{noRun: true, client: func(c *apiserver.Config) { c.Key = wrong }})
		h.run()
		st := h.rec.waitState(t, source.StateAuthFailed)
		if !strings.Contains(st.Err, "API_SERVER_KEY") || strings.Contains(st.Err, wrong) {
			t.Errorf("status error %q", st.Err)
		}
		_, err := h.client.StartRun(ctxT(t), apiserver.RunRequest{Input: "hello"})
		var ae *apiserver.APIError
		if !errors.Is(err, apiserver.ErrUnauthorized) || !errors.As(err, &ae) || ae.Code != "invalid_api_key" || ae.Message != "Invalid API key" {
			t.Fatalf("start: %v", err)
		}
		if strings.Contains(err.Error(), wrong) {
			t.Errorf("the key leaked into %q", err)
		}
		if len(h.srv.RunIDs()) != 0 {
			t.Error("a run started with a wrong key")
		}
		h.client.SetKey(h.srv.Key())
		h.rec.waitState(t, source.StateConnected)
		if _, err := h.client.StartRun(ctxT(t), apiserver.RunRequest{Input: "hello"}); err != nil {
			t.Fatalf("after SetKey: %v", err)
		}
	})
	t.Run("429 honours Retry-After", func(t *testing.T) {
		t.Parallel()
		h := start(t, apiservertest.LastEventID, setup{})
		h.srv.SetFaults(apiservertest.Faults{Path: "POST /v1/runs", RateLimited: 2, RetryAfter: 3 * time.Second})
		before := h.clk.Now()
		r, err := h.client.StartRun(ctxT(t), apiserver.RunRequest{Input: "hello", NoFollow: true})
		if err != nil {
			t.Fatal(err)
		}
		if waited := h.clk.Now().Sub(before); waited != 6*time.Second {
			t.Errorf("waited %s on the clock, want 2 x Retry-After = 6s", waited)
		}
		if len(h.srv.RunIDs()) != 1 || h.srv.RunIDs()[0] != r.ID {
			t.Errorf("runs %v", h.srv.RunIDs())
		}
		keys := h.srv.IdempotencyKeys()
		if len(keys) != 3 || keys[0] != keys[2] {
			t.Errorf("keys %v", keys)
		}
	})
	t.Run("429 longer than Herald waits", func(t *testing.T) {
		t.Parallel()
		h := start(t, apiservertest.LastEventID, setup{})
		h.srv.SetFaults(apiservertest.Faults{Path: "POST /v1/runs", RateLimited: 1, RetryAfter: time.Hour})
		_, err := h.client.StartRun(ctxT(t), apiserver.RunRequest{Input: "hello"})
		var ae *apiserver.APIError
		if !errors.Is(err, apiserver.ErrRateLimited) || !errors.As(err, &ae) || ae.RetryAfter != time.Hour || ae.Code != "rate_limit_exceeded" {
			t.Fatalf("err %v", err)
		}
		if !strings.Contains(err.Error(), "concurrent runs") {
			t.Errorf("message %q", err)
		}
	})
	t.Run("503 retried then given up", func(t *testing.T) {
		t.Parallel()
		h := start(t, apiservertest.SingleConsumer, setup{})
		h.srv.SetFaults(apiservertest.Faults{Path: "GET /v1/runs/", Unavailable: 2, RetryAfter: -1})
		run := h.startRun("hello there")
		h.rec.waitKind(t, run, apiserver.RunCompleted, 1)
		if _, err := h.client.GetRun(ctxT(t), run); err != nil {
			t.Fatal(err)
		}
		h.srv.SetFaults(apiservertest.Faults{Path: "GET /v1/runs/", Unavailable: 100})
		_, err := h.client.GetRun(ctxT(t), run)
		if !errors.Is(err, apiserver.ErrUnavailable) || !strings.Contains(err.Error(), "Herald retries") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("approval never retried after it may have been acted on", func(t *testing.T) {
		t.Parallel()
		h := start(t, apiservertest.SingleConsumer, setup{})
		run := h.startRun("approve-me: rm -rf ./build")
		h.rec.waitKind(t, run, wire.ApprovalRequest, 1)
		h.srv.SetFaults(apiservertest.Faults{Path: "POST /v1/runs/" + run + "/approval", Unavailable: 1})
		if err := h.client.RespondApproval(ctxT(t), run, "once", ""); err != nil {
			t.Fatalf("a 503 (not acted on) must be retried: %v", err)
		}
		if a := h.srv.Approvals(); len(a) != 1 || a[0].Resolved != 1 {
			t.Fatalf("approvals %+v", a)
		}
		h.rec.waitKind(t, run, apiserver.RunCompleted, 1)
	})
	t.Run("bad input is refused locally", func(t *testing.T) {
		t.Parallel()
		h := start(t, apiservertest.SingleConsumer, setup{})
		_, err := h.client.StartRun(ctxT(t), apiserver.RunRequest{Input: "  "})
		var ce *apiserver.ConfigError
		if !errors.As(err, &ce) || len(h.srv.IdempotencyKeys()) != 0 {
			t.Fatalf("err %v", err)
		}
	})
}

// TestNoOriginHeader: even a configured Origin header is never sent (the
// server refuses any Origin with 403).
func TestNoOriginHeader(t *testing.T) {
	t.Parallel()
	h := start(t, apiservertest.SingleConsumer, setup{client: func(c *apiserver.Config) {
		c.Header = http.Header{"Origin": {"http://localhost:5173"}, "X-Herald": {"1"}, "Authorization": {"Bearer not-this"}}
	}})
	run := h.startRun("approve-me: rm -rf ./build")
	h.rec.waitKind(t, run, wire.ApprovalRequest, 1)
	if err := h.client.RespondApproval(ctxT(t), run, "deny", ""); err != nil {
		t.Fatal(err)
	}
	h.rec.waitKind(t, run, apiserver.RunCompleted, 1)
	for _, r := range h.srv.Requests() {
		if r.Header.Get("X-Herald") != "1" {
			t.Errorf("%s %s lost the configured header", r.Method, r.Path)
		}
	}
	// The harness cleanup checks Origin and Authorization on every request.
}

// TestUnknownKindsPassThrough: events Herald has no name for are delivered
// with their own kind and payload.
func TestUnknownKindsPassThrough(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			h := start(t, d, setup{server: func(o *apiservertest.Options) {
				o.Clock = clock.NewFake(epoch)
				o.StepDelay = time.Second
			}})
			run := h.startRun("slow 2")
			h.rec.waitKind(t, run, wire.MessageDelta, 1)
			if err := h.srv.Emit(run, "subagent.start", map[string]any{"goal": "look around", "subagent_id": "sa_1"}); err != nil {
				t.Fatal(err)
			}
			ev := h.rec.waitKind(t, run, "subagent.start", 1)[0]
			if ev.Data != nil || !strings.Contains(string(ev.Payload), `"goal":"look around"`) {
				t.Errorf("event %+v %s", ev, ev.Payload)
			}
			if _, err := h.client.StopRun(ctxT(t), run); err != nil {
				t.Fatal(err)
			}
			h.rec.waitKind(t, run, apiserver.RunCancelled, 1)
		})
	}
}

// TestFollowLate: 0.18.2 queues a run's events for its first reader, even
// after the run ended (capture 19); an unknown run ends as not found.
func TestFollowLate(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			problems := make(chan error, 4)
			h := start(t, d, setup{client: func(c *apiserver.Config) { c.OnProblem = func(err error) { problems <- err } }})
			r, err := h.client.StartRun(ctxT(t), apiserver.RunRequest{Input: "hello late subscriber", NoFollow: true})
			if err != nil {
				t.Fatal(err)
			}
			waitServer(t, h.srv, "the run to end", func() bool { ri, _ := h.srv.Run(r.ID); return ri.Status == "completed" })
			h.client.Follow(r.ID)
			h.rec.waitKind(t, r.ID, apiserver.RunCompleted, 1)
			evs, _ := h.rec.snapshot()
			if got := texts(runEvents(evs, r.ID)); got != "stub answer: hello late subscriber" {
				t.Errorf("text %q", got)
			}

			h.client.Follow("run_doesnotexist")
			ri := h.rec.waitRun(t, "run_doesnotexist", "done", func(ri apiserver.RunInfo) bool { return ri.Mode == apiserver.ModeDone })
			if !strings.Contains(ri.Err, "does not know run") || !strings.Contains(ri.Err, "check the id") || ri.Interrupted {
				t.Errorf("run info %+v", ri)
			}
			// The surfaces hear of it, once, in words that say what to do.
			select {
			case err := <-problems:
				if !strings.Contains(err.Error(), "run_doesnotexist: check the id") {
					t.Errorf("problem %q", err)
				}
			default:
				t.Error("following an unknown run reported no problem")
			}
			// A run never seen was not interrupted: nothing was missed.
			if st := h.client.Status(); st.MayHaveMissedEvents {
				t.Errorf("an unknown run says events may have been missed: %+v", st)
			}
			h.client.Forget("run_doesnotexist")
			if st := h.client.Status(); len(st.Runs) != 1 || st.MayHaveMissedEvents {
				t.Errorf("after Forget: %+v", st)
			}
		})
	}
}

// TestIdleStreamReconnects: a stream silent past IdleTimeout (no
// keepalive) is declared dead on the clock and resumed.
func TestIdleStreamReconnects(t *testing.T) {
	t.Parallel()
	h := start(t, apiservertest.LastEventID, setup{server: func(o *apiservertest.Options) {
		o.Clock = clock.NewFake(epoch) // never advanced: no keepalives, "slow" holds
		o.StepDelay = time.Second
	}})
	run := h.startRun("slow 2")
	h.rec.waitKind(t, run, wire.MessageDelta, 1)
	h.clk.BlockUntil(1) // the idle watchdog is armed
	h.clk.Advance(apiserver.DefaultIdleTimeout)
	waitServer(t, h.srv, "a resubscribe from id 1", func() bool {
		for _, r := range h.srv.Requests() {
			if strings.HasSuffix(r.Path, "/events") && r.Header.Get("Last-Event-ID") == "1" {
				return true
			}
		}
		return false
	})
	if _, err := h.client.StopRun(ctxT(t), run); err != nil {
		t.Fatal(err)
	}
	h.rec.waitKind(t, run, apiserver.RunCancelled, 1)
	evs, _ := h.rec.snapshot()
	if got := texts(runEvents(evs, run)); got != "tick 1/2 [interrupted at step 1]" {
		t.Errorf("text %q", got)
	}
}

// TestAPIErrorEnvelope: the error envelope, plain-string errors and bare
// bodies all become an *APIError that says what to do.
func TestAPIErrorEnvelope(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status     int
		body       string
		header     http.Header
		sentinel   error
		code, msg  string
		retryAfter time.Duration
		advice     string
	}{
		{401, `{"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": "invalid_api_key"}}`, nil, apiserver.ErrUnauthorized, "invalid_api_key", "Invalid API key", 0, "API_SERVER_KEY"},
		{403, ``, nil, apiserver.ErrForbidden, "", "", 0, "Origin"},
		{404, `{"error": {"message": "Run not found: run_x", "type": "invalid_request_error", "param": null, "code": "run_not_found"}}`, nil, apiserver.ErrNotFound, "run_not_found", "Run not found: run_x", 0, "expired"},
		{413, `Request Entity Too Large`, nil, apiserver.ErrTooLarge, "", "Request Entity Too Large", 0, "shorten"},
		{429, `{"error": {"message": "Too many concurrent runs (max 10)", "type": "rate_limit_error", "code": "rate_limit_exceeded"}}`, http.Header{"Retry-After": {"7"}}, apiserver.ErrRateLimited, "rate_limit_exceeded", "Too many concurrent runs (max 10)", 7 * time.Second, "retries in 7s"},
		{503, `{"error": "Service draining"}`, http.Header{"Retry-After": {epoch.Add(90 * time.Second).Format(http.TimeFormat)}}, apiserver.ErrUnavailable, "", "Service draining", 90 * time.Second, "hermes gateway status"},
		{400, `{"detail": "Missing 'input' field"}`, nil, nil, "", "Missing 'input' field", 0, ""},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header()[k] = v
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			c, err := apiserver.New(apiserver.Config{URL: srv.URL, Key: "secret-key-0123456789", Clock: clock.NewFake(epoch), MaxRetries: 1, MaxRetryAfter: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetRun(ctxT(t), "run_x")
			var ae *apiserver.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err %v (%T)", err, err)
			}
			if ae.Status != tt.status || ae.Code != tt.code || ae.Message != tt.msg || ae.RetryAfter != tt.retryAfter {
				t.Errorf("got %+v", ae)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("not %v", tt.sentinel)
			}
			if !strings.Contains(err.Error(), tt.advice) || !strings.Contains(err.Error(), "/v1/runs/run_x") || strings.Contains(err.Error(), "secret-key") {
				t.Errorf("message %q", err)
			}
		})
	}
}

// TestNotAnAPIServer: pointing Herald at something else is a configuration
// error that says where the API server is, and is not retried.
func TestNotAnAPIServer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	rec := newRecorder()
	c, err := apiserver.New(apiserver.Config{URL: strings.TrimPrefix(srv.URL, "http://") + "/v1/", Clock: clock.NewFake(epoch), OnStatus: rec.onStatus})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	st := rec.waitState(t, source.StateConfigError)
	if !strings.Contains(st.Err, "8642") {
		t.Errorf("error %q", st.Err)
	}
	cancel()
	<-done
	for _, bad := range []string{"ftp://host", "http://user:pw@host:8642", "http://[::1"} {
		if _, err := apiserver.New(apiserver.Config{URL: bad}); err == nil {
			t.Errorf("%q accepted", bad)
		} else if strings.Contains(err.Error(), "pw@") {
			t.Errorf("credentials echoed: %v", err)
		}
	}
}

// TestNoEventStreams: a server that says run_events_sse is off is polled
// from the start, and the approval still reaches the user.
func TestNoEventStreams(t *testing.T) {
	t.Parallel()
	h := start(t, apiservertest.LastEventID, setup{server: func(o *apiservertest.Options) { o.NoEventStreams = true }})
	run := h.startRun("approve-me: rm -rf ./build")
	// The status of newer servers carries the pending approval itself.
	ap := h.pollUntil(run, wire.ApprovalRequest)
	if a, _ := ap.Approval(); a.Command != "rm -rf ./build" || ap.RequestID == "" {
		t.Fatalf("approval from status %+v", a)
	}
	if err := h.client.RespondApproval(ctxT(t), run, "once", ap.RequestID); err != nil {
		t.Fatal(err)
	}
	out := h.pollUntil(run, apiserver.RunCompleted).Data.(*apiserver.RunOutcomePayload)
	if !strings.HasPrefix(out.Output, "approved: rm -rf ./build") {
		t.Errorf("outcome %+v", out)
	}
	for _, r := range h.srv.Requests() {
		if strings.HasSuffix(r.Path, "/events") {
			t.Errorf("subscribed although streams are off")
		}
	}
	if ri := h.rec.waitRun(t, run, "done", func(ri apiserver.RunInfo) bool { return ri.Mode == apiserver.ModeDone }); !ri.Interrupted {
		t.Errorf("run info %+v", ri)
	}
}
