package apiserver_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/wire"
)

// listedOf decodes an ApprovalsListed payload.
func listedOf(t *testing.T, ev wire.Event) (complete bool, ids []string) {
	t.Helper()
	var p struct {
		Complete  bool `json:"complete"`
		Approvals []struct {
			RequestID string `json:"request_id"`
		} `json:"approvals"`
	}
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Approvals {
		ids = append(ids, a.RequestID)
	}
	return p.Complete, ids
}

// TestUnknownAnswerReconciledByStatus: an answer written to the API
// server whose link dropped is reconciled by asking the run's status.
// A server that shows the pending approval in it (newer servers, the
// LastEventID fake) lists it by its request_id when the answer never
// landed; one that took the answer confirms it on the stream.
func TestUnknownAnswerReconciledByStatus(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		fault apiservertest.Faults
		taken bool
	}{
		{"lost before the server took it", apiservertest.Faults{LoseApproval: 1}, false},
		{"taken, then the link dropped", apiservertest.Faults{DropApprovalResponse: 1}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, apiservertest.LastEventID, setup{})
			run := h.startRun("approve-me: git reset --hard HEAD")
			ap := h.rec.waitKind(t, run, wire.ApprovalRequest, 1)[0]
			a, _ := ap.Approval()
			h.srv.SetFaults(tt.fault)
			err := h.client.RespondApproval(ctxT(t), run, "once", a.RequestID)
			if !errors.Is(err, wire.ErrOutcomeUnknown) {
				t.Fatalf("answer cut after the write: %v, want an unknown outcome", err)
			}
			if tt.taken {
				// The server says how: approval.responded, with the choice.
				resp := h.rec.waitKind(t, run, apiserver.ApprovalResponded, 1)[0]
				if p := resp.Data.(*apiserver.ApprovalRespondedPayload); p.Choice != "once" {
					t.Fatalf("confirmation %+v", p)
				}
				return
			}
			ri := h.rec.waitRun(t, run, "the first check", func(ri apiserver.RunInfo) bool { return ri.NextCheck.After(h.clk.Now()) })
			h.clk.Advance(ri.NextCheck.Sub(h.clk.Now()))
			ev := h.rec.waitKind(t, run, apiserver.ApprovalsListed, 1)[0]
			complete, ids := listedOf(t, ev)
			if complete || len(ids) != 1 || ids[0] != a.RequestID {
				t.Fatalf("listing complete %v ids %v, want the answered request %s (a status shows one approval: not complete)", complete, ids, a.RequestID)
			}
			if got := h.srv.Approvals(); len(got) != 0 {
				t.Fatalf("the server took %+v", got)
			}
		})
	}
}

// TestUnknownAnswerChecksBackOff: where the status cannot name the
// waiting approval (0.18.2, 0.19.0), Herald keeps asking on a bounded
// backoff (after 1, 2, 4, 8, 16, then every 30 s), never faster; once the run no
// longer waits for an approval it says so (a complete, empty listing) and
// stops.
func TestUnknownAnswerChecksBackOff(t *testing.T) {
	t.Parallel()
	// The fake clock runs minutes ahead of the server's keepalives: the
	// stream stays up (no status polls but the checks').
	h := start(t, apiservertest.SingleConsumer, setup{client: func(c *apiserver.Config) { c.IdleTimeout = 24 * time.Hour }})
	run := h.startRun("approve-me: git reset --hard HEAD")
	h.rec.waitKind(t, run, wire.ApprovalRequest, 1)
	h.srv.SetFaults(apiservertest.Faults{LoseApproval: 1})
	if err := h.client.RespondApproval(ctxT(t), run, "once", ""); !errors.Is(err, wire.ErrOutcomeUnknown) {
		t.Fatalf("answer: %v", err)
	}
	gets := func() int {
		n := 0
		for _, r := range h.srv.Requests() {
			if r.Method == http.MethodGet && r.Path == "/v1/runs/"+run {
				n++
			}
		}
		return n
	}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30}
	for i, d := range want {
		ri := h.rec.waitRun(t, run, "the next check", func(ri apiserver.RunInfo) bool { return ri.NextCheck.After(h.clk.Now()) })
		if got := ri.NextCheck.Sub(h.clk.Now()); got != d*time.Second {
			t.Fatalf("check %d waits %v, want %v", i+1, got, d*time.Second)
		}
		if n := gets(); n != i {
			t.Fatalf("%d status requests before check %d", n, i+1)
		}
		h.clk.Advance(ri.NextCheck.Sub(h.clk.Now()))
	}
	// Someone answers in Hermes: the run no longer waits (the fake's
	// run then ends at once). The next check learns it and stops.
	ri := h.rec.waitRun(t, run, "the next check", func(ri apiserver.RunInfo) bool { return ri.NextCheck.After(h.clk.Now()) })
	if err := h.client.RespondApproval(ctxT(t), run, "deny", ""); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(ri.NextCheck.Sub(h.clk.Now()))
	h.rec.waitRun(t, run, "no more checks", func(ri apiserver.RunInfo) bool { return ri.NextCheck.IsZero() })
	if n := gets(); n != len(want)+1 {
		t.Fatalf("%d status requests, want %d (one after each wait)", n, len(want)+1)
	}
	for _, ev := range h.rec.waitKind(t, run, apiserver.ApprovalsListed, 0) {
		if complete, ids := listedOf(t, ev); !complete || len(ids) != 0 {
			t.Fatalf("listing complete %v ids %v, want complete and empty", complete, ids)
		}
	}
}
