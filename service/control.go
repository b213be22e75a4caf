package service

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/wire"
)

// The control socket lets `herald approve`, `herald pending` and `herald
// log` reach the Herald process that holds the gateway connections, and
// `herald watch` and the window process follow its event stream (op
// watch, watch.go). It is a Unix socket in a directory only the user can
// enter; one JSON request per line, one JSON response per line.

// ControlRequest is one command over the control socket.
type ControlRequest struct {
	Op            string `json:"op"` // pending | approve | answer | dismiss | log | view | watch | follow | take | unfollow | runs | stop | ask | sessions | window.*
	Key           string `json:"key,omitempty"`
	Choice        string `json:"choice,omitempty"`
	ConfirmAlways bool   `json:"confirm_always,omitempty"`
	// ConfirmHidden: the user approves although Hermes hid part of the
	// command (approval.Confirmed.Hidden).
	ConfirmHidden bool   `json:"confirm_hidden,omitempty"`
	Surface       string `json:"surface,omitempty"`
	Limit         int    `json:"limit,omitempty"`
	Gateway       string `json:"gateway,omitempty"`
	// Session and Text are for ask (runs, stop and ask: see runs.go);
	// Gateway and Session name the session of follow, take and unfollow.
	Session string `json:"session,omitempty"`
	Text    string `json:"text,omitempty"`
	// Value is the answer of op "answer": clarify text, or a sudo
	// password or secret value (empty declines). The serving side wipes
	// it once sent; it is never echoed back or logged.
	Value []byte `json:"value,omitempty"`
	// Method and Args are a window call (op window.call): a method bound
	// to the window and its arguments, each as JSON.
	Method string            `json:"method,omitempty"`
	Args   []json.RawMessage `json:"args,omitempty"`
	// Watch is what op watch streams, and Queue the length of the
	// watcher's queue in Herald (<= 0 or more than DefaultQueue:
	// DefaultQueue).
	Watch Watch `json:"watch,omitempty"`
	Queue int   `json:"queue,omitempty"`
	// Chunked asks for a long list (pending, log) in several response
	// lines of at most about controlChunkBytes each, every one but the
	// last marked More, rather than in one line of any length.
	Chunked bool `json:"chunked,omitempty"`
}

// ControlResponse answers a ControlRequest.
type ControlResponse struct {
	Error    string             `json:"error,omitempty"`
	Pending  []approval.Request `json:"pending,omitempty"`
	Request  *approval.Request  `json:"request,omitempty"`
	Log      []LogEntry         `json:"log,omitempty"`
	View     *View              `json:"view,omitempty"`
	Resolved bool               `json:"resolved,omitempty"`
	Runs     []RunRef           `json:"runs,omitempty"`
	Stop     *StopResult        `json:"stop,omitempty"`
	Ask      *AskResult         `json:"ask,omitempty"`
	// Stored is a server's stored sessions (op sessions).
	Stored *StoredSessionsView `json:"stored,omitempty"`
	// Result is a window call's result; Notify one notification of a
	// watch stream.
	Result json.RawMessage `json:"result,omitempty"`
	Notify *Notify         `json:"notify,omitempty"`
	// More: another line of this response follows (Chunked requests).
	More bool `json:"more,omitempty"`
}

// controlChunkBytes is about the most a chunked response line carries
// (one item may exceed it: commands are bounded by the inbox).
const controlChunkBytes = 1 << 20

// writeChunked writes resp in lines of about controlChunkBytes: its
// Pending and Log lists over several lines marked More, the rest of it in
// the last line. Each item is encoded once.
func writeChunked(w io.Writer, resp ControlResponse) error {
	pending, log := encodeEach(resp.Pending), encodeEach(resp.Log)
	resp.Pending, resp.Log, resp.More = nil, nil, false
	rest, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	var line []byte
	var lists [2][][]byte // pending, log items of this line
	size := 0
	flush := func(last bool) error {
		line = line[:0]
		if last {
			line = append(line, rest[:len(rest)-1]...) // without its '}'
		} else {
			line = append(line, `{"more":true`...)
		}
		for i, key := range []string{"pending", "log"} {
			if len(lists[i]) == 0 {
				continue
			}
			if len(line) > 1 {
				line = append(line, ',')
			}
			line = append(line, `"`+key+`":[`...)
			for j, item := range lists[i] {
				if j > 0 {
					line = append(line, ',')
				}
				line = append(line, item...)
			}
			line = append(line, ']')
			lists[i] = lists[i][:0]
		}
		line = append(line, '}', '\n')
		size = 0
		_, err := w.Write(line)
		return err
	}
	for i, items := range [][][]byte{pending, log} {
		for _, item := range items {
			if size > 0 && size+len(item) > controlChunkBytes {
				if err := flush(false); err != nil {
					return err
				}
			}
			size += len(item)
			lists[i] = append(lists[i], item)
		}
	}
	return flush(true)
}

// encodeEach encodes each item of a list.
func encodeEach[T any](items []T) [][]byte {
	out := make([][]byte, 0, len(items))
	for _, it := range items {
		b, _ := json.Marshal(it)
		out = append(out, b)
	}
	return out
}

// DefaultControlPath is $XDG_RUNTIME_DIR/herald/control.sock, or a
// per-user folder in the temp dir.
func DefaultControlPath() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "herald", "control.sock")
	}
	return filepath.Join(os.TempDir(), "herald-"+strconv.Itoa(os.Getuid()), "control.sock")
}

// ErrInterrupted means the wait for Herald's answer was cut short (Ctrl-C)
// after the request was sent: it may still be carried out.
var ErrInterrupted = fmt.Errorf("interrupted while waiting for Herald's answer; the request may still be carried out: check with `herald pending` or `herald log`: %w", context.Canceled)

// cutShort is the error of a wait for Herald's answer that ctx ended.
func cutShort(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("Herald did not answer in time; the request may still be carried out: check with `herald pending` or `herald log`: %w", ctx.Err())
	}
	return ErrInterrupted
}

// ErrNoDaemon means no Herald process is serving the control socket.
var ErrNoDaemon = errors.New("no running Herald found: start `herald watch` or the desktop app first")

// ErrAlreadyRunning is ServeControl's error when another Herald serves the
// control socket.
var ErrAlreadyRunning = errors.New("another Herald is already running")

// ServeControl serves the control socket at path until ctx ends. It
// refuses to run when the socket's folder or an existing socket is not
// private to this user (see checkControlDir), and it answers only
// connections from processes of this user.
func (s *Service) ServeControl(ctx context.Context, path string) error {
	return s.serveControl(ctx, path, os.Getuid())
}

func (s *Service) serveControl(ctx context.Context, path string, uid int) error {
	if err := prepareControlDir(filepath.Dir(path), uid); err != nil {
		return err
	}
	switch err := checkControlSocket(path, uid); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return fmt.Errorf("%w (control socket %s): use that one (`herald pending`, `herald approve`, or `herald watch` with no server of its own), or quit it first", ErrAlreadyRunning, path)
		}
		os.Remove(path) // a stale socket from a crashed run
	}
	ln, err := s.listenPrivate(path)
	if err != nil {
		return err
	}
	if err := checkControlSocket(path, uid); err != nil {
		ln.Close()
		return err
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		defer func() {
			if checkControlSocket(path, uid) == nil {
				os.Remove(path)
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if peer, err := peerUID(c); err != nil || peer != uid {
				s.log.Warn("refused a control connection from another user", "socket", path, "peer_uid", peer, "err", err)
				fmt.Fprintf(c, "{\"error\":\"refused: this Herald answers only its own user (uid %d)\"}\n", uid)
				c.Close()
				continue
			}
			go s.serveConn(ctx, c)
		}
	}()
	return nil
}

// listenPrivate listens on a Unix socket that appears at path already
// private (0600). A socket is created with the umask's mode (often 0755),
// and a client that found it before a chmod would refuse it as unsafe; so
// the socket is bound under a temporary name in the same folder, made
// private, and only then linked to path. Linking fails if path exists, so
// two Heralds starting at once cannot take each other's socket.
func (s *Service) listenPrivate(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	var ln net.Listener
	var tmp string
	for try := 0; ; try++ {
		var b [4]byte
		rand.Read(b[:])
		// Not longer than a usual socket name: a Unix socket path has a
		// small limit (108 bytes on Linux).
		tmp = filepath.Join(dir, ".h"+hex.EncodeToString(b[:]))
		var err error
		if ln, err = net.Listen("unix", tmp); err == nil {
			break
		} else if try == 3 {
			return nil, fmt.Errorf("cannot open the control socket %s: %v", path, err)
		}
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // path is removed by serveControl, only if still ours
	defer os.Remove(tmp)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("cannot make the control socket %s private: %v", path, err)
	}
	if s.controlBound != nil {
		s.controlBound(tmp)
	}
	err := os.Link(tmp, path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		err = os.Rename(tmp, path) // a file system without hard links
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		ln.Close()
		return nil, fmt.Errorf("%w (control socket %s): use that one (`herald pending`, `herald approve`, or `herald watch` with no server of its own), or quit it first", ErrAlreadyRunning, path)
	case err != nil:
		ln.Close()
		return nil, fmt.Errorf("cannot open the control socket %s: %v", path, err)
	}
	return ln, nil
}

func (s *Service) serveConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	enc := json.NewEncoder(c)
	for sc.Scan() {
		var req ControlRequest
		line := sc.Bytes()
		err := json.Unmarshal(line, &req)
		clear(line) // it may carry a password or secret (op "answer")
		if err != nil {
			enc.Encode(ControlResponse{Error: "bad request: the line is not a Herald control request"})
			continue
		}
		if req.Op == opWatch {
			s.serveWatch(ctx, c, sc, enc, req)
			return
		}
		resp := s.handleControl(ctx, req)
		if req.Chunked {
			writeChunked(c, resp)
			continue
		}
		enc.Encode(resp)
	}
}

func (s *Service) handleControl(ctx context.Context, req ControlRequest) ControlResponse {
	surface := req.Surface
	if surface == "" {
		surface = "cli"
	}
	switch req.Op {
	case "pending":
		// Each with its session's one name now (SessionTitle), as the
		// window names it.
		pend := s.inbox.Pending()
		if len(pend) > 0 {
			names := s.View().Names()
			for i := range pend {
				pend[i] = names.Named(pend[i])
			}
		}
		return ControlResponse{Pending: pend}
	case "view":
		v := s.View()
		return ControlResponse{View: &v}
	case "approve":
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		key, err := s.resolveKey(req.Key)
		if r, ok := s.inbox.Get(key); err == nil && ok && r.Kind.IsPrompt() {
			// approve answers commands: a question's choice named "once"
			// must not be picked by a command's choice word.
			err = fmt.Errorf("%s is a question, not a command approval: answer it with `herald answer %s`", req.Key, req.Key)
		}
		if err == nil {
			err = s.inbox.AnswerConfirmed(actx, key, req.Choice, surface, approval.Confirmed{Always: req.ConfirmAlways, Hidden: req.ConfirmHidden})
		}
		if err != nil {
			return ControlResponse{Error: err.Error()}
		}
		r, _ := s.inbox.Get(key)
		return ControlResponse{Request: &r, Resolved: r.State == approval.StateResolved}
	case "answer":
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		v := wire.NewSecret(req.Value)
		req.Value = nil
		key, err := s.resolveKey(req.Key)
		if err == nil {
			err = s.AnswerText(actx, key, v, surface)
		}
		v.Wipe()
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
	case opWindowCall, opWindowShow:
		return s.handleWindow(ctx, req)
	case "log":
		es, err := s.History(approval.Filter{Limit: req.Limit, Gateway: req.Gateway})
		if err != nil {
			return ControlResponse{Error: err.Error()}
		}
		return ControlResponse{Log: es}
	case "runs", "stop", "ask":
		return s.handleRunControl(ctx, req)
	case "follow", "take", "unfollow":
		// What `herald watch` types beside a running Herald (follow ID,
		// take ID, unfollow ID), as the window's Sessions panel does.
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var err error
		switch req.Op {
		case "follow":
			err = s.FollowSession(actx, req.Gateway, req.Session)
		case "take":
			err = s.TakeBack(actx, req.Gateway, req.Session)
		default:
			err = s.UnfollowSession(req.Gateway, req.Session)
		}
		if err != nil {
			return ControlResponse{Error: err.Error()}
		}
		return ControlResponse{}
	case "sessions":
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		v, err := s.StoredSessions(sctx, req.Gateway)
		if err != nil {
			return ControlResponse{Error: err.Error()}
		}
		return ControlResponse{Stored: &v}
	}
	return ControlResponse{Error: fmt.Sprintf("unknown operation %q", req.Op)}
}

// dialControl connects to the Herald serving path after checking that the
// socket and its folder are private to uid and that its server runs as uid.
func dialControl(ctx context.Context, path string, uid int) (net.Conn, error) {
	switch err := checkControlSocket(path, uid); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, ErrNoDaemon
	case errors.Is(err, ErrUnsafeControl):
		return nil, err
	case err != nil:
		if derr := checkControlDir(filepath.Dir(path), uid); derr != nil {
			return nil, derr
		}
		return nil, fmt.Errorf("cannot check the control socket %s: %v", path, err)
	}
	if err := checkControlDir(filepath.Dir(path), uid); err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // interrupted (Ctrl-C), not "no Herald"
		}
		return nil, ErrNoDaemon
	}
	if peer, err := peerUID(c); err != nil {
		c.Close()
		return nil, unsafef("cannot tell who serves the control socket %s (%v); not talking to it", path, err)
	} else if peer != uid {
		c.Close()
		return nil, unsafef("the control socket %s is served by another user (uid %d, you are %d), not by your Herald; nothing was sent. Remove it and start Herald again", path, peer, uid)
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	return c, nil
}

// Control sends one request to the Herald serving path. Before sending
// anything it checks that the socket and its folder are private to this
// user and that the process serving it runs as this user.
func Control(ctx context.Context, path string, req ControlRequest) (ControlResponse, error) {
	return control(ctx, path, req, os.Getuid())
}

func control(ctx context.Context, path string, req ControlRequest, uid int) (ControlResponse, error) {
	c, err := dialControl(ctx, path, uid)
	if err != nil {
		return ControlResponse{}, err
	}
	defer c.Close()
	// Ctrl-C (ctx) ends the wait for Herald's answer, which can be long
	// (a stop or an approval waits for the gateway's confirmation).
	defer context.AfterFunc(ctx, func() { c.Close() })()
	// Long lists come in chunks (a Herald that predates them answers in
	// one line, without More).
	req.Chunked = true
	if err := json.NewEncoder(c).Encode(req); err != nil {
		if ctx.Err() != nil {
			return ControlResponse{}, cutShort(ctx)
		}
		return ControlResponse{}, fmt.Errorf("talking to Herald failed: %v", err)
	}
	var resp ControlResponse
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var pending []approval.Request
	var log []LogEntry
	for more := true; more; {
		if !sc.Scan() {
			if ctx.Err() != nil {
				return ControlResponse{}, cutShort(ctx)
			}
			if errors.Is(sc.Err(), bufio.ErrTooLong) {
				return ControlResponse{}, fmt.Errorf("Herald's answer has a line over 16 MiB, more than this command reads; update this command to the version of the running Herald: %v", sc.Err())
			}
			return ControlResponse{}, fmt.Errorf("Herald closed the control connection without answering: %v", sc.Err())
		}
		resp = ControlResponse{}
		if err := json.Unmarshal(sc.Bytes(), &resp); err != nil {
			return ControlResponse{}, fmt.Errorf("Herald's answer did not decode: %v", err)
		}
		pending, log = append(pending, resp.Pending...), append(log, resp.Log...)
		more = resp.More
	}
	resp.Pending, resp.Log, resp.More = pending, log, false
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}
