package hermestest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gorilla/websocket"
)

// fconn is one client connection. All its writes happen under Server.mu,
// so frames leave in the order the gateway produced them.
type fconn struct {
	s              *Server
	ws             *websocket.Conn
	faults         Faults
	sent           int
	dead           bool
	serverRequests bool // the client declared server_requests support
	// peer is set for an in-process client (Server.NewPeer): frames go to
	// it instead of a WebSocket.
	peer *Peer
}

type rpcFrame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func eventFrame(kind, sid string, payload any) map[string]any {
	p := map[string]any{"type": kind}
	if sid != "" {
		p["session_id"] = sid
	}
	if payload != nil {
		p["payload"] = payload
	}
	return map[string]any{"jsonrpc": "2.0", "method": "event", "params": p}
}

func resultFrame(id json.RawMessage, result any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": result}
}

func errorFrame(id json.RawMessage, code int, msg string) map[string]any {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}}
}

// sendLocked writes one frame, applying the connection's faults.
func (c *fconn) sendLocked(frame any) {
	if c.dead {
		return
	}
	if c.faults.DropAfterFrames > 0 && c.sent >= c.faults.DropAfterFrames {
		c.cut()
		return
	}
	b, err := json.Marshal(frame)
	if err != nil {
		panic(fmt.Sprintf("hermestest: cannot encode frame: %v", err))
	}
	if c.faults.Delay > 0 {
		time.Sleep(c.faults.Delay)
	}
	c.sent++
	c.write(b)
	if c.faults.DuplicateEvents && bytes.Contains(b, []byte(`"method":"event"`)) {
		c.write(b)
	}
}

func (c *fconn) write(b []byte) {
	if c.peer != nil {
		c.peer.receive(b)
		c.s.notifyLocked()
		return
	}
	c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		c.cut()
	}
}

// cut drops the TCP connection without a close frame. Caller holds s.mu.
func (c *fconn) cut() {
	if c.dead {
		return
	}
	c.dead = true
	if c.ws != nil {
		c.ws.NetConn().Close()
	}
	c.detachLocked()
}

// closeWith sends a close frame with code, then drops. Caller holds s.mu.
func (c *fconn) closeWith(code int, reason string) {
	if c.dead {
		return
	}
	c.dead = true
	if c.ws != nil {
		msg := websocket.FormatCloseMessage(code, reason)
		c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		c.ws.Close()
	}
	c.detachLocked()
}

func (c *fconn) detachLocked() {
	s := c.s
	delete(s.conns, c)
	for id, fs := range s.sessions {
		if fs.transport == c || len(fs.extra) > 0 {
			fs.detachConnLocked(c)
			if fs.transport == nil && fs.closeOnDisconnect {
				fs.stopAgent()
				fs.cold = true
				delete(s.sessions, id)
			}
		}
	}
	s.notifyLocked()
}

func (c *fconn) readLoop() {
	for {
		_, msg, err := c.ws.ReadMessage()
		if err != nil {
			c.s.mu.Lock()
			if !c.dead {
				c.dead = true
				c.ws.Close()
				c.detachLocked()
			}
			c.s.mu.Unlock()
			return
		}
		for _, line := range bytes.Split(msg, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			c.s.mu.Lock()
			if !c.dead {
				c.handleLocked(line)
			}
			c.s.mu.Unlock()
		}
	}
}

// handleLocked serves one client frame. Caller holds s.mu.
func (c *fconn) handleLocked(line []byte) {
	var f rpcFrame
	if err := json.Unmarshal(line, &f); err != nil {
		c.sendLocked(errorFrame(nil, -32700, "parse error"))
		return
	}
	if f.Method == "" {
		if len(f.Result) > 0 || len(f.Error) > 0 {
			c.s.serverRequestAnsweredLocked(c, f)
			return
		}
		c.sendLocked(errorFrame(f.ID, -32600, "invalid request: method must be a non-empty string"))
		return
	}
	id := f.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	if c.firesLocked(&c.s.loseNext, f.Method) {
		c.cut()
		return
	}
	c.s.methods = append(c.s.methods, f.Method)
	c.s.notifyLocked()
	if c.firesLocked(&c.s.cutOnNext, f.Method) {
		c.faults.DropAfterFrames = max(c.sent, 1) // the next frame cuts (gateway.ready was sent)
		c.s.callLocked(c, f.Method, f.Params)
		c.cut()
		return
	}
	result, rerr := c.s.callLocked(c, f.Method, f.Params)
	if rerr != nil {
		c.sendLocked(errorFrame(id, rerr.code, rerr.msg))
		return
	}
	if result != nil {
		c.sendLocked(resultFrame(id, result))
	}
}

// firesLocked reports whether a one-shot fault (LoseNext, CutOnNext)
// set to method applies to this call, a client's (not a peer's), and
// clears it when it does. Caller holds s.mu.
func (c *fconn) firesLocked(fault *string, method string) bool {
	if *fault == "" || *fault != method || c.peer != nil {
		return false
	}
	*fault = ""
	return true
}

type rpcErr struct {
	code int
	msg  string
}
