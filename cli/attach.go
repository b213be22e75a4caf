package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
	"github.com/herald-desktop/herald/service"
)

// Beside a running Herald (the desktop app, or another `herald watch`),
// `herald watch` with no server of its own attaches to it: it reads that
// Herald's event stream over the control socket (service.WatchControl),
// shows it as it shows its own, and answers through the socket as `herald
// approve` and `herald answer` do. The first notification is the running
// Herald's View: its gateways' states and what waits now.

// attachMask is what an attached watch reads.
const attachMask = service.WatchEvents | service.WatchApprovals | service.WatchNotices |
	service.WatchProblems | service.WatchStatus | service.WatchInitial

// attaches reports whether watch's flags leave it free to attach to a
// running Herald: none names a server, session, run, demo, history or
// follow policy of its own (--json and --control may be given).
func (f *watchFlags) attaches() bool {
	for name := range f.given {
		if name != "json" && name != "control" {
			return false
		}
	}
	return true
}

// tryAttach attaches to the Herald serving watch's control socket, if one
// does: ok is false when none runs, and watch connects on its own.
func tryAttach(e *env, f *watchFlags) (ok bool, err error) {
	stream, err := service.WatchControl(e.ctx, *f.ctl, attachMask, 0)
	switch {
	case errors.Is(err, service.ErrNoDaemon):
		return false, nil
	case err != nil && strings.Contains(err.Error(), "unknown operation"):
		return true, fmt.Errorf("the running Herald cannot be watched from here: it is an older version (%v); update it, or quit it and run `herald watch` again", err)
	case err != nil:
		return true, err
	}
	return true, attach(e, f, stream)
}

// attach shows the running Herald's stream and answers from the keyboard
// until that Herald stops (an error saying so), Ctrl-C or q.
func attach(e *env, f *watchFlags, stream *service.WatchStream) error {
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	defer stream.Close()
	out := &printer{w: e.stdout, json: *f.asJSON, stopped: func() bool { return ctx.Err() != nil }}
	first, err := stream.Next(ctx)
	if err != nil {
		return err
	}
	if first.View == nil {
		return errors.New("the running Herald did not send its state first; update this command to its version")
	}
	mirror := &remoteInbox{ctl: *f.ctl, out: out}
	keys := &keys{out: out, now: time.Now, in: mirror}
	fd := &feed{out: out, keys: keys, statuses: newAttachedStatus(out), mirror: mirror}
	mirror.feed = fd
	if !out.json {
		out.line("Attached to the running Herald (%s): its gateways' events, approvals and prompts. Answer them here as in the window; q leaves this terminal, Herald keeps running.", *f.ctl)
	}
	fd.showView(*first.View)
	ended := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := fd.run(ctx, stream); ctx.Err() == nil {
			ended <- err
		}
	}()
	err = answerKeys(ctx, e, out, remoteSessions{ctl: *f.ctl}, keys, ended)
	cancel()
	<-done
	return err
}

// showView shows the running Herald's state when watch attaches: each
// gateway's status, then what waits, as if it arrived now.
func (f *feed) showView(v service.View) {
	if len(v.Gateways) == 0 && !f.out.json {
		f.out.line("○ the running Herald has no gateway connected or configured: add one in its window")
	}
	for _, g := range v.Gateways {
		f.statuses.show(g)
	}
	for _, l := range v.Limits {
		f.out.problem("herald", errors.New(l))
	}
	if v.AuditError != "" {
		f.out.problem("herald", errors.New(v.AuditError))
	}
	f.mirror.reset(v.Approvals, true)
	for _, r := range v.Approvals {
		f.showWaiting(r)
	}
}

// showWaiting shows a request that was waiting before this terminal saw
// it arrive, with its state when it is no longer plainly pending.
func (f *feed) showWaiting(r approval.Request) {
	printApproval(f.out, f.keys, approval.Change{Kind: approval.ChangeArrived, At: r.ReceivedAt, Request: r})
	if r.State != approval.StatePending || r.Uncertain || r.LastError != "" {
		printApproval(f.out, f.keys, approval.Change{Kind: approval.ChangeUpdated, At: r.ReceivedAt, Request: r})
	}
}

// attachedStatus shows the running Herald's gateway statuses. A refusal
// that needs the user is shown, not an exit: it is that Herald's to fix,
// in its window.
type attachedStatus struct {
	p *statusPrinter

	mu      sync.Mutex
	refused map[string]string // gateway: the refusal shown last
}

func newAttachedStatus(out *printer) *attachedStatus {
	return &attachedStatus{p: newStatusPrinter(out), refused: map[string]string{}}
}

func (a *attachedStatus) show(s source.Status) {
	if !needsUser(s) {
		a.mu.Lock()
		delete(a.refused, s.Gateway)
		a.mu.Unlock()
		a.p.show(s)
		return
	}
	a.mu.Lock()
	repeat := a.refused[s.Gateway] == s.Err
	a.refused[s.Gateway] = s.Err
	a.mu.Unlock()
	if repeat {
		return
	}
	if a.p.out.json {
		a.p.out.record(jsonRecord{Type: "status", Status: &s})
		return
	}
	a.p.out.line("! %s: %s (change it in Herald's window: Edit on the gateway's card)", s.Gateway, approval.VisibleLine(s.Err))
}

// remoteInbox is the inbox of the Herald this terminal is attached to: the
// requests waiting there, kept from its event stream (so the keys see
// exactly what was shown, in the order it was), and answers sent over
// the control socket.
type remoteInbox struct {
	ctl  string
	out  *printer
	feed *feed // shows what a refresh finds that was not on screen

	mu    sync.Mutex
	reqs  map[string]mirrored
	n     uint64
	shown map[string]bool // keys the View showed, whose arrival may come again
}

type mirrored struct {
	r approval.Request
	n uint64 // arrival order among requests received at the same time
}

// reset replaces what waits with rs; fromView marks them as shown by the
// View, whose arrival the stream may repeat.
func (m *remoteInbox) reset(rs []approval.Request, fromView bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs, m.shown = map[string]mirrored{}, map[string]bool{}
	for _, r := range rs {
		m.putLocked(r)
		if fromView {
			m.shown[r.Key] = true
		}
	}
}

func (m *remoteInbox) putLocked(r approval.Request) {
	if !r.State.Live() {
		delete(m.reqs, r.Key)
		return
	}
	old, ok := m.reqs[r.Key]
	if !ok {
		m.n++
		old.n = m.n
	}
	m.reqs[r.Key] = mirrored{r: r, n: old.n}
}

// apply takes in one change of the running Herald's inbox. It reports
// whether the change is the arrival of a request the View showed already.
func (m *remoteInbox) apply(c approval.Change) (repeat bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shown[c.Request.Key] {
		delete(m.shown, c.Request.Key)
		repeat = c.Kind == approval.ChangeArrived
	}
	switch c.Kind {
	case approval.ChangeArrived, approval.ChangeUpdated:
		m.putLocked(c.Request)
	case approval.ChangeRemoved:
		delete(m.reqs, c.Request.Key)
	}
	return repeat
}

// refresh re-reads what waits after this terminal fell behind, and shows
// what it had not seen.
func (m *remoteInbox) refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := service.Control(ctx, m.ctl, service.ControlRequest{Op: "pending"})
	if err != nil {
		m.out.problem("herald", fmt.Errorf("cannot list what waits in the running Herald (%v): what this terminal shows may be incomplete", err))
		return
	}
	m.mu.Lock()
	var unseen []approval.Request
	for _, r := range resp.Pending {
		if _, ok := m.reqs[r.Key]; !ok {
			unseen = append(unseen, r)
		}
	}
	m.mu.Unlock()
	m.reset(resp.Pending, false)
	for _, r := range unseen {
		m.feed.showWaiting(r)
	}
}

// Pending is what waits in the running Herald, oldest first.
func (m *remoteInbox) Pending() []approval.Request {
	m.mu.Lock()
	all := make([]mirrored, 0, len(m.reqs))
	for _, r := range m.reqs {
		all = append(all, r)
	}
	m.mu.Unlock()
	slices.SortFunc(all, func(a, b mirrored) int {
		if c := a.r.ReceivedAt.Compare(b.r.ReceivedAt); c != 0 {
			return c
		}
		return int(a.n) - int(b.n)
	})
	out := make([]approval.Request, len(all))
	for i, r := range all {
		out[i] = r.r
	}
	return out
}

// find is the waiting request whose key or short id starts with id, when
// exactly one does.
func (m *remoteInbox) find(id string) (approval.Request, bool) {
	var hits []approval.Request
	for _, r := range m.Pending() {
		if r.Key == id || strings.HasPrefix(service.ShortKey(r.Key), id) {
			hits = append(hits, r)
		}
	}
	if len(hits) != 1 {
		return approval.Request{}, false
	}
	return hits[0], true
}

// Answer answers a command approval with a choice, or a question with one
// of its choices, in the running Herald (ops approve and answer, as
// `herald approve` and `herald answer` send them).
func (m *remoteInbox) Answer(ctx context.Context, id, choice, surface string, c approval.Confirmed) error {
	key := id
	r, found := m.find(id)
	if found {
		key = r.Key
	}
	req := service.ControlRequest{Op: "approve", Key: key, Choice: choice, ConfirmAlways: c.Always, ConfirmHidden: c.Hidden, Surface: surface}
	if found && r.Kind.IsPrompt() {
		req = service.ControlRequest{Op: "answer", Key: key, Value: []byte(choice), Surface: surface}
	}
	_, err := service.Control(ctx, m.ctl, req)
	return err
}

// AnswerText answers a question with text in the running Herald.
func (m *remoteInbox) AnswerText(ctx context.Context, id string, value *wire.Secret, surface string) error {
	defer value.Wipe()
	b := append([]byte(nil), value.Reveal()...)
	defer clear(b)
	_, err := service.Control(ctx, m.ctl, service.ControlRequest{Op: "answer", Key: id, Value: b, Surface: surface})
	return err
}

// remoteSessions are the running Herald's gateways' sessions, for the
// session commands typed in an attached watch.
type remoteSessions struct{ ctl string }

func (r remoteSessions) LiveSessions() ([]service.GatewaySessions, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := service.Control(ctx, r.ctl, service.ControlRequest{Op: "view"})
	if err != nil {
		return nil, err
	}
	if resp.View == nil {
		return nil, nil
	}
	return resp.View.Live, nil
}

func (r remoteSessions) FollowSession(ctx context.Context, gw, id string) error {
	return r.session(ctx, "follow", gw, id)
}

func (r remoteSessions) TakeBack(ctx context.Context, gw, id string) error {
	return r.session(ctx, "take", gw, id)
}

func (r remoteSessions) UnfollowSession(gw, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return r.session(ctx, "unfollow", gw, id)
}

func (r remoteSessions) session(ctx context.Context, op, gw, id string) error {
	_, err := service.Control(ctx, r.ctl, service.ControlRequest{Op: op, Gateway: gw, Session: id})
	return err
}
