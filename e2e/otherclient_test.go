//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// otherClient is another client of the real gateway (the Hermes TUI or
// Desktop, here plain JSON-RPC over /api/ws): it drives sessions next to
// Herald. It never fails the test from its goroutines: errors are kept.
type otherClient struct {
	ws *websocket.Conn

	mu     sync.Mutex
	nextID int
	calls  map[int]chan json.RawMessage
	events []otherEvent
	wake   chan struct{}
	err    error
	done   chan struct{}
}

type otherEvent struct {
	Type    string          `json:"type"`
	Session string          `json:"session_id"`
	Payload json.RawMessage `json:"payload"`
}

func dialOther(url string) (*otherClient, error) {
	d := websocket.Dialer{HandshakeTimeout: 20 * time.Second}
	ws, _, err := d.Dial(url, http.Header{})
	if err != nil {
		return nil, err
	}
	c := &otherClient{ws: ws, calls: map[int]chan json.RawMessage{}, wake: make(chan struct{}), done: make(chan struct{})}
	go c.read()
	return c, nil
}

func (c *otherClient) read() {
	defer close(c.done)
	for {
		_, b, err := c.ws.ReadMessage()
		if err != nil {
			c.mu.Lock()
			c.err = err
			close(c.wake)
			c.wake = make(chan struct{})
			c.mu.Unlock()
			return
		}
		var f struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params otherEvent      `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(b, &f) != nil {
			continue
		}
		c.mu.Lock()
		switch {
		case f.ID != nil && f.Method == "":
			if ch := c.calls[*f.ID]; ch != nil {
				if len(f.Error) > 0 && string(f.Error) != "null" {
					ch <- append(json.RawMessage(`{"error":`), append(f.Error, '}')...)
				} else {
					ch <- f.Result
				}
				delete(c.calls, *f.ID)
			}
		case f.Method == "event":
			c.events = append(c.events, f.Params)
		}
		close(c.wake)
		c.wake = make(chan struct{})
		c.mu.Unlock()
	}
}

// call sends a request and waits for its result.
func (c *otherClient) call(method string, params any, out any) error {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan json.RawMessage, 1)
	c.calls[id] = ch
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		return err
	}
	select {
	case r := <-ch:
		var e struct {
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(r, &e) == nil && e.Error != nil {
			return fmt.Errorf("%s: %s", method, e.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(r, out)
		}
		return nil
	case <-c.done:
		return fmt.Errorf("%s: connection closed: %v", method, c.err)
	case <-time.After(60 * time.Second):
		return fmt.Errorf("%s: no reply in 60s", method)
	}
}

// mark is how many events arrived so far.
func (c *otherClient) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

// waitEvent waits for an event after mark that keep accepts.
func (c *otherClient) waitEvent(from int, timeout time.Duration, keep func(otherEvent) bool) (otherEvent, int, error) {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		for i := from; i < len(c.events); i++ {
			if keep(c.events[i]) {
				ev := c.events[i]
				c.mu.Unlock()
				return ev, i + 1, nil
			}
		}
		from = len(c.events)
		wake, err := c.wake, c.err
		c.mu.Unlock()
		if err != nil {
			return otherEvent{}, from, err
		}
		select {
		case <-wake:
		case <-deadline:
			return otherEvent{}, from, fmt.Errorf("no such event within %s", timeout)
		}
	}
}

func (c *otherClient) close() {
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	_ = c.ws.Close()
	<-c.done
}

func payloadBool(raw json.RawMessage, key string) bool {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	b, _ := m[key].(bool)
	return b
}

// drive runs turns in sessions until stop: each session in turn a short
// streaming turn, and every third turn one that waits on an approval,
// which the other client answers itself a moment later (Herald, not
// following, sees the session wait). It returns how many turns ran.
func (c *otherClient) drive(sessions []string, stop <-chan struct{}, progress *atomic.Int32) (turns int, err error) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return turns, nil
		default:
		}
		sid := sessions[i%len(sessions)]
		text := "slow 4"
		if i%3 == 2 {
			text = "approve-me: git reset --hard HEAD"
		}
		mark := c.mark()
		if err := c.call("prompt.submit", map[string]any{"session_id": sid, "text": text}, nil); err != nil {
			return turns, err
		}
		if text != "slow 4" {
			ev, next, err := c.waitEvent(mark, 60*time.Second, func(e otherEvent) bool { return e.Session == sid && e.Type == "approval.request" })
			if err != nil {
				return turns, fmt.Errorf("approval in %s: %v", sid, err)
			}
			_ = ev
			mark = next
			time.Sleep(1500 * time.Millisecond) // a person reading it
			if err := c.call("approval.respond", map[string]any{"session_id": sid, "choice": "deny"}, nil); err != nil {
				return turns, err
			}
		}
		_, next, err := c.waitEvent(mark, 60*time.Second, func(e otherEvent) bool { return e.Session == sid && e.Type == "message.complete" })
		if err != nil {
			return turns, fmt.Errorf("turn in %s: %v", sid, err)
		}
		// 0.19.0 queues a prompt sent before the session is idle again.
		if _, _, err := c.waitEvent(next, 30*time.Second, func(e otherEvent) bool {
			return e.Session == sid && e.Type == "session.info" && !payloadBool(e.Payload, "running")
		}); err != nil {
			return turns, fmt.Errorf("idle in %s: %v", sid, err)
		}
		turns++
		progress.Add(1)
	}
}
