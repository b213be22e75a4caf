package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/herald-desktop/herald/backend/wire"
)

// Limits on one connection.
const (
	// MaxFrameBytes bounds one WebSocket message from the gateway.
	MaxFrameBytes = 8 << 20
	writeTimeout  = 10 * time.Second
	sendQueueLen  = 256
)

type callResult struct {
	result json.RawMessage
	err    error
}

// waiting is a call waiting for its response; started is set once the
// writer began writing its frame.
type waiting struct {
	ch      chan callResult
	started *atomic.Bool
}

// OutcomeUnknownError is a call's or an answer's error when its frame had
// already gone to the gateway (the writer began writing it) before the
// link failed or the wait ended: the gateway may have acted on it. It
// matches wire.ErrOutcomeUnknown and wraps the cause, so errors.Is
// ErrNotConnected still holds for a lost link.
type OutcomeUnknownError struct{ Cause error }

func (e *OutcomeUnknownError) Error() string {
	return "the request was sent, but the link to the gateway dropped before it answered, so whether the gateway acted on it is unknown"
}

// Is matches wire.ErrOutcomeUnknown.
func (e *OutcomeUnknownError) Is(target error) bool { return target == wire.ErrOutcomeUnknown }

// Unwrap returns the cause.
func (e *OutcomeUnknownError) Unwrap() error { return e.Cause }

// lostErr is the error of a frame whose link failed: unknown outcome once
// the writer began writing it, else not connected (nothing was sent).
func lostErr(started *atomic.Bool, cause error) error {
	if started != nil && started.Load() {
		return &OutcomeUnknownError{Cause: cause}
	}
	return cause
}

// conn is one live WebSocket to the gateway: one reader goroutine, one
// writer goroutine, and a table of calls waiting for responses.
type conn struct {
	ws      *websocket.Conn
	send    chan outFrame
	done    chan struct{}
	once    sync.Once
	errMu   sync.Mutex
	err     error
	nextID  atomic.Int64
	pmu     sync.Mutex
	pending map[int64]waiting
	// lastRead is the clock time (UnixNano) of the last message or pong.
	lastRead atomic.Int64
	// reads counts the messages and pongs received.
	reads atomic.Int64
	// pinging is set while a liveness ping waits for its reply.
	pinging atomic.Bool
}

func newConn(ws *websocket.Conn, now time.Time) *conn {
	c := &conn{
		ws:      ws,
		send:    make(chan outFrame, sendQueueLen),
		done:    make(chan struct{}),
		pending: make(map[int64]waiting),
	}
	c.lastRead.Store(now.UnixNano())
	ws.SetReadLimit(MaxFrameBytes)
	return c
}

// fail closes the connection once, remembering the first reason.
func (c *conn) fail(err error) {
	c.once.Do(func() {
		c.errMu.Lock()
		c.err = err
		c.errMu.Unlock()
		close(c.done)
		c.ws.Close()
		c.pmu.Lock()
		for id, w := range c.pending {
			w.ch <- callResult{err: lostErr(w.started, ErrNotConnected)}
			delete(c.pending, id)
		}
		c.pmu.Unlock()
	})
}

func (c *conn) reason() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// outFrame is one data frame for the writer; ack, when set, receives the
// write's outcome; started, when set, is set just before the write begins
// (from then on the gateway may receive it).
type outFrame struct {
	b       []byte
	ack     chan error
	started *atomic.Bool
}

// writeLoop is the only goroutine that writes data frames.
func (c *conn) writeLoop() {
	for {
		select {
		case <-c.done:
			return
		case f := <-c.send:
			if f.started != nil {
				// From here on, part of the frame may reach the gateway.
				f.started.Store(true)
			}
			c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
			err := c.ws.WriteMessage(websocket.TextMessage, f.b)
			if f.ack != nil {
				f.ack <- err
			}
			if err == websocket.ErrCloseSent {
				// The gateway sent a close frame and it was answered: the
				// reader reports the close and its code (4401 means sign
				// in again), which this write error must not hide.
				return
			}
			if err != nil {
				c.fail(fmt.Errorf("writing to the gateway failed: %w", err))
				return
			}
		}
	}
}

// enqueue hands a frame to the writer. With wait it returns only once the
// frame is written (or the write failed): answers to server requests have
// no other confirmation than that. started, when not nil, is set once the
// writer begins writing the frame; with wait, a failure after that is an
// *OutcomeUnknownError, one before it means nothing was sent.
func (c *conn) enqueue(ctx context.Context, b []byte, wait bool, started *atomic.Bool) error {
	select {
	case <-c.done:
		return ErrNotConnected
	default:
	}
	if wait && started == nil {
		started = new(atomic.Bool)
	}
	f := outFrame{b: b, started: started}
	if wait {
		f.ack = make(chan error, 1)
	}
	select {
	case c.send <- f:
	case <-c.done:
		return ErrNotConnected
	case <-ctx.Done():
		return ctx.Err()
	}
	if !wait {
		return nil
	}
	select {
	case err := <-f.ack:
		switch {
		case err == websocket.ErrCloseSent:
			// Refused before any byte went out: not sent.
			return fmt.Errorf("writing to the gateway failed: %w", err)
		case err != nil:
			return &OutcomeUnknownError{Cause: fmt.Errorf("writing to the gateway failed: %w", err)}
		}
		return nil
	case <-c.done:
		// The writer may have written it just before failing.
		select {
		case err := <-f.ack:
			if err == nil {
				return nil
			}
		default:
		}
		return lostErr(started, ErrNotConnected)
	case <-ctx.Done():
		return lostErr(started, ctx.Err())
	}
}

// call sends a request and waits for its response.
func (c *conn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := c.nextID.Add(1)
	b, err := wire.EncodeRequest(id, method, params)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	w := waiting{ch: make(chan callResult, 1), started: new(atomic.Bool)}
	c.pmu.Lock()
	select {
	case <-c.done:
		c.pmu.Unlock()
		return nil, ErrNotConnected
	default:
	}
	c.pending[id] = w
	c.pmu.Unlock()
	if err := c.enqueue(ctx, b, false, w.started); err != nil {
		c.forget(id)
		return nil, err
	}
	select {
	case r := <-w.ch:
		return r.result, r.err
	case <-ctx.Done():
		c.forget(id)
		return nil, lostErr(w.started, ctx.Err())
	}
}

func (c *conn) forget(id int64) {
	c.pmu.Lock()
	delete(c.pending, id)
	c.pmu.Unlock()
}

// resolve routes a response frame to its waiting call.
func (c *conn) resolve(f wire.Frame) bool {
	var id int64
	if err := json.Unmarshal(f.ID, &id); err != nil {
		return false
	}
	c.pmu.Lock()
	w, ok := c.pending[id]
	delete(c.pending, id)
	c.pmu.Unlock()
	if !ok {
		return false
	}
	if f.Error != nil {
		w.ch <- callResult{err: f.Error}
	} else {
		w.ch <- callResult{result: f.Result}
	}
	return true
}

// closeErr turns a read error into what Herald should do about it.
func closeErr(err error) error {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		switch ce.Code {
		case 4401:
			return &AuthError{Code: ce.Code, Msg: "the gateway ended the session (4401): sign in again"}
		case 4403:
			return &ConfigError{Code: ce.Code, Msg: fmt.Sprintf("the gateway refused this client (4403%s): check the gateway URL and its allowed hosts/origins", reasonSuffix(ce.Text))}
		case websocket.CloseNormalClosure, websocket.CloseGoingAway:
			return fmt.Errorf("the gateway closed the connection (%d%s)", ce.Code, reasonSuffix(ce.Text))
		case websocket.CloseAbnormalClosure:
			// 1006: no close frame at all. Say what it means, not the code.
			return errors.New("the connection to the gateway dropped: the gateway stopped or the network failed")
		}
		return fmt.Errorf("the connection to the gateway was closed (%d%s)", ce.Code, reasonSuffix(ce.Text))
	}
	return fmt.Errorf("the connection to the gateway was lost: %w", err)
}

func reasonSuffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// controlPing sends a WebSocket ping; the pong handler records the reply.
func (c *conn) controlPing() {
	if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeTimeout)); err != nil && err != websocket.ErrCloseSent {
		c.fail(fmt.Errorf("writing a ping to the gateway failed: %w", err))
	}
}
