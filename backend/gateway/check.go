package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// Check tests a gateway configuration once, end to end, as "Test" in an
// add-gateway form needs: the HTTP status probe, the WebSocket upgrade with
// the given credentials, and the gateway.ready handshake. It returns the
// stage that failed ("http", "websocket" or "handshake") with a human
// error, or "handshake" and nil when everything worked.
func Check(ctx context.Context, cfg Config) (stage string, err error) {
	cfg.OnEvent, cfg.OnStatus = nil, nil
	c, err := New(cfg)
	if err != nil {
		return "http", err
	}
	if _, err := c.Probe(ctx); err != nil {
		return "http", err
	}
	dctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	ws, err := c.dial(dctx)
	if err != nil {
		return "websocket", err
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(DialTimeout))
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			return "handshake", closeErr(err)
		}
		f, err := wire.DecodeFrame(msg)
		if err != nil {
			return "handshake", errors.New("the server answered the WebSocket with something that is not Hermes' JSON-RPC; is this the Hermes dashboard port?")
		}
		if f.Kind == wire.KindNotification && f.Method == "event" {
			return "handshake", nil // the first event is gateway.ready
		}
	}
}
