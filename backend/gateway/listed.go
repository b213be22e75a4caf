package gateway

import (
	"context"
	"encoding/json"

	"github.com/herald-desktop/herald/backend/wire"
)

// ApprovalsListed is the kind of the event listApprovals reports: which
// approvals of a session still wait after a (re)attach to a gateway that
// answers approval.pending (wire.ApprovalsListed; the inbox reconciles
// with it).
const ApprovalsListed = wire.ApprovalsListed

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
	all := make([]wire.ListedApproval, 0, min(len(*r.Approvals), wire.MaxListed+1))
	for _, a := range *r.Approvals {
		if len(all) > wire.MaxListed {
			break // NewListing cuts it and says the list is incomplete
		}
		all = append(all, wire.ListedApproval{ID: wire.ListedID(a.ID), RequestID: wire.ListedID(a.RequestID), Command: a.Command, Choices: a.Choices})
	}
	p, _ := json.Marshal(wire.NewListing(live, true, all))
	c.mu.Lock()
	epoch := c.epoch
	c.mu.Unlock()
	return wire.Event{Gateway: c.name, Session: live, StoredSession: stored, Kind: ApprovalsListed, Payload: p, ReceivedAt: c.clk.Now(), Epoch: epoch}, true
}

// callRaw is Call on the live connection, returning the raw result.
func (c *Client) callRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.Call(ctx, method, params, &raw)
	return raw, err
}
