package approval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
	"pgregory.net/rapid"
)

// TestNeverAutoApprove drives the inbox with random sequences of arrivals
// in both dialects, re-deliveries, resyncs, cancels, gateway-side endings,
// clock advances, dismissals and answers (alone or two surfaces at once)
// against Answerers that succeed, find nothing pending, fail, or see the
// request cancelled mid-send. It checks:
//
//  1. every send the Answerer receives carries exactly one Answer call
//     (no send without one, never two for one call), with that call's
//     choice, to the request that call moved to answering from pending;
//  2. at most one successful send per request;
//  3. "always" is never sent without confirmAlways, and no choice the
//     request does not offer is ever sent;
//  4. states only move along the life cycle: resolved only from
//     answering (or from sent-unknown, a deny among two approvals waiting
//     at once, once the gateway says which one it reached), sent-unknown
//     only for such a deny, and resolved, cancelled, expired and failed
//     are final;
//  5. every arrival stays findable by key until Keep removes it, and is
//     held once (re-deliveries never duplicate);
//  6. an Answer that returned nil left the request resolved with its
//     choice and surface;
//  7. no send-error token reaches LastError, Outcome or the audit log.
func TestNeverAutoApprove(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		m := newModel(rt)
		defer m.close(rt)
		rt.Repeat(m.actions())
	})
}

type callKey struct{}

// answerCall is one Answer call the model made.
type answerCall struct {
	key, choice, surface string
	confirm              bool
	mode                 string // what the Answerer does, one of sendModes
	sends                int
	// arrived, when set, is signalled once the call is in the send or has
	// returned without sending; the send then waits for gate.
	arrived chan<- struct{}
	gate    <-chan struct{}
}

// sendModes: the gateway takes the answer (ok), takes it after Herald's
// deadline (slow), has nothing pending (none), has nothing pending because
// the deadline passed (late), the send fails (fail), or the request is
// withdrawn while the answer is on its way (cancel).
var sendModes = []string{"ok", "slow", "none", "late", "fail", "cancel"}

const leak = "LEAKED-TOKEN"

type model struct {
	clk   *clock.Fake
	in    *Inbox
	store *MemoryStore

	arrivals int          // distinct arrivals ingested
	offered  []wire.Event // requests with ids, for re-delivery
	nextID   int

	mu         sync.Mutex
	violations []string
	successes  map[string]int
	states     map[string]State // last state notified, per key
	removed    int
	changed    chan struct{}
}

func newModel(rt *rapid.T) *model {
	m := &model{
		clk:       clock.NewFake(t0),
		store:     NewMemoryStore(),
		successes: map[string]int{},
		states:    map[string]State{},
		changed:   make(chan struct{}),
	}
	keep := rapid.SampledFrom([]time.Duration{10 * time.Minute, 1000 * time.Hour}).Draw(rt, "keep")
	m.in = New(Options{
		Clock:     m.clk,
		Store:     m.store,
		Keep:      keep,
		Answerers: func(gw string) (Answerer, bool) { return &propAnswerer{m: m, gw: gw}, gw != "g3" },
		Timeout: func(gw string) time.Duration {
			if gw == "g2" {
				return time.Minute
			}
			return 0
		},
		Notify: m.notified,
		fault:  func(why string) { m.violate("approval machine: %s", why) },
	})
	return m
}

func (m *model) violate(format string, args ...any) {
	m.mu.Lock()
	m.violations = append(m.violations, fmt.Sprintf(format, args...))
	m.mu.Unlock()
}

// allowed[from] lists the states a notified change may move to.
var allowed = map[State][]State{
	"":               {StatePending, StateFailed},
	StatePending:     {StatePending, StateAnswering, StateCancelled, StateExpired},
	StateAnswering:   {StateAnswering, StatePending, StateSentUnknown, StateResolved, StateCancelled, StateExpired},
	StateSentUnknown: {StateSentUnknown, StatePending, StateResolved, StateCancelled, StateExpired, StateOutcomeUnknown},
	StateResolved:    {StateResolved},
}

func (m *model) notified(c Change) {
	m.mu.Lock()
	defer m.mu.Unlock()
	defer func() { close(m.changed); m.changed = make(chan struct{}) }()
	key, prev := c.Request.Key, m.states[c.Request.Key]
	switch {
	case c.Kind == ChangeArrived && prev != "":
		m.violations = append(m.violations, "duplicate arrival of "+key)
	case c.Kind == ChangeRemoved:
		if prev.Live() {
			m.violations = append(m.violations, "removed a live request "+key)
		}
		m.removed++
		return
	case !slices.Contains(allowed[prev], c.Request.State):
		m.violations = append(m.violations, fmt.Sprintf("%s moved %q -> %s", key, prev, c.Request.State))
	case prev == StateAnswering && c.Request.State == StateSentUnknown && (c.Request.Outcome.Choice != ChoiceDeny || c.Request.Outcome.Detail != UnplacedDetail):
		// No send here drops the link: only a deny the gateway applied
		// among two approvals waiting at once has an unknown outcome.
		m.violations = append(m.violations, fmt.Sprintf("%s: %q sent, outcome unknown (%s)", key, c.Request.Outcome.Choice, c.Request.Outcome.Detail))
	}
	m.states[key] = c.Request.State
}

// propAnswerer checks every send against the Answer call in its context.
type propAnswerer struct {
	m  *model
	gw string
}

func (a *propAnswerer) send(ctx context.Context, method, session, choice, requestID string) (int, error) {
	m := a.m
	c, _ := ctx.Value(callKey{}).(*answerCall)
	if c == nil {
		m.violate("send of %q without an Answer call", choice)
		return 0, errors.New("unexpected")
	}
	m.mu.Lock()
	c.sends++
	sends := c.sends
	m.mu.Unlock()
	if c.arrived != nil {
		c.arrived <- struct{}{}
		<-c.gate
	}
	r, ok := m.in.Get(c.key)
	switch {
	case sends > 1:
		m.violate("Answer call %+v sent %d times", c, sends)
	case choice != c.choice:
		m.violate("sent %q for an Answer of %q", choice, c.choice)
	case choice == ChoiceAlways && !c.confirm:
		m.violate("sent always without confirmation")
	case !ok || r.State != StateAnswering || r.Outcome.Choice != choice || r.Outcome.Surface != c.surface:
		m.violate("sent %q for %s which is %+v", choice, c.key, r)
	case !r.Offers(choice):
		m.violate("sent %q which %s does not offer (%v)", choice, c.key, r.Choices)
	case r.Gateway != a.gw:
		m.violate("sent to %s for a request of %s", a.gw, r.Gateway)
	case r.Dialect == DialectServerRequest && (method != "response" || requestID != r.RequestID):
		m.violate("server request answered with %s %q", method, requestID)
	case r.Dialect == DialectEvent && (method != "approval.respond" || session != r.Session || requestID != r.QueueID):
		m.violate("event form answered with %s %q %q", method, session, requestID)
	}
	switch c.mode {
	case "slow", "late":
		m.clk.Advance(r.ExpiresAt.Sub(m.clk.Now()))
	}
	switch c.mode {
	case "fail":
		return 0, fmt.Errorf("write wss://gw/api/ws?token=%s: connection reset", leak)
	case "late":
		if r.Dialect == DialectServerRequest {
			return 0, errors.New("write: deadline exceeded")
		}
		return 0, nil
	case "none":
		if r.Dialect == DialectEvent {
			return 0, nil
		}
	case "cancel":
		if r.Dialect == DialectEvent {
			m.in.Ingest(event(r.Gateway, r.Session, wire.MessageComplete, m.clk.Now(), wire.CompletePayload{Status: "interrupted"}))
		} else {
			m.in.Ingest(cancel(r.Gateway, r.Session, r.RequestID, "resolved", m.clk.Now()))
		}
	}
	m.mu.Lock()
	m.successes[c.key]++
	if m.successes[c.key] > 1 {
		m.violations = append(m.violations, "second successful send for "+c.key)
	}
	m.mu.Unlock()
	return 1, nil
}

func (a *propAnswerer) RespondApproval(ctx context.Context, sessionID, choice, requestID string) (int, error) {
	return a.send(ctx, "approval.respond", sessionID, choice, requestID)
}

func (a *propAnswerer) RespondServerRequest(ctx context.Context, requestID, choice string) error {
	_, err := a.send(ctx, "response", "", choice, requestID)
	return err
}

var (
	genGateway = rapid.SampledFrom([]string{"g1", "g2", "g3"})
	genSession = rapid.SampledFrom([]string{"s1", "s2"})
	genCommand = rapid.SampledFrom([]string{"git reset --hard HEAD", "rm -rf ./build", "GITHUB_TOKEN=ghp_x git push"})
	genChoice  = rapid.SampledFrom(append(slices.Clone(knownChoices), "maybe"))
	genSurface = rapid.SampledFrom([]string{"tray", "window", "notification"})
	genFlag    = rapid.SampledFrom([]*bool{nil, new(bool), func() *bool { b := true; return &b }()})
)

func (m *model) approvalPayload(rt *rapid.T, sid string) map[string]any {
	p := map[string]any{"session_id": sid, "command": genCommand.Draw(rt, "cmd"), "description": "d"}
	if v := genFlag.Draw(rt, "allow_permanent"); v != nil {
		p["allow_permanent"] = *v
	}
	if v := genFlag.Draw(rt, "allow_session"); v != nil {
		p["allow_session"] = *v
	}
	if rapid.Bool().Draw(rt, "with choices") {
		p["choices"] = rapid.SliceOfDistinct(rapid.SampledFrom(knownChoices), rapid.ID).Draw(rt, "choices")
	}
	return p
}

func (m *model) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"arrive server request": func(rt *rapid.T) {
			gw, sid := genGateway.Draw(rt, "gw"), genSession.Draw(rt, "sid")
			m.nextID++
			p := m.approvalPayload(rt, sid)
			p["request_id"] = fmt.Sprintf("q%d", m.nextID)
			ev := event(gw, sid, wire.ApprovalServerRequest, m.clk.Now(), p)
			ev.RequestID = fmt.Sprintf("srq-%d", m.nextID)
			m.in.Ingest(ev)
			m.arrivals++
			m.offered = append(m.offered, ev)
		},
		"arrive event": func(rt *rapid.T) {
			gw, sid := genGateway.Draw(rt, "gw"), genSession.Draw(rt, "sid")
			p := m.approvalPayload(rt, sid)
			delete(p, "session_id") // as 0.18.2 sends it; the event names the session
			if rapid.Bool().Draw(rt, "with queue id") {
				m.nextID++
				p["request_id"] = fmt.Sprintf("q%d", m.nextID)
			}
			ev := event(gw, sid, wire.ApprovalRequest, m.clk.Now(), p)
			m.in.Ingest(ev)
			m.arrivals++
			if p["request_id"] != nil {
				m.offered = append(m.offered, ev)
			}
		},
		"re-deliver": func(rt *rapid.T) {
			// Only what the gateway may still be waiting for.
			var open []wire.Event
			for _, ev := range m.offered {
				if m.clk.Now().Before(ev.ReceivedAt.Add(m.in.timeoutFor(ev.Gateway))) {
					open = append(open, ev)
				}
			}
			if len(open) == 0 {
				rt.Skip("nothing the gateway still waits for")
			}
			ev := rapid.SampledFrom(open).Draw(rt, "event")
			ev.Replayed, ev.ReceivedAt = true, m.clk.Now()
			m.in.Ingest(ev)
		},
		"resync": func(rt *rapid.T) {
			reason := rapid.SampledFrom([]string{"epoch", "truncated", "no-replay", "new-runtime", "resume-failed", "replay-failed"}).Draw(rt, "reason")
			m.in.Ingest(resync(genGateway.Draw(rt, "gw"), genSession.Draw(rt, "sid"), reason, m.clk.Now()))
		},
		"request.cancel": func(rt *rapid.T) {
			if len(m.offered) == 0 {
				rt.Skip("no server request")
			}
			ev := rapid.SampledFrom(m.offered).Draw(rt, "request")
			reason := rapid.SampledFrom([]string{"timeout", "interrupted", "shutdown", "resolved", "session_closed", "not_pending_after_reconnect", "other"}).Draw(rt, "reason")
			m.in.Ingest(cancel(ev.Gateway, ev.Session, ev.RequestID, reason, m.clk.Now()))
		},
		"tool.complete": func(rt *rapid.T) {
			errText := rapid.SampledFrom([]string{"", timedOut, deniedBy, "BLOCKED (hardline): no"}).Draw(rt, "error")
			m.in.Ingest(toolDone(genGateway.Draw(rt, "gw"), genSession.Draw(rt, "sid"), genCommand.Draw(rt, "cmd"), errText, m.clk.Now()))
		},
		"message.complete": func(rt *rapid.T) {
			status := rapid.SampledFrom([]string{"complete", "interrupted", "error"}).Draw(rt, "status")
			m.in.Ingest(event(genGateway.Draw(rt, "gw"), genSession.Draw(rt, "sid"), wire.MessageComplete, m.clk.Now(), wire.CompletePayload{Status: status}))
		},
		"advance clock": func(rt *rapid.T) {
			m.clk.Advance(time.Duration(rapid.IntRange(0, 400).Draw(rt, "seconds")) * time.Second)
		},
		"dismiss": func(rt *rapid.T) {
			_ = m.in.Dismiss(m.drawKey(rt), genSurface.Draw(rt, "surface"))
		},
		"answer": func(rt *rapid.T) {
			c := m.drawCall(rt)
			before, known := m.in.Get(c.key)
			err := m.answer(c)
			switch {
			case err == nil && (!known || before.State != StatePending || !before.Offers(c.choice) || (c.choice == ChoiceAlways && !c.confirm)):
				rt.Fatalf("Answer %+v succeeded on %+v", c, before)
			}
			after, _ := m.in.Get(c.key)
			taken := c.mode == "ok" || c.mode == "slow" || (c.mode == "none" && after.Dialect == DialectServerRequest)
			// A deny among two approvals waiting at once may have reached
			// the other one (order.go, "Two at once"): taken, its outcome
			// is unknown (until the gateway says, or for good once its
			// deadline passed), or it waits again once the gateway said
			// the deny reached the other one.
			var ce *CrowdedDenyError
			crowded := errors.As(err, &ce)
			unplaced := ce != nil && ce.Other == "" && (after.State == StateSentUnknown || after.State == StateOutcomeUnknown)
			missed := ce != nil && ce.Other != "" && after.State == StatePending
			switch {
			case c.sends == 1 && !taken && after.State == StateResolved:
				rt.Fatalf("Answer %+v resolved although the gateway did not take it: %+v", c, after)
			case c.sends == 1 && taken && crowded && (c.choice != ChoiceDeny || !unplaced && !missed):
				rt.Fatalf("Answer %+v, a deny among two waiting at once, returned %v, and the request is %+v", c, err, after)
			case c.sends == 1 && taken && !crowded && after.State != StateResolved:
				rt.Fatalf("Answer %+v was taken by the gateway but the request is %+v", c, after)
			case c.sends == 1 && c.mode == "late" && after.State != StateExpired:
				rt.Fatalf("Answer %+v came too late but the request is %+v", c, after)
			}
		},
		"answer from two surfaces": func(rt *rapid.T) {
			// Both calls reach the inbox before either send completes.
			a, b := m.drawCall(rt), m.drawCall(rt)
			b.key = a.key
			arrived, gate := make(chan struct{}), make(chan struct{})
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i, c := range []*answerCall{a, b} {
				c.arrived, c.gate = arrived, gate
				wg.Go(func() {
					errs[i] = m.answer(c)
					m.mu.Lock()
					unsent := c.sends == 0
					m.mu.Unlock()
					if unsent {
						arrived <- struct{}{}
					}
				})
			}
			<-arrived
			<-arrived
			close(gate)
			wg.Wait()
			if errs[0] == nil && errs[1] == nil {
				rt.Fatalf("both surfaces' answers succeeded for %s", a.key)
			}
		},
		"": func(rt *rapid.T) { m.check(rt) },
	}
}

func (m *model) drawKey(rt *rapid.T) string {
	var keys []string
	for _, r := range m.in.Snapshot().Requests {
		keys = append(keys, r.Key)
	}
	if i := rapid.IntRange(0, len(keys)).Draw(rt, "key"); i < len(keys) {
		return keys[i]
	}
	return "g1/ev/s1/999"
}

func (m *model) drawCall(rt *rapid.T) *answerCall {
	return &answerCall{
		key:     m.drawKey(rt),
		choice:  genChoice.Draw(rt, "choice"),
		surface: genSurface.Draw(rt, "surface"),
		confirm: rapid.Bool().Draw(rt, "confirm always"),
		mode:    rapid.SampledFrom(sendModes).Draw(rt, "send"),
	}
}

func (m *model) answer(c *answerCall) error {
	ctx := context.WithValue(context.Background(), callKey{}, c)
	err := m.in.Answer(ctx, c.key, c.choice, c.surface, c.confirm)
	if err == nil {
		if r, _ := m.in.Get(c.key); r.State != StateResolved || r.Outcome.Choice != c.choice || r.Outcome.Surface != c.surface {
			m.violate("Answer %+v returned nil but the request is %+v", c, r)
		}
	}
	return err
}

func (m *model) check(rt *rapid.T) {
	s := m.in.Snapshot()
	m.mu.Lock()
	if len(m.violations) > 0 {
		defer m.mu.Unlock()
		rt.Fatalf("violations:\n%s", strings.Join(m.violations, "\n"))
	}
	m.mu.Unlock()
	for i, r := range s.Requests {
		if i > 0 && r.ReceivedAt.Before(s.Requests[i-1].ReceivedAt) {
			rt.Fatalf("snapshot out of order at %d", i)
		}
		if strings.Contains(fmt.Sprint(r.Outcome, r.LastError), leak) {
			rt.Fatalf("%s shows the token: %+v", r.Key, r)
		}
		if r.State == StateResolved && m.successOf(r.Key) != 1 {
			rt.Fatalf("%s resolved without exactly one successful send", r.Key)
		}
	}
	for _, r := range m.in.Pending() {
		if !r.State.Live() {
			rt.Fatalf("Pending lists %s in state %s", r.Key, r.State)
		}
	}
	// Every arrival is held once, or was removed after Keep. Removals may
	// still be on their way to Notify from the expiry goroutine.
	m.waitFor(rt, "arrivals accounted for", func() bool {
		m.mu.Lock()
		removed := m.removed
		m.mu.Unlock()
		return len(m.in.Snapshot().Requests)+removed == m.arrivals
	})
}

func (m *model) successOf(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.successes[key]
}

func (m *model) waitFor(rt *rapid.T, what string, cond func() bool) {
	deadline := time.NewTimer(guard)
	defer deadline.Stop()
	for {
		m.mu.Lock()
		ch := m.changed
		m.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			rt.Fatalf("timed out waiting: %s", what)
		}
	}
}

func (m *model) close(rt *rapid.T) {
	m.in.Close()
	m.check(rt)
	entries, _ := m.store.List(Filter{})
	for _, e := range entries {
		// Error text holds no credentials; the command is kept as sent
		// (evidence), its masked copy holds none.
		if strings.Contains(fmt.Sprintf("%+v", e), leak) || strings.Contains(e.MaskedCommand, "ghp_x") ||
			(strings.Contains(e.Command, "ghp_x") && e.MaskedCommand == "") {
			rt.Fatalf("audit log holds a secret: %+v", e)
		}
	}
}
