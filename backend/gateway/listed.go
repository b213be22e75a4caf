package gateway

import (
	"context"
	"encoding/json"

	"github.com/herald-desktop/herald/backend/wire"
)

// ApprovalsListed is the kind of event that reports, after a (re)attach to
// a gateway that answers approval.pending, which approvals of a session
// still wait, each by its own id. The inbox reconciles with it: an answer
// of unknown outcome whose request is listed again is pending again, one
// no longer listed stays unknown; a request restored after a restart
// regains its choices only when listed by its id. It never creates a
// request. Payload: {session_id, complete, approvals: [{id, request_id,
// command, choices}]}.
const ApprovalsListed = "herald.approvals.listed"

// Bounds on what a listing keeps of the gateway's answer (the frame
// itself is bounded by the reader): entries, and the bytes of an id or a
// command (longer ones are passed on empty, so they match nothing).
const (
	maxListed        = 512
	maxListedID      = 1 << 10
	maxListedCommand = 1 << 20
	maxListedChoices = 8
)

type listedEntry struct {
	ID        string   `json:"id,omitempty"`
	RequestID string   `json:"request_id,omitempty"`
	Command   string   `json:"command"`
	Choices   []string `json:"choices,omitempty"`
}

// listApprovals asks the gateway, where it answers approval.pending on
// this connection, which approvals of session live still wait
// (approval.pending {session_id} → {approvals: […]}, the approval queue's
// entries: request_id, command, choices, and on some builds the server
// request's id). ok is false when the gateway cannot or did not say.
func (c *Client) listApprovals(ctx context.Context, call func(ctx context.Context, method string, params any) (json.RawMessage, error), live, stored string) (wire.Event, bool) {
	c.mu.Lock()
	can := c.cf.approvalPending == yes
	c.mu.Unlock()
	if !can || live == "" {
		return wire.Event{}, false
	}
	raw, err := call(ctx, "approval.pending", map[string]any{"session_id": live})
	if err != nil {
		c.log.Info("listing a session's waiting approvals failed", "session", live, "err", err)
		return wire.Event{}, false
	}
	var r struct {
		Approvals *[]struct {
			ID        json.RawMessage `json:"id"`
			RequestID json.RawMessage `json:"request_id"`
			Command   string          `json:"command"`
			Choices   []string        `json:"choices"`
		} `json:"approvals"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Approvals == nil {
		return wire.Event{}, false
	}
	all := *r.Approvals
	complete := len(all) <= maxListed
	if !complete {
		all = all[:maxListed]
	}
	out := make([]listedEntry, 0, len(all))
	for _, a := range all {
		e := listedEntry{ID: boundedID(a.ID), RequestID: boundedID(a.RequestID), Command: a.Command}
		if len(e.Command) > maxListedCommand {
			e.Command = ""
		}
		if len(a.Choices) <= maxListedChoices {
			e.Choices = a.Choices
		}
		out = append(out, e)
	}
	p, _ := json.Marshal(map[string]any{"session_id": live, "complete": complete, "approvals": out})
	c.mu.Lock()
	epoch := c.epoch
	c.mu.Unlock()
	return wire.Event{Gateway: c.name, Session: live, StoredSession: stored, Kind: ApprovalsListed, Payload: p, ReceivedAt: c.clk.Now(), Epoch: epoch}, true
}

// boundedID is a listed id as a string, empty when absent or too long.
func boundedID(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" || len(raw) > maxListedID+2 {
		return ""
	}
	return wire.IDString(raw)
}

// callRaw is Call on the live connection, returning the raw result.
func (c *Client) callRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.Call(ctx, method, params, &raw)
	return raw, err
}
