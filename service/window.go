package service

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
)

// The window process. On Linux the always-on Herald holds no web view: the
// window is a child process, started on demand, that calls the methods the
// window is bound to and follows the window's events over the control
// socket (ops window.call, window.events and window.show), and exits when
// it is closed. The service only carries these; the desktop app (a
// WindowHost) answers them.

// Window operations on the control socket.
const (
	opWindowCall   = "window.call"
	opWindowEvents = "window.events"
	opWindowShow   = "window.show"
)

// WindowEvent is one event for the window (see app.EventSnapshot).
type WindowEvent struct {
	Name string          `json:"name"`
	Data json.RawMessage `json:"data,omitempty"`
	// Latest: only the newest event of this name matters (a snapshot of
	// the whole window): one a window has not read yet is replaced by
	// the next.
	Latest bool `json:"-"`
	// Hold: when no window watches, the event waits for the next window
	// to come, for at most WindowHoldAge (a click that opens the window
	// on an approval).
	Hold bool `json:"-"`
}

// WindowHost is what serves a window process: the desktop app.
type WindowHost interface {
	// CallWindow runs a method bound to the window with its JSON
	// arguments and returns its JSON result.
	CallWindow(ctx context.Context, method string, args []json.RawMessage) (json.RawMessage, error)
	// SubscribeWindow streams the window's events until cancel is called.
	SubscribeWindow() (events <-chan WindowEvent, cancel func())
	// ShowWindow opens or raises the window (a second launch of Herald).
	ShowWindow() error
}

type windowHost struct{ h WindowHost }

// SetWindowHost lets window processes in over the control socket; nil
// turns them away.
func (s *Service) SetWindowHost(h WindowHost) {
	if h == nil {
		s.window.Store(nil)
		return
	}
	s.window.Store(&windowHost{h})
}

func (s *Service) host() WindowHost {
	if w := s.window.Load(); w != nil {
		return w.h
	}
	return nil
}

var errNoWindowHost = errors.New("this Herald has no window (it is the terminal client, `herald watch`)")

func (s *Service) handleWindow(ctx context.Context, req ControlRequest) ControlResponse {
	h := s.host()
	if h == nil {
		return ControlResponse{Error: errNoWindowHost.Error()}
	}
	switch req.Op {
	case opWindowShow:
		if err := h.ShowWindow(); err != nil {
			return ControlResponse{Error: err.Error()}
		}
		return ControlResponse{}
	default:
		res, err := h.CallWindow(ctx, req.Method, req.Args)
		if err != nil {
			return ControlResponse{Error: err.Error()}
		}
		return ControlResponse{Result: res}
	}
}

// streamWindow writes the window's events to c, one response line each,
// until the window process hangs up or the service stops.
func (s *Service) streamWindow(ctx context.Context, c net.Conn, sc *bufio.Scanner, enc *json.Encoder) {
	h := s.host()
	if h == nil {
		enc.Encode(ControlResponse{Error: errNoWindowHost.Error()})
		return
	}
	events, cancel := h.SubscribeWindow()
	defer cancel()
	// The first line says the stream is up, so the window knows that what
	// it fetches next cannot miss an event.
	if enc.Encode(ControlResponse{}) != nil {
		return
	}
	gone := make(chan struct{})
	go func() {
		for sc.Scan() { // the window sends nothing more; EOF is goodbye
		}
		close(gone)
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-gone:
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			if err := enc.Encode(ControlResponse{Event: &ev}); err != nil {
				return
			}
		}
	}
}

// WindowCall runs a window method in the Herald serving path.
func WindowCall(ctx context.Context, path, method string, args []json.RawMessage) (json.RawMessage, error) {
	resp, err := Control(ctx, path, ControlRequest{Op: opWindowCall, Method: method, Args: args})
	if err != nil {
		return nil, err
	}
	return resp.Result, nil
}

// ShowWindow asks the Herald serving path to open or raise its window.
func ShowWindow(ctx context.Context, path string) error {
	_, err := Control(ctx, path, ControlRequest{Op: opWindowShow})
	return err
}

// WindowEvents follows the window's events from the Herald serving path:
// ready is called once the stream is up, then fn for each event, until ctx
// ends or Herald goes away (an error saying so).
func WindowEvents(ctx context.Context, path string, ready func(), fn func(WindowEvent)) error {
	c, err := dialControl(ctx, path, os.Getuid())
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := json.NewEncoder(c).Encode(ControlRequest{Op: opWindowEvents}); err != nil {
		return fmt.Errorf("talking to Herald failed: %v", err)
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	first := true
	for sc.Scan() {
		var resp ControlResponse
		if err := json.Unmarshal(sc.Bytes(), &resp); err != nil {
			return fmt.Errorf("Herald's event did not decode: %v", err)
		}
		if resp.Error != "" {
			return errors.New(resp.Error)
		}
		if first {
			first = false
			if ready != nil {
				ready()
			}
		}
		if resp.Event != nil {
			fn(*resp.Event)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.New("Herald stopped: the window closes with it")
}
