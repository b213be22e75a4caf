package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gorilla/websocket"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// eventParams is the params object of a JSON-RPC "event" notification, and
// also the shape of each replayed event from session.events.since.
type eventParams struct {
	Type      string          `json:"type"`
	SessionID string          `json:"session_id"`
	Payload   json.RawMessage `json:"payload"`
	Seq       uint64          `json:"seq"`
}

// readLoop reads frames until the connection dies. The first frame goes
// to ready; every other frame is handled in order.
func (c *Client) readLoop(cn *conn, ready chan<- wire.Frame) {
	cn.ws.SetPongHandler(func(string) error {
		cn.pinging.Store(false) // the heartbeat may ping again
		c.touch(cn)
		return nil
	})
	cn.ws.SetPingHandler(func(data string) error {
		c.touch(cn)
		err := cn.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(writeTimeout))
		if err == websocket.ErrCloseSent {
			return nil
		}
		return err
	})
	gotReady := false
	for {
		_, msg, err := cn.ws.ReadMessage()
		if err != nil {
			cn.fail(closeErr(err))
			return
		}
		c.touch(cn)
		wire.SplitFrames(msg, func(b []byte) { c.handleRaw(cn, b, &gotReady, ready) })
		// Tests re-check their conditions once the frames are handled.
		if c.heard != nil {
			c.heard()
		}
	}
}

// handleRaw decodes and handles one frame; the first gateway.ready goes
// to ready.
func (c *Client) handleRaw(cn *conn, b []byte, gotReady *bool, ready chan<- wire.Frame) {
	f, err := wire.DecodeFrame(b)
	if err != nil {
		if s, ok := wire.Salvage(b); ok {
			c.unreadable(cn, s, unreadableWhy(err), c.clk.Now())
			return
		}
		c.log.Warn("gateway sent a frame Herald cannot read", "err", err, "bytes", len(b))
		c.setStatus(func(s *source.Status) { s.InvalidFrames++ })
		return
	}
	if !*gotReady {
		if f.Kind == wire.KindNotification && f.Method == "event" {
			var p eventParams
			if json.Unmarshal(f.Params, &p) == nil && p.Type == wire.GatewayReady {
				*gotReady = true
				ready <- f
				return
			}
		}
		// Frames before gateway.ready are unusual; handle them
		// normally rather than drop them.
	}
	c.handleFrame(cn, f)
}

// touch records traffic from the gateway for the liveness check.
func (c *Client) touch(cn *conn) {
	cn.lastRead.Store(c.clk.Now().UnixNano())
	cn.reads.Add(1)
	if c.heard != nil {
		c.heard()
	}
}

// handleFrame routes one decoded frame.
func (c *Client) handleFrame(cn *conn, f wire.Frame) {
	now := c.clk.Now()
	switch f.Kind {
	case wire.KindResponse:
		if !cn.resolve(f) {
			c.log.Debug("response to no pending call", "id", string(f.ID))
		}
	case wire.KindNotification:
		switch f.Method {
		case "event":
			var p eventParams
			if err := json.Unmarshal(f.Params, &p); err != nil && p.Type != "" {
				// Read but not whole (a seq out of range): named, not dropped.
				s, _ := wire.Salvage(append(append([]byte(`{"method":"event","params":`), f.Params...), '}'))
				c.unreadable(cn, s, unreadableWhy(err), now)
				return
			} else if err != nil || p.Type == "" {
				c.log.Warn("event frame without a type", "err", err)
				c.setStatus(func(s *source.Status) { s.InvalidFrames++ })
				return
			}
			ev := c.eventFrom(p, now, false)
			if ev.Kind == wire.RequestCancel {
				c.closeSRQ(ev.RequestID)
			}
			c.dispatch(ev)
		case wire.RequestCancel:
			ev := wire.Event{Gateway: c.name, Kind: wire.RequestCancel, Payload: f.Params, ReceivedAt: now}
			ev.DecodeData()
			if cp, ok := ev.Data.(*wire.CancelPayload); ok {
				ev.RequestID = cp.ID
				c.closeSRQ(cp.ID)
			}
			c.emitUnsequenced(ev)
		default:
			// Unknown notification: pass through under its method name.
			c.emitUnsequenced(wire.Event{Gateway: c.name, Kind: f.Method, Payload: f.Params, ReceivedAt: now})
		}
	case wire.KindServerRequest:
		c.handleServerRequest(cn, f, now)
	}
}

// handleServerRequest reports a server request; ones Herald cannot serve
// are answered -32601 at once so the gateway does not wait for them.
func (c *Client) handleServerRequest(cn *conn, f wire.Frame, now time.Time) {
	ev := serverRequestEvent(c.name, f.Method, f.ID, f.Params, now)
	// On a fan-out gateway an error reply settles the request for every
	// client (server_requests.py@087bb308): another client may be the
	// one meant to answer it, so Herald stays silent there.
	if !servedServerRequest(f.Method) && !c.FanOut() {
		b, _ := wire.EncodeError(f.ID, wire.CodeMethodNotFound, "Herald does not handle "+f.Method)
		_ = cn.enqueue(context.Background(), b, false, nil)
	}
	c.emitServerRequest(c.withStored(ev), f.ID)
}

// serverRequestEvent builds the event for a server request frame.
func serverRequestEvent(gateway, method string, id, params json.RawMessage, now time.Time) wire.Event {
	ev := wire.Event{Gateway: gateway, Kind: method, Payload: params, ReceivedAt: now, RequestID: wire.IDString(id)}
	if !servedServerRequest(method) {
		ev.Kind = wire.ServerRequestUnknown
		raw, _ := json.Marshal(map[string]any{"method": method, "params": params})
		ev.Payload = raw
	}
	ev.DecodeData()
	if a, ok := ev.Approval(); ok {
		ev.Session = a.SessionID
		if a.RequestID == "" {
			a.RequestID = ev.RequestID
		}
	}
	switch p := ev.Data.(type) {
	case *wire.ClarifyPayload:
		ev.Session = p.SessionID
	case *wire.SudoPayload:
		ev.Session = p.SessionID
	case *wire.SecretPayload:
		ev.Session = p.SessionID
	}
	return ev
}

// servedServerRequest reports whether Herald answers method itself (an
// approval or a clarify, sudo or secret prompt); any other server request
// is refused at once.
func servedServerRequest(method string) bool {
	return method == wire.ApprovalServerRequest || wire.IsPromptServerRequest(method)
}

// eventFrom builds a normalized event from event params.
func (c *Client) eventFrom(p eventParams, now time.Time, replayed bool) wire.Event {
	ev := wire.Event{
		Gateway:    c.name,
		Session:    p.SessionID,
		Kind:       p.Type,
		Seq:        p.Seq,
		Payload:    p.Payload,
		ReceivedAt: now,
		Replayed:   replayed,
	}
	if err := ev.DecodeData(); err != nil {
		c.log.Warn("event payload did not decode; passing it through raw", "kind", p.Type, "err", err)
	}
	if a, ok := ev.Approval(); ok && a.SessionID == "" {
		a.SessionID = p.SessionID
	}
	if cp, ok := ev.Data.(*wire.CancelPayload); ok {
		// Newer gateways send request.cancel as a (sequenced) event.
		ev.RequestID = cp.ID
	}
	return ev
}
