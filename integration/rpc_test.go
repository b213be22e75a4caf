package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// guard bounds every wait on a real server (a loaded 2-core machine).
const guard = 60 * time.Second

// rawConn is a plain JSON-RPC client of /api/ws: "another client" (the
// Hermes TUI or Desktop) in the scenarios, and the conformance driver. It
// keeps every frame it receives, in order.
type rawConn struct {
	t    testing.TB
	name string
	ws   *websocket.Conn

	mu     sync.Mutex
	frames []frame
	nextID int
	wake   chan struct{}
	closed error // the read loop's end (a *websocket.CloseError on a close frame)
	done   chan struct{}
}

// frame is one received frame, decoded enough to route it.
type frame struct {
	Raw    json.RawMessage
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Type      string          `json:"type"`
		SessionID string          `json:"session_id"`
		Payload   json.RawMessage `json:"payload"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (f frame) isEvent() bool { return f.Method == "event" }

// dialRaw opens /api/ws at url (ws://…/api/ws?token=…).
func dialRaw(t testing.TB, name, url string) *rawConn {
	t.Helper()
	c, err := tryDialRaw(t, name, url)
	if err != nil {
		t.Fatalf("%s: dial %s: %v", name, redactToken(url), err)
	}
	return c
}

func tryDialRaw(t testing.TB, name, url string) (*rawConn, error) {
	d := websocket.Dialer{HandshakeTimeout: 20 * time.Second}
	ws, resp, err := d.Dial(url, http.Header{})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("%w (HTTP %d)", err, resp.StatusCode)
		}
		return nil, err
	}
	c := &rawConn{t: t, name: name, ws: ws, wake: make(chan struct{}), done: make(chan struct{})}
	go c.read()
	t.Cleanup(func() { c.Close() })
	return c, nil
}

func redactToken(u string) string {
	if i := strings.Index(u, "token="); i >= 0 {
		return u[:i] + "token=…"
	}
	return u
}

func (c *rawConn) read() {
	defer close(c.done)
	for {
		_, b, err := c.ws.ReadMessage()
		c.mu.Lock()
		if err != nil {
			c.closed = err
			close(c.wake)
			c.wake = make(chan struct{})
			c.mu.Unlock()
			return
		}
		var f frame
		if json.Unmarshal(b, &f) == nil {
			f.Raw = append(json.RawMessage(nil), b...)
			c.frames = append(c.frames, f)
		}
		close(c.wake)
		c.wake = make(chan struct{})
		c.mu.Unlock()
	}
}

// Close sends a normal close and waits for the read loop.
func (c *rawConn) Close() {
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	_ = c.ws.Close()
	<-c.done
}

// Abort drops the TCP connection without a close frame.
func (c *rawConn) Abort() {
	_ = c.ws.UnderlyingConn().Close()
	<-c.done
}

// Frames is a copy of what arrived so far.
func (c *rawConn) Frames() []frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]frame(nil), c.frames...)
}

// waitFrame waits for a frame at index >= from matching keep; it returns
// the frame and its index.
func (c *rawConn) waitFrame(from int, what string, keep func(frame) bool) (frame, int) {
	c.t.Helper()
	deadline := time.NewTimer(guard)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i := from; i < len(c.frames); i++ {
			if keep(c.frames[i]) {
				f := c.frames[i]
				c.mu.Unlock()
				return f, i
			}
		}
		from = len(c.frames)
		wake, closed := c.wake, c.closed
		c.mu.Unlock()
		if closed != nil {
			c.t.Fatalf("%s: connection closed (%v) while waiting for %s", c.name, closed, what)
		}
		select {
		case <-wake:
		case <-deadline.C:
			c.t.Fatalf("%s: no %s within %s", c.name, what, guard)
		}
	}
}

// WaitEvent waits for an event of kind (after frame index from) for which
// keep (may be nil) holds.
func (c *rawConn) WaitEvent(from int, kind string, keep func(frame) bool) (frame, int) {
	c.t.Helper()
	return c.waitFrame(from, "event "+kind, func(f frame) bool {
		return f.isEvent() && f.Params.Type == kind && (keep == nil || keep(f))
	})
}

// WaitClosed waits for the connection to end and returns why.
func (c *rawConn) WaitClosed() error {
	c.t.Helper()
	select {
	case <-c.done:
	case <-time.After(guard):
		c.t.Fatalf("%s: still open after %s", c.name, guard)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Len is the number of frames received so far (a mark for WaitEvent).
func (c *rawConn) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.frames)
}

// Call sends a request and waits for its response frame.
func (c *rawConn) Call(method string, params any) frame {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		c.t.Fatalf("%s: send %s: %v", c.name, method, err)
	}
	want := fmt.Sprint(id)
	f, _ := c.waitFrame(0, "reply to "+method, func(f frame) bool {
		return !f.isEvent() && f.Method == "" && string(f.ID) == want
	})
	return f
}

// MustCall is Call that fails the test on an error reply and decodes the
// result into out (if not nil).
func (c *rawConn) MustCall(method string, params any, out any) frame {
	c.t.Helper()
	f := c.Call(method, params)
	if f.Error != nil {
		c.t.Fatalf("%s: %s: error %d %s", c.name, method, f.Error.Code, f.Error.Message)
	}
	if out != nil {
		if err := json.Unmarshal(f.Result, out); err != nil {
			c.t.Fatalf("%s: %s result %s: %v", c.name, method, f.Result, err)
		}
	}
	return f
}

// created is what session.create answers (the fields Herald reads).
type created struct {
	SessionID       string `json:"session_id"`
	StoredSessionID string `json:"stored_session_id"`
}

// Create makes a session and returns its live and stored ids.
func (c *rawConn) Create() created {
	c.t.Helper()
	var r created
	c.MustCall("session.create", map[string]any{"cols": 100}, &r)
	if r.SessionID == "" {
		c.t.Fatalf("%s: session.create returned no session_id", c.name)
	}
	return r
}

// Submit sends prompt.submit and returns the reply's status.
func (c *rawConn) Submit(sid, text string) string {
	c.t.Helper()
	var r struct {
		Status string `json:"status"`
	}
	c.MustCall("prompt.submit", map[string]any{"session_id": sid, "text": text}, &r)
	return r.Status
}

// WaitIdle waits (from mark) for the turn's end and the session.info with
// running false that follows it (0.19.0 queues a prompt sent before it).
func (c *rawConn) WaitIdle(from int, sid string) (complete frame, next int) {
	c.t.Helper()
	complete, i := c.WaitEvent(from, "message.complete", func(f frame) bool { return f.Params.SessionID == sid })
	_, j := c.WaitEvent(i+1, "session.info", func(f frame) bool {
		return f.Params.SessionID == sid && !jsonBool(f.Params.Payload, "running")
	})
	return complete, j + 1
}

func jsonBool(raw json.RawMessage, key string) bool {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	b, _ := m[key].(bool)
	return b
}

func jsonString(raw json.RawMessage, key string) string {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	s, _ := m[key].(string)
	return s
}
