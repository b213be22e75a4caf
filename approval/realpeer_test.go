package approval

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermespeer"
	"github.com/herald-desktop/herald/backend/netfault"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Issue 16's two high findings, reproduced against the REAL Hermes 0.18.2
// gateway (../shared/hermes-peer; skipped with one line when it is
// absent). 0.18.2 answers approvals id-less, oldest first per session,
// and sends a session's events to one client only.

// realGuard bounds waits on the real server; it is a deadlock guard.
const realGuard = 60 * time.Second

// realHerald is Herald's inbox over a history file with a gateway client.
type realHerald struct {
	t      *testing.T
	c      *gateway.Client
	in     *Inbox
	st     *BoltStore
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	events  []wire.Event
	changed chan struct{}
}

func startRealHerald(t *testing.T, base, token, history string) *realHerald {
	t.Helper()
	st, err := OpenStore(history, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := &realHerald{t: t, st: st, done: make(chan struct{}), changed: make(chan struct{})}
	h.c, err = gateway.New(gateway.Config{Name: "lab", URL: base, Token: token, OnEvent: func(ev wire.Event) {
		h.in.Ingest(ev)
		h.mu.Lock()
		h.events = append(h.events, ev)
		h.poke()
		h.mu.Unlock()
	}, OnStatus: func(source.Status) { h.mu.Lock(); h.poke(); h.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	h.in = New(Options{Store: st, Answerers: func(string) (Answerer, bool) { return h.c, true },
		Notify: func(Change) { h.mu.Lock(); h.poke(); h.mu.Unlock() }})
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { defer close(h.done); _ = h.c.Run(ctx) }()
	h.wait("connected", func() bool { return h.c.Status().State == source.StateConnected })
	return h
}

// ownTurn starts a session and submits text in it: Herald's own turn
// (as herald ask or the quick prompt does).
func (h *realHerald) ownTurn(ctx context.Context, text string) gateway.SessionRef {
	h.t.Helper()
	ref, err := h.c.CreateSession(ctx, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.c.Call(ctx, "prompt.submit", map[string]any{"session_id": ref.ID, "text": text}, nil); err != nil {
		h.t.Fatal(err)
	}
	return ref
}

func (h *realHerald) poke() { close(h.changed); h.changed = make(chan struct{}) }

func (h *realHerald) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	<-h.done
	h.in.Close()
	if err := h.st.Close(); err != nil {
		h.t.Error(err)
	}
}

// wait re-checks cond at every change of the inbox, the client's status
// or its events.
func (h *realHerald) wait(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.NewTimer(realGuard)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		ch := h.changed
		h.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			h.mu.Lock()
			var kinds []string
			for _, ev := range h.events {
				kinds = append(kinds, ev.Kind)
			}
			h.mu.Unlock()
			for _, r := range h.in.Snapshot().Requests {
				h.t.Logf("inbox: %s %q %s %+v unbound=%q", r.Key, r.Command, r.State, r.Outcome, r.Unbound)
			}
			h.t.Fatalf("timed out waiting for %s; events %v", what, kinds)
		}
	}
}

func (h *realHerald) pending(cmd string) (Request, bool) {
	for _, r := range h.in.Pending() {
		if r.Command == cmd {
			return r, true
		}
	}
	return Request{}, false
}

func (h *realHerald) completed(session string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range h.events {
		if cp, ok := ev.Data.(*wire.CompletePayload); ok && ev.Kind == wire.MessageComplete && ev.Session == session {
			return cp.Text, true
		}
	}
	return "", false
}

func realPeer(t *testing.T) *hermespeer.Peer {
	t.Helper()
	return hermespeer.Start(t, hermespeer.WS, "0.18.2")
}

const (
	cmdA = "rm -rf ./A-build-cache"
	cmdB = "git push --force origin main"
)

// TestRealRestartNeverApprovesUnseen: A waits in Herald; while Herald is
// down another client denies A and the agent asks B there. After the
// restart, approving A must not be possible: 0.18.2 would apply it to B,
// which Herald never showed. The history must not say A was approved.
func TestRealRestartNeverApprovesUnseen(t *testing.T) {
	t.Parallel()
	p := realPeer(t)
	history := filepath.Join(t.TempDir(), "approvals.db")
	h := startRealHerald(t, p.Base, p.Secret, history)
	defer h.stop()
	ctx, cancel := context.WithTimeout(context.Background(), realGuard)
	defer cancel()
	ref := h.ownTurn(ctx, "approve-seq: "+cmdA+" || "+cmdB)
	h.wait("A in Herald", func() bool { _, ok := h.pending(cmdA); return ok })
	h.stop()

	// Another client takes the session, denies A, and gets B.
	other := startRealHerald(t, p.Base, p.Secret, filepath.Join(t.TempDir(), "other.db"))
	defer other.stop()
	if _, err := other.c.AttachSession(ctx, ref.StoredID); err != nil {
		t.Fatal(err)
	}
	if n, err := other.c.RespondApproval(ctx, ref.ID, "deny", ""); err != nil || n != 1 {
		t.Fatalf("the other client's deny of A: resolved %d, %v", n, err)
	}
	other.wait("B at the other client", func() bool { _, ok := other.pending(cmdB); return ok })
	other.stop()

	// Herald restarts, follows the session again, and offers A.
	h = startRealHerald(t, p.Base, p.Secret, history)
	defer h.stop()
	if _, err := h.c.AttachSession(ctx, ref.StoredID); err != nil {
		t.Fatal(err)
	}
	a, ok := h.pending(cmdA)
	if !ok {
		t.Fatal("A was not restored after the restart")
	}
	var ue *UnboundError
	if err := h.in.Answer(ctx, a.Key, ChoiceOnce, "test", false); !errors.As(err, &ue) {
		t.Fatalf("approving the restored A: %v, want an UnboundError (0.18.2 would approve B)", err)
	}
	// Deny is safe, wherever it lands: here it reaches B.
	if err := h.in.Answer(ctx, a.Key, ChoiceDeny, "test", false); err != nil {
		t.Fatal(err)
	}
	h.wait("the turn's end", func() bool { _, ok := h.completed(ref.ID); return ok })
	if text, _ := h.completed(ref.ID); strings.Contains(text, "approved: "+cmdB) {
		t.Fatalf("B, never shown, was approved: %q", text)
	}
	es, err := h.st.List(Filter{Key: a.Key})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Choice != "" && e.Choice != ChoiceDeny {
			t.Fatalf("the history records %q for A: %+v", e.Choice, e)
		}
	}
}

// TestRealCutAfterWriteIsUnknown: A and B wait together (parallel tool
// calls); Herald's answer to A reaches the gateway, which applies it, and
// the link drops before the reply. Herald must say the outcome is unknown
// and refuse a second answer: on 0.18.2 it would reach whichever waits
// first. (The answer is a deny: with two waiting at once Herald accepts
// only deny, see approval/order.go, "Two at once"; an allow's cut is
// TestCutAfterWriteIsUnknown's, on the fake.)
func TestRealCutAfterWriteIsUnknown(t *testing.T) {
	t.Parallel()
	p := realPeer(t)
	u, err := url.Parse(p.Base)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := netfault.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	h := startRealHerald(t, "http://"+proxy.Addr(), p.Secret, filepath.Join(t.TempDir(), "approvals.db"))
	defer h.stop()
	ctx, cancel := context.WithTimeout(context.Background(), realGuard)
	defer cancel()
	ref := h.ownTurn(ctx, "approve-par: "+cmdA+" || "+cmdB)
	h.wait("A and B in Herald", func() bool { return len(h.in.Pending()) == 2 })
	first := h.in.Pending()[0] // shown first

	proxy.HoldReplies()
	sent, _ := proxy.Forwarded()
	res := make(chan error, 1)
	go func() { res <- h.in.Answer(ctx, first.Key, ChoiceDeny, "test", false) }()
	// Once the answer's bytes went through, cut the link.
	deadline := time.NewTimer(realGuard)
	defer deadline.Stop()
	for {
		n, ch := proxy.Forwarded()
		if r, _ := h.in.Get(first.Key); n > sent && r.State == StateAnswering {
			break
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatal("the answer never went out")
		}
	}
	proxy.Cut()
	proxy.ReleaseReplies()
	var ue *UnknownOutcomeError
	if err := <-res; !errors.As(err, &ue) || strings.Contains(err.Error(), "try again") {
		t.Fatalf("answer cut after the write: %v, want an UnknownOutcomeError without a retry invitation", err)
	}
	if r, _ := h.in.Get(first.Key); r.State != StateSentUnknown {
		t.Fatalf("A after the cut: %s", r.State)
	}
	// Reconnected (0.18.2 cannot replay), nothing more is sent blind.
	h.wait("reconnected", func() bool { return h.c.Status().State == source.StateConnected && h.c.Status().Dials >= 2 })
	var second Request
	for _, r := range h.in.Pending() {
		if r.Key != first.Key {
			second = r
		}
	}
	var ae *AnsweredError
	if err := h.in.Answer(ctx, first.Key, ChoiceOnce, "test", false); !errors.As(err, &ae) || !ae.Unknown {
		t.Fatalf("retrying A: %v, want refused (unknown outcome)", err)
	}
	if err := h.in.Answer(ctx, second.Key, ChoiceOnce, "test", false); err == nil {
		t.Fatal("approving the other request after an unknown outcome was sent: 0.18.2 would apply it to whichever is oldest")
	}
	es, err := h.st.List(Filter{Key: first.Key})
	if err != nil {
		t.Fatal(err)
	}
	states := []State{}
	for _, e := range es {
		states = append(states, e.State)
	}
	if last := states[len(states)-1]; last != StateSentUnknown && last != StateOutcomeUnknown && last != StateResolved {
		t.Fatalf("history of A: %v, want it to end unknown or resolved", states)
	}
	// End the turn (an interrupt denies what still waits), so the server
	// stops cleanly.
	if err := h.c.Call(ctx, "session.interrupt", map[string]any{"session_id": ref.ID}, nil); err != nil {
		t.Fatal(err)
	}
	h.wait("the turn's end", func() bool { _, ok := h.completed(ref.ID); return ok })
}

// TestRealOwnTurnDenyThenAllow is issue 28's bug, on the REAL 0.18.2 and
// 0.19.0 gateways: in Herald's own turn, the agent asks two approvals (at
// once, or one after the other); the user denies the first shown and
// allows the one left. Herald's own confirmed deny is not an answer given
// elsewhere, so the one left stays bound, and the gateway applies each
// answer to its own command (the stub's message.complete says so, one
// line per command). Two at once accept only deny (approval/order.go, "Two
// at once"): both versions queue an approval and announce it in two
// steps, so the deny may reach the other one; the deny's tool.complete
// says which, and only then is the one left approvable.
func TestRealOwnTurnDenyThenAllow(t *testing.T) {
	t.Parallel()
	for _, version := range hermespeer.Versions {
		for _, task := range []string{"approve-par", "approve-seq"} {
			t.Run(version+"/"+task, func(t *testing.T) {
				t.Parallel()
				p := hermespeer.Start(t, hermespeer.WS, version)
				h := startRealHerald(t, p.Base, p.Secret, filepath.Join(t.TempDir(), "approvals.db"))
				defer h.stop()
				ctx, cancel := context.WithTimeout(context.Background(), realGuard)
				defer cancel()
				ref := h.ownTurn(ctx, task+": "+cmdA+" || "+cmdB)
				h.wait("the first approval in Herald", func() bool { return len(h.in.Pending()) > 0 })
				if task == "approve-par" {
					h.wait("both approvals in Herald", func() bool { return len(h.in.Pending()) == 2 })
					for _, r := range h.in.Pending() {
						var ue *UnboundError
						if !slices.Equal(r.Choices, []string{ChoiceDeny}) || !errors.As(h.in.Answer(ctx, r.Key, ChoiceOnce, "test", false), &ue) {
							t.Fatalf("%q is approvable while two wait at once: %v", r.Command, r.Choices)
						}
					}
				}
				first := h.in.Pending()[0] // shown first
				var ce *CrowdedDenyError
				if err := h.in.Answer(ctx, first.Key, ChoiceDeny, "test", false); err != nil && !(task == "approve-par" && errors.As(err, &ce)) {
					t.Fatalf("denying %q: %v", first.Command, err)
				}
				// The deny's tool.complete (BLOCKED: denied) says which
				// approval it reached: let it arrive before allowing.
				var denied string
				h.wait("the deny's tool.complete", func() bool { denied = h.deniedCommand(ref.ID); return denied != "" })
				if denied != first.Command {
					t.Logf("the gateway announced the two approvals out of queue order: Herald's deny given on %q reached %q", first.Command, denied)
				}
				var left Request
				h.wait("the approval left, approvable", func() bool {
					for _, r := range h.in.Pending() {
						if r.Command != denied && r.State == StatePending && r.DenyOnly() == "" {
							left = r
							return true
						}
					}
					return false
				})
				if !left.Offers(ChoiceOnce) {
					t.Fatalf("the approval left offers %v", left.Choices)
				}
				if err := h.in.Answer(ctx, left.Key, ChoiceOnce, "test", false); err != nil {
					t.Fatalf("allowing %q after the deny reached %q: %v", left.Command, denied, err)
				}
				h.wait("the turn's end", func() bool { _, ok := h.completed(ref.ID); return ok })
				text, _ := h.completed(ref.ID)
				lines := strings.Split(text, "\n")
				if !slices.Contains(lines, "blocked: "+denied) || !slices.Contains(lines, "approved: "+left.Command) {
					t.Fatalf("the gateway's account of the turn: %q, want %q blocked and %q approved", text, denied, left.Command)
				}
				h.wait("both settled in Herald", func() bool { return len(h.in.Pending()) == 0 })
				for _, r := range h.in.Snapshot().Requests {
					want := map[string]string{denied: ChoiceDeny, left.Command: ChoiceOnce}[r.Command]
					if r.State != StateResolved || r.Outcome.Choice != want {
						t.Fatalf("Herald records %q %s %q (%s), the gateway applied %q", r.Command, r.State, r.Outcome.Choice, r.Outcome.Detail, want)
					}
				}
			})
		}
	}
}

// deniedCommand is the command of the session's first tool.complete that
// says it was denied ("" before one arrived).
func (h *realHerald) deniedCommand(session string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range h.events {
		tc, ok := ev.Data.(*wire.ToolCompletePayload)
		if !ok || ev.Kind != wire.ToolComplete || ev.Session != session || !strings.Contains(string(tc.Result), "denied") {
			continue
		}
		var args struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(tc.Args, &args)
		return args.Command
	}
	return ""
}
