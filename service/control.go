package service

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/herald-desktop/herald/approval"
)

// The control socket lets `herald approve`, `herald pending` and `herald
// log` reach the Herald process that holds the gateway connections. It is
// a Unix socket in a directory only the user can enter; one JSON request
// per line, one JSON response per line.

// ControlRequest is one command over the control socket.
type ControlRequest struct {
	Op            string `json:"op"` // pending | approve | dismiss | log | view
	Key           string `json:"key,omitempty"`
	Choice        string `json:"choice,omitempty"`
	ConfirmAlways bool   `json:"confirm_always,omitempty"`
	Surface       string `json:"surface,omitempty"`
	Limit         int    `json:"limit,omitempty"`
	Gateway       string `json:"gateway,omitempty"`
}

// ControlResponse answers a ControlRequest.
type ControlResponse struct {
	Error    string             `json:"error,omitempty"`
	Pending  []approval.Request `json:"pending,omitempty"`
	Request  *approval.Request  `json:"request,omitempty"`
	Log      []approval.Entry   `json:"log,omitempty"`
	View     *View              `json:"view,omitempty"`
	Resolved bool               `json:"resolved,omitempty"`
}

// DefaultControlPath is $XDG_RUNTIME_DIR/herald/control.sock, or a
// per-user folder in the temp dir.
func DefaultControlPath() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "herald", "control.sock")
	}
	return filepath.Join(os.TempDir(), "herald-"+strconv.Itoa(os.Getuid()), "control.sock")
}

// ErrNoDaemon means no Herald process is serving the control socket.
var ErrNoDaemon = errors.New("no running Herald found: start `herald watch` or the desktop app first")

// ServeControl serves the control socket at path until ctx ends.
func (s *Service) ServeControl(ctx context.Context, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %v", filepath.Dir(path), err)
	}
	os.Chmod(filepath.Dir(path), 0o700)
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return fmt.Errorf("another Herald is already running (control socket %s); use it, or stop it first", path)
	}
	os.Remove(path) // a stale socket from a crashed run
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("cannot open the control socket %s: %v", path, err)
	}
	os.Chmod(path, 0o600)
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		defer os.Remove(path)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serveConn(ctx, c)
		}
	}()
	return nil
}

func (s *Service) serveConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	enc := json.NewEncoder(c)
	for sc.Scan() {
		var req ControlRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			enc.Encode(ControlResponse{Error: "bad request: " + err.Error()})
			continue
		}
		enc.Encode(s.handleControl(ctx, req))
	}
}

func (s *Service) handleControl(ctx context.Context, req ControlRequest) ControlResponse {
	surface := req.Surface
	if surface == "" {
		surface = "cli"
	}
	switch req.Op {
	case "pending":
		return ControlResponse{Pending: s.inbox.Pending()}
	case "view":
		v := s.View()
		return ControlResponse{View: &v}
	case "approve":
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		key, err := s.resolveKey(req.Key)
		if err == nil {
			err = s.inbox.Answer(actx, key, req.Choice, surface, req.ConfirmAlways)
		}
		if err != nil {
			return ControlResponse{Error: err.Error()}
		}
		r, _ := s.inbox.Get(key)
		return ControlResponse{Request: &r, Resolved: r.State == approval.StateResolved}
	case "dismiss":
		if err := s.Dismiss(req.Key, surface); err != nil {
			return ControlResponse{Error: err.Error()}
		}
		return ControlResponse{}
	case "log":
		es, err := s.History(approval.Filter{Limit: req.Limit, Gateway: req.Gateway})
		if err != nil {
			return ControlResponse{Error: err.Error()}
		}
		return ControlResponse{Log: es}
	}
	return ControlResponse{Error: fmt.Sprintf("unknown operation %q", req.Op)}
}

// Control sends one request to the Herald serving path.
func Control(ctx context.Context, path string, req ControlRequest) (ControlResponse, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return ControlResponse{}, ErrNoDaemon
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return ControlResponse{}, fmt.Errorf("talking to Herald failed: %v", err)
	}
	var resp ControlResponse
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	if !sc.Scan() {
		return ControlResponse{}, fmt.Errorf("Herald closed the control connection without answering: %v", sc.Err())
	}
	if err := json.Unmarshal(sc.Bytes(), &resp); err != nil {
		return ControlResponse{}, fmt.Errorf("Herald's answer did not decode: %v", err)
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}
