package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// unreadableWhy says, for people, why a frame could not be read.
func unreadableWhy(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "it could not be read"
	case strings.Contains(err.Error(), "exceeded max depth"):
		return "its data is nested deeper than the 10,000 levels Herald reads"
	case errors.As(err, &te) && te.Field == "seq":
		return "its sequence number (seq) is out of range"
	}
	return "it is not JSON-RPC Herald can read (" + err.Error() + ")"
}

// unreadable reports a frame Herald could not decode instead of dropping
// it silently. An approval in it is delivered deny-only: its command is
// left out (Herald does not vouch for a frame it could not read) and its
// description says why, so the user can deny it here or answer it in
// Hermes. Another server request is answered with an error so the gateway
// does not wait for it; any other frame of a known session marks that
// session as possibly missing events (herald.resync).
func (c *Client) unreadable(cn *conn, s wire.Salvaged, why string, now time.Time) {
	c.log.Warn("gateway sent a frame Herald cannot read", "why", why, "kind", s.Kind(), "session", s.Session)
	c.setStatus(func(st *source.Status) { st.InvalidFrames++ })
	if s.IsApproval() {
		p, _ := json.Marshal(wire.ApprovalPayload{
			SessionID: s.Session, RequestID: s.RequestID,
			Description: "Herald could not read this approval from the gateway: " + why + ". It cannot show what would run, so it accepts only deny here; to approve it, answer it in Hermes itself",
		})
		ev := wire.Event{Gateway: c.name, Session: s.Session, Kind: wire.ApprovalRequest, Payload: p, ReceivedAt: now}
		if s.Method != "event" {
			ev.Kind, ev.RequestID = wire.ApprovalServerRequest, wire.IDString(s.ID)
		}
		ev.DecodeData()
		if ev.Kind == wire.ApprovalServerRequest {
			c.emitServerRequest(c.withStored(ev), s.ID)
		} else {
			c.dispatch(ev)
		}
		return
	}
	if s.Method != "event" && len(s.ID) > 0 && cn != nil {
		b, _ := wire.EncodeError(s.ID, wire.CodeInvalidRequest, "Herald could not read this request: "+why)
		_ = cn.enqueue(context.Background(), b, false, nil)
	}
	if s.Session != "" {
		ev := wire.Event{Gateway: c.name, Session: s.Session, Kind: wire.Resync, ReceivedAt: now}
		ev.Payload, _ = json.Marshal(wire.ResyncPayload{Reason: "unreadable-frame"})
		ev.DecodeData()
		c.dispatch(ev)
	}
}
