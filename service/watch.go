package service

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// The event stream over the control socket. Op watch subscribes the
// connection to the bus with the request's mask (ControlRequest.Watch)
// and queue length, answers one empty line once the subscription is up,
// then writes each Notify as a line (ControlResponse.Notify) until the
// watcher hangs up or Herald stops. A watcher that reads slowly is
// treated as one in the process: its queue in Herald is bounded, drops
// its oldest entries when full, and the next line says how many were lost
// (Lagged, and a gap in Seq). Only the user's own processes get here (the
// control socket's checks: a private folder, peer credentials).
//
// `herald watch` beside a running Herald reads it (WatchAll and
// WatchInitial), and so does the window process (WatchWindow).

const opWatch = "watch"

// watchLineMax is the longest line a watcher reads: a View with every
// request the inbox's bounds let it hold.
const watchLineMax = 256 << 20

// ErrWatchEnded is what a watch stream's Next returns once the Herald
// serving it stopped.
var ErrWatchEnded = errors.New("the running Herald stopped: its event stream ended")

// serveWatch streams the bus to c (op watch); see above.
func (s *Service) serveWatch(ctx context.Context, c net.Conn, sc *bufio.Scanner, enc *json.Encoder, req ControlRequest) {
	mask := req.Watch
	switch {
	case mask&^watchKnown != 0 || mask&^WatchInitial == 0:
		enc.Encode(ControlResponse{Error: fmt.Sprintf("cannot watch %#x: this Herald knows the kinds %#x (is the watching program from another version?)", uint(mask), uint(watchKnown))})
		return
	case mask&WatchWindow != 0 && s.host() == nil:
		enc.Encode(ControlResponse{Error: errNoWindowHost.Error()})
		return
	}
	size := req.Queue
	if size <= 0 || size > DefaultQueue {
		size = DefaultQueue
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Ending the watch closes the connection, which also ends a write to
	// a watcher that stopped reading.
	defer context.AfterFunc(wctx, func() { c.Close() })()
	sub := s.Subscribe(mask, size)
	defer sub.Close()
	go func() {
		for sc.Scan() { // the watcher sends nothing more; EOF is goodbye
		}
		cancel()
	}()
	// The first line says the subscription is up: nothing published from
	// now on is missing from the stream.
	if enc.Encode(ControlResponse{}) != nil {
		return
	}
	for {
		n, err := sub.Next(wctx)
		if err != nil {
			return
		}
		if ev := n.Event; ev != nil && (ev.Session != "" || ev.StoredSession != "") {
			// Every surface names a session the same: so does a
			// watcher in another process (an attached `herald watch`).
			n.Name = s.SessionName(ev.Gateway, ev.Session, ev.StoredSession)
		}
		if enc.Encode(ControlResponse{Notify: &n}) != nil {
			return
		}
	}
}

// WatchStream is the event stream of the Herald serving a control socket
// (WatchControl): the same Notify values, in the same order, as a
// Subscription in that process gives.
type WatchStream struct {
	ctx  context.Context // WatchControl's
	c    net.Conn
	sc   *bufio.Scanner
	last uint64
	stop func() bool
}

// WatchControl subscribes to the events mask selects in the Herald
// serving path, with a queue of size entries there (<= 0: DefaultQueue).
// Before sending anything it checks the socket as Control does. It
// returns once the subscription is up: from then on nothing Herald
// publishes is missing from the stream (with WatchInitial, its first
// Notify is Herald's View). ctx ending ends the stream; so does Close.
func WatchControl(ctx context.Context, path string, mask Watch, size int) (*WatchStream, error) {
	c, err := dialControl(ctx, path, os.Getuid())
	if err != nil {
		return nil, err
	}
	w := &WatchStream{ctx: ctx, c: c, stop: context.AfterFunc(ctx, func() { c.Close() })}
	if err := json.NewEncoder(c).Encode(ControlRequest{Op: opWatch, Watch: mask, Queue: size}); err != nil {
		w.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("talking to Herald failed: %v", err)
	}
	w.sc = newScanner(c)
	resp, err := w.read(ctx)
	if err == nil && resp.Error != "" {
		err = errors.New(resp.Error)
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Next returns the next notification. A gap in Seq that Herald did not
// count (Lagged) is counted here, so Lagged always says what was lost.
// When ctx ends the stream ends too.
func (w *WatchStream) Next(ctx context.Context) (Notify, error) {
	defer context.AfterFunc(ctx, func() { w.c.Close() })()
	for {
		resp, err := w.read(ctx)
		switch {
		case err != nil:
			return Notify{}, err
		case resp.Error != "":
			return Notify{}, errors.New(resp.Error)
		case resp.Notify == nil:
			continue
		}
		n := *resp.Notify
		if gap := n.Seq - w.last - 1; n.Seq > w.last+1 && uint64(n.Lagged) < gap {
			n.Lagged = int(gap)
		}
		w.last = n.Seq
		return n, nil
	}
}

func newScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), watchLineMax)
	return sc
}

func (w *WatchStream) read(ctx context.Context) (ControlResponse, error) {
	if !w.sc.Scan() {
		switch {
		case ctx.Err() != nil:
			return ControlResponse{}, ctx.Err()
		case w.ctx.Err() != nil:
			return ControlResponse{}, w.ctx.Err()
		case errors.Is(w.sc.Err(), bufio.ErrTooLong):
			return ControlResponse{}, fmt.Errorf("Herald sent an event over %d MiB, more than this program reads; update it to the version of the running Herald: %v", watchLineMax>>20, w.sc.Err())
		}
		return ControlResponse{}, ErrWatchEnded
	}
	var resp ControlResponse
	if err := json.Unmarshal(w.sc.Bytes(), &resp); err != nil {
		return ControlResponse{}, fmt.Errorf("Herald's event did not decode: %v", err)
	}
	return resp, nil
}

// Close ends the stream.
func (w *WatchStream) Close() {
	w.stop()
	w.c.Close()
}

// notifyJSON is a Notify on the control socket: an event's typed payload
// travels beside it (wire.Event.Data is not marshalled), a problem's
// error as its text.
type notifyJSON struct {
	Seq       uint64           `json:"seq"`
	View      *View            `json:"view,omitempty"`
	Event     *wire.Event      `json:"event,omitempty"`
	EventData json.RawMessage  `json:"event_data,omitempty"`
	Name      string           `json:"name,omitempty"`
	Approval  *approval.Change `json:"approval,omitempty"`
	Notice    *SessionNotice   `json:"notice,omitempty"`
	Problem   *problemJSON     `json:"problem,omitempty"`
	Status    *source.Status   `json:"status,omitempty"`
	Window    *WindowEvent     `json:"window,omitempty"`
	Changed   bool             `json:"changed,omitempty"`
	Lagged    int              `json:"lagged,omitempty"`
}

type problemJSON struct {
	Source string `json:"source"`
	Error  string `json:"error"`
}

// MarshalJSON writes n for the control socket.
func (n Notify) MarshalJSON() ([]byte, error) {
	j := notifyJSON{Seq: n.Seq, View: n.View, Event: n.Event, Name: n.Name, Approval: n.Approval, Notice: n.Notice,
		Status: n.Status, Window: n.Window, Changed: n.Changed, Lagged: n.Lagged}
	if n.Event != nil && n.Event.Data != nil {
		b, err := json.Marshal(n.Event.Data)
		if err != nil {
			return nil, err
		}
		j.EventData = b
	}
	if n.Problem != nil {
		j.Problem = &problemJSON{Source: n.Problem.Source}
		if n.Problem.Err != nil {
			j.Problem.Error = n.Problem.Err.Error()
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a Notify that MarshalJSON wrote.
func (n *Notify) UnmarshalJSON(b []byte) error {
	var j notifyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*n = Notify{Seq: j.Seq, View: j.View, Event: j.Event, Name: j.Name, Approval: j.Approval, Notice: j.Notice,
		Status: j.Status, Window: j.Window, Changed: j.Changed, Lagged: j.Lagged}
	if n.Event != nil {
		// A payload that does not decode leaves Data nil, as on the wire.
		n.Event.DecodeDataFrom(j.EventData)
	}
	if j.Problem != nil {
		n.Problem = &Problem{Source: j.Problem.Source, Err: errors.New(j.Problem.Error)}
	}
	return nil
}
