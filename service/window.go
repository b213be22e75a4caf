package service

import (
	"context"
	"encoding/json"
	"errors"
)

// The window process. On Linux the always-on Herald holds no web view: the
// window is a child process, started on demand, that calls the methods the
// window is bound to and follows the window's events over the control
// socket (ops window.call and window.show), follows the window's events
// on the one event stream (op watch with WatchWindow, see watch.go), and
// exits when it is closed. The service only carries these; the desktop
// app (a WindowHost, and PublishWindow) answers them.

// Window operations on the control socket.
const (
	opWindowCall = "window.call"
	opWindowShow = "window.show"
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

// PublishWindow sends ev to the window processes that follow the window's
// events (WatchWindow).
func (s *Service) PublishWindow(ev WindowEvent) {
	s.bus.publish(WatchWindow, Notify{Window: &ev})
}

// WindowHost is what serves a window process: the desktop app.
type WindowHost interface {
	// CallWindow runs a method bound to the window with its JSON
	// arguments and returns its JSON result.
	CallWindow(ctx context.Context, method string, args []json.RawMessage) (json.RawMessage, error)
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
