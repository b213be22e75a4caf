package apiserver

import (
	"sort"
	"time"

	"github.com/herald-desktop/herald/backend/source"
)

// Kind is the transport's name in settings, flags and Status.Kind.
const Kind source.Kind = "api"

// Run follow modes.
const (
	// ModeStarting: the run is followed but no stream was opened yet.
	ModeStarting = "starting"
	// ModeStream: the live SSE stream of the run is open.
	ModeStream = "stream"
	// ModeResuming: the stream dropped; Herald is reconnecting.
	ModeResuming = "resuming"
	// ModePolling: no stream can be had (0.18.2 serves one consumer per
	// run); Herald polls GET /v1/runs/{id} on the clock.
	ModePolling = "polling"
	// ModeSessionStream (sessionturn.go): a turn sent to a stored session,
	// followed on its chat stream.
	// ModeDone: the run reached a terminal state (or vanished).
	ModeDone = "done"
)

// Status is a snapshot of one API server's client, for people and UIs:
// the contract's status (Gateway is the client's Config.Name, Version
// what /health reported; MayHaveMissedEvents is set while a listed run
// lost its live stream without a way to resume it, so its events since
// are known only through polled status), what the server supports, and
// the followed runs. Its State is connecting while /health and
// /v1/capabilities are probed, connected while the last request
// succeeded, reconnecting through a backoff or Retry-After delay and
// auth_failed when the key is refused (until SetKey or ReconnectNow); an
// API server never syncs.
type Status struct {
	source.Status
	// Features is what /v1/capabilities advertised.
	Features FeatureStatus `json:"features"`
	// Runs lists the followed runs, sorted by id.
	Runs []RunInfo `json:"runs,omitempty"`
	// SessionTurns is what the server can do with a turn sent to a
	// session (approvals, stop), as learned on this connection.
	SessionTurns TurnControl `json:"session_turns,omitempty"`
}

// Source presents the status in the contract's terms, so every surface
// shows API servers and gateways side by side.
func (st Status) Source() source.Status {
	s := st.Status
	s.Kind, s.Sessions = string(Kind), len(st.Runs)
	return s
}

// FeatureStatus is what /v1/capabilities said (all false when unknown).
type FeatureStatus struct {
	RunSubmission  bool `json:"run_submission"`        // POST /v1/runs
	RunEvents      bool `json:"run_events_sse"`        // GET /v1/runs/{id}/events
	RunApproval    bool `json:"run_approval_response"` // POST /v1/runs/{id}/approval
	RunStop        bool `json:"run_stop"`              // POST /v1/runs/{id}/stop
	ApprovalEvents bool `json:"approval_events"`       // approval.request on the stream
	Idempotency    bool `json:"idempotency"`           // Idempotency-Key honoured on starts
}

// RunInfo is what the client knows about one followed run.
type RunInfo struct {
	// ID is the run id.
	ID string `json:"id"`
	// Session is the stored session a turn was sent to (ModeSessionStream).
	Session string `json:"session,omitempty"`
	// Status is the run's last known Hermes status (started, running,
	// waiting_for_approval, stopping, completed, failed, cancelled).
	Status string `json:"status,omitempty"`
	// Mode is how the run is followed: ModeStarting, ModeStream,
	// ModeResuming, ModePolling or ModeDone.
	Mode string `json:"mode"`
	// Interrupted is set when live events of this run were lost (stream
	// dropped with no resume); Reason says why, for people.
	Interrupted bool `json:"interrupted,omitempty"`
	// Reason says why live events were lost.
	Reason string `json:"reason,omitempty"`
	// LastEventID is the id to resume from, when the server sends ids.
	LastEventID string `json:"last_event_id,omitempty"`
	// Events counts events delivered for this run.
	Events int `json:"events"`
	// PendingApprovals counts approval requests delivered and not yet
	// confirmed answered.
	PendingApprovals int `json:"pending_approvals,omitempty"`
	// NextPoll is when the next status poll is due (polling mode).
	NextPoll time.Time `json:"next_poll,omitzero"`
	// NextCheck is when the run's status is next asked about an answer
	// whose outcome is unknown (zero when none waits for it).
	NextCheck time.Time `json:"next_check,omitzero"`
	// Err is the last error following this run.
	Err string `json:"error,omitempty"`
}

// Status returns the current snapshot.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snapshotLocked()
}

func (c *Client) snapshotLocked() Status {
	s := c.status
	s.Runs = make([]RunInfo, 0, len(c.runs))
	s.MayHaveMissedEvents, s.MissedReason = false, ""
	for _, r := range c.runs {
		s.Runs = append(s.Runs, r.info)
		if r.info.Interrupted {
			s.MayHaveMissedEvents = true
			s.MissedReason = r.info.Reason
		}
	}
	sort.Slice(s.Runs, func(i, j int) bool { return s.Runs[i].ID < s.Runs[j].ID })
	return s
}

func (c *Client) setStatus(fn func(*Status)) {
	c.mu.Lock()
	fn(&c.status)
	s, seq := c.stampLocked()
	c.mu.Unlock()
	c.publish(s, seq)
}

// stampLocked takes a snapshot under c.mu and numbers it, so publish can
// tell an older snapshot from a newer one.
func (c *Client) stampLocked() (Status, uint64) {
	c.statusSeq++
	return c.snapshotLocked(), c.statusSeq
}

// publish reports a status to OnStatus unless a newer one was reported
// already. Snapshots are taken under c.mu but reported after it is
// released, so two goroutines (Follow and a run's stream or poll) could
// otherwise report them out of order and leave a consumer on a stale
// status: a finished run shown as starting.
func (c *Client) publish(s Status, seq uint64) {
	if c.cfg.OnStatus == nil {
		return
	}
	c.pubMu.Lock()
	defer c.pubMu.Unlock()
	if seq <= c.pubSeq {
		return
	}
	c.pubSeq = seq
	c.cfg.OnStatus(s)
}

// setRun updates one run's info and reports the new status.
func (c *Client) setRun(r *runState, fn func(*RunInfo)) {
	c.mu.Lock()
	fn(&r.info)
	s, seq := c.stampLocked()
	c.mu.Unlock()
	c.publish(s, seq)
}
