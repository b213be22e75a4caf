package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// Reconciling an answer whose outcome is unknown.
//
// When POST /v1/runs/{id}/approval was written and the link failed before
// the server answered, the answer may or may not have been taken
// (OutcomeUnknownError; the inbox shows it sent-unknown and sends nothing
// again). What settles it: approval.responded on the run's stream (the
// server names the choice), the run's end, or the run's status, which
// Herald asks for (GET /v1/runs/{id}) on a bounded backoff
// (reconcileDelays: first after 1 s, so that an answer the server is
// still working through is not read as one it never got; at most
// maxReconcileChecks checks), and after that first one also at once
// whenever a request to the server succeeds again after a failure, until
// it learns what the status can say:
//
//   - waiting_for_approval with the pending approval in it (newer servers)
//     lists that approval by its request_id: if it is the one answered,
//     the answer did not land and the request is pending again (bound by
//     that id); the list is not complete (a status shows one approval);
//   - any other live status means no approval waits: the request was
//     settled, by Herald's answer or another client's (the status does not
//     say which), so it stays unknown until the stream or the run's end
//     says more, or its deadline passes;
//   - 404 run_not_found: nothing waits any more;
//   - waiting_for_approval without the approval (0.18.2, 0.19.0) cannot
//     name which approval waits, so Herald keeps asking until the status
//     changes or the run ends.
//
// Each finding is one ApprovalsListed event; the inbox applies it. Real
// 0.18.2/0.19.0: gateway/platforms/api_server.py _handle_get_run returns
// _run_statuses[run_id] ({object, run_id, status, updated_at, created_at,
// last_event, …}); _approval_notify sets waiting_for_approval and
// _handle_run_approval sets running (last_event approval.responded) once
// the queue head is resolved.

// ApprovalsListed is the kind of the event that reports which approvals
// of a run still wait (wire.ApprovalsListed; the inbox reconciles answers
// of unknown outcome with it).
const ApprovalsListed = wire.ApprovalsListed

// reconcileDelays is the wait before each further status check while an
// answer's outcome is unknown; the last one repeats.
var reconcileDelays = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second}

// maxReconcileChecks bounds the status checks for one run's unknown
// answers (about an hour at the longest delay; approvals time out long
// before).
const maxReconcileChecks = 128

// maxUnsure bounds the unknown answers a run keeps for reconciling.
const maxUnsure = 64

// reconcileLater notes an answer of unknown outcome on a followed run and
// starts checking the run's status.
func (c *Client) reconcileLater(runID, requestID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rs := c.runs[runID]
	if rs == nil {
		return
	}
	if len(rs.unsure) < maxUnsure {
		rs.unsure = append(rs.unsure, requestID)
	}
	rs.checks = 0
	c.startReconcileLocked(rs)
}

// startReconcileLocked starts the run's reconciler if answers wait for it
// and the client runs. Caller holds c.mu.
func (c *Client) startReconcileLocked(rs *runState) {
	if rs.reconciling || len(rs.unsure) == 0 || !c.running {
		return
	}
	rs.reconciling = true
	ctx := c.runCtx
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.reconcile(ctx, rs)
	}()
}

// reconcile checks the run's status until what it can say about the
// run's unknown answers is learned, on the bounded backoff.
func (c *Client) reconcile(ctx context.Context, rs *runState) {
	defer func() {
		c.mu.Lock()
		rs.reconciling = false
		c.mu.Unlock()
		c.setRun(rs, func(i *RunInfo) { i.NextCheck = time.Time{} })
	}()
	for {
		c.mu.Lock()
		n := rs.checks
		rs.checks++
		c.mu.Unlock()
		if n >= maxReconcileChecks {
			c.log.Info("stopped checking a run's status for an answer of unknown outcome", "run", rs.id, "checks", n)
			c.mu.Lock()
			rs.unsure = nil
			c.mu.Unlock()
			return
		}
		// The first check waits its full delay: a written answer the
		// server is still working through must not read as one it never
		// got. Later ones also go at once when the server is reachable
		// again (ok) or the user asks to reconnect (wake).
		var wake, ok <-chan struct{}
		if n > 0 {
			wake, ok = c.wakeChan(), c.okChan()
		}
		d := reconcileDelays[min(n, len(reconcileDelays)-1)]
		t := c.clk.NewTimer(d)
		next := c.clk.Now().Add(d)
		c.setRun(rs, func(i *RunInfo) { i.NextCheck = next })
		select {
		case <-ctx.Done():
		case <-t.C():
		case <-wake:
		case <-ok:
		}
		t.Stop()
		if ctx.Err() != nil || !c.current(rs) {
			return
		}
		st, err := c.getRun(ctx, rs.id, retryNever)
		var ae *APIError
		switch {
		case err == nil:
			if c.reconcileStatus(rs, st) {
				return
			}
		case ctx.Err() != nil:
			return
		case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
			c.listed(rs, false, nil, true)
			return
		}
	}
}

// reconcileStatus applies one status to the run's unknown answers. It
// reports whether nothing more is to be learned from the status.
func (c *Client) reconcileStatus(rs *runState, st RunStatus) bool {
	if st.Terminal() {
		// The run's end reaches the inbox through the follower.
		c.mu.Lock()
		rs.unsure = nil
		c.mu.Unlock()
		return true
	}
	if st.Status != "waiting_for_approval" {
		c.listed(rs, false, nil, true)
		return true
	}
	if len(st.Approval) == 0 || string(st.Approval) == "null" {
		return false // it waits, but the status cannot say for what
	}
	var a struct {
		RequestID json.RawMessage `json:"request_id"`
		Command   string          `json:"command"`
		Choices   []string        `json:"choices"`
	}
	if json.Unmarshal(st.Approval, &a) != nil {
		return false
	}
	id := wire.ListedID(a.RequestID)
	if id == "" {
		return false
	}
	c.listed(rs, true, &wire.ListedApproval{RequestID: id, Command: a.Command, Choices: a.Choices}, false)
	return true
}

// listed reports what the status said (one approval waits, or, complete,
// that none does) and forgets the run's unknown answers.
func (c *Client) listed(rs *runState, waiting bool, a *wire.ListedApproval, complete bool) {
	list := []wire.ListedApproval{}
	if waiting && a != nil {
		list = append(list, *a)
	}
	c.mu.Lock()
	rs.unsure = nil
	c.mu.Unlock()
	payload := mustJSON(wire.NewListing(rs.id, complete, list))
	c.emit(wire.Event{Gateway: c.name, Session: rs.id, StoredSession: c.storedOf(rs), Kind: ApprovalsListed, Payload: payload, ReceivedAt: c.clk.Now()})
}

// okChan is closed when a request to the server succeeds after a failure.
func (c *Client) okChan() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ok
}
