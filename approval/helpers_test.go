package approval

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/wire"
)

// The gateway client is the production Answerer.
var _ Answerer = (*gateway.Client)(nil)

// guard bounds waits on channels; it is a deadlock guard, not a timing
// assumption.
const guard = 10 * time.Second

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// sent is one answer a fake Answerer received.
type sent struct {
	method, session, choice, requestID string
}

// fakeAnswerer records answers and replies as configured. If during is
// set it runs inside the send, before the reply.
type fakeAnswerer struct {
	mu       sync.Mutex
	calls    []sent
	resolved int
	err      error
	during   func()
}

func (f *fakeAnswerer) record(s sent) (int, error) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	resolved, err, during := f.resolved, f.err, f.during
	f.mu.Unlock()
	if during != nil {
		during()
	}
	return resolved, err
}

func (f *fakeAnswerer) RespondApproval(_ context.Context, sessionID, choice, requestID string) (int, error) {
	return f.record(sent{"approval.respond", sessionID, choice, requestID})
}

func (f *fakeAnswerer) RespondServerRequest(_ context.Context, requestID, choice string) error {
	_, err := f.record(sent{"response", "", choice, requestID})
	return err
}

func (f *fakeAnswerer) sent() []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sent(nil), f.calls...)
}

func (f *fakeAnswerer) set(resolved int, err error, during func()) {
	f.mu.Lock()
	f.resolved, f.err, f.during = resolved, err, during
	f.mu.Unlock()
}

// fixture is an inbox on a fake clock with one fake Answerer per gateway
// "g1" and "g2" and a log of changes.
type fixture struct {
	clk     *clock.Fake
	in      *Inbox
	ans     map[string]*fakeAnswerer
	store   *MemoryStore
	changes chan Change
}

func newFixture(t testing.TB, tweak func(*Options)) *fixture {
	t.Helper()
	f := &fixture{
		clk:     clock.NewFake(t0),
		ans:     map[string]*fakeAnswerer{"g1": {resolved: 1}, "g2": {resolved: 1}},
		store:   NewMemoryStore(),
		changes: make(chan Change, 1000),
	}
	opt := Options{
		Clock: f.clk,
		Store: f.store,
		Answerers: func(gw string) (Answerer, bool) {
			a, ok := f.ans[gw]
			return a, ok
		},
		Notify: func(c Change) { f.changes <- c },
		fault:  func(why string) { t.Errorf("approval machine: %s", why) },
	}
	if tweak != nil {
		tweak(&opt)
	}
	f.in = New(opt)
	t.Cleanup(f.in.Close)
	return f
}

// waitChange waits for a change that matches.
func (f *fixture) waitChange(t *testing.T, what string, match func(Change) bool) Change {
	t.Helper()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for {
		select {
		case c := <-f.changes:
			if match(c) {
				return c
			}
		case <-timer.C:
			t.Fatalf("no change: %s", what)
		}
	}
}

func (f *fixture) get(t *testing.T, key string) Request {
	t.Helper()
	r, ok := f.in.Get(key)
	if !ok {
		t.Fatalf("request %s not in the inbox", key)
	}
	return r
}

// only returns the single request in the inbox.
func (f *fixture) only(t *testing.T) Request {
	t.Helper()
	rs := f.in.Snapshot().Requests
	if len(rs) != 1 {
		t.Fatalf("inbox holds %d requests, want 1: %+v", len(rs), rs)
	}
	return rs[0]
}

// event builds a decoded event the way the gateway client delivers it.
func event(gw, sid, kind string, at time.Time, payload any) wire.Event {
	ev := wire.Event{Gateway: gw, Session: sid, Kind: kind, ReceivedAt: at}
	if payload != nil {
		ev.Payload, _ = json.Marshal(payload)
	}
	_ = ev.DecodeData()
	return ev
}

// legacy is a 0.18.2 approval.request.
func legacy(gw, sid, cmd string, at time.Time) wire.Event {
	return event(gw, sid, wire.ApprovalRequest, at, map[string]any{
		"command": cmd, "description": "dangerous command", "pattern_key": "p", "pattern_keys": []string{"p"},
		"allow_permanent": true, "choices": knownChoices,
	})
}

// srq is a server-request approval with id.
func srq(gw, sid, id, cmd string, at time.Time) wire.Event {
	ev := event(gw, sid, wire.ApprovalServerRequest, at, map[string]any{
		"session_id": sid, "command": cmd, "description": "dangerous command", "request_id": "q-" + id,
		"expires_at": 1234.5, "choices": knownChoices,
	})
	ev.RequestID = id
	return ev
}

func cancel(gw, sid, id, reason string, at time.Time) wire.Event {
	ev := event(gw, sid, wire.RequestCancel, at, wire.CancelPayload{ID: id, Method: "approval", Reason: reason})
	ev.RequestID = id
	return ev
}

func toolDone(gw, sid, cmd, errText string, at time.Time) wire.Event {
	result := map[string]any{"output": "", "exit_code": 0}
	if errText != "" {
		result = map[string]any{"output": "", "exit_code": -1, "error": errText}
	}
	return event(gw, sid, wire.ToolComplete, at, map[string]any{"tool_id": "call_1", "name": "terminal", "args": map[string]any{"command": cmd}, "result": result})
}

func resync(gw, sid, reason string, at time.Time) wire.Event {
	return event(gw, sid, wire.Resync, at, wire.ResyncPayload{Reason: reason})
}

const (
	timedOut = "BLOCKED: Command timed out without user response. The user has NOT consented to this action. Silence is not consent."
	deniedBy = "BLOCKED: Command denied by user. The user has NOT consented to this action."
)

func withStored(ev wire.Event, stored string) wire.Event {
	ev.StoredSession = stored
	return ev
}
