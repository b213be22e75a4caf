package service

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/wire"
)

// Run control: stop a run from any surface. A WebSocket gateway's turn is
// interrupted with session.interrupt; an API-server run is stopped with
// POST /v1/runs/{id}/stop. Either way the result is reported only once the
// gateway confirmed that the turn ended (see
// backend/hermestest/NOTIFICATIONS.md for the wire).

// ConfirmWait is how long StopRun waits for the gateway to report the end
// of the turn before asking it directly.
const ConfirmWait = 10 * time.Second

// PollEvery is how often StopRun asks the gateway whether the turn ended
// while it waits (the end event may go to another client, or the run may
// not be followed).
const PollEvery = time.Second

// Transports of a run.
const (
	TransportWS  = "ws"
	TransportAPI = "api"
)

// RunRef is a run Herald can stop: a WebSocket session with a turn in
// progress, or an API-server run.
type RunRef struct {
	Gateway string `json:"gateway"`
	// ID is the live session id (ws) or the run id (api).
	ID        string `json:"id"`
	StoredID  string `json:"stored_id,omitempty"`
	Transport string `json:"transport"`
	Title     string `json:"title,omitempty"`
	Tool      string `json:"tool,omitempty"`
	Status    string `json:"status,omitempty"`
}

// Label is how surfaces name a run: "gateway/id: what it does".
func (r RunRef) Label() string {
	what := r.Tool
	if what == "" {
		what = r.Title
	}
	if what == "" {
		what = "running"
	}
	return r.Gateway + "/" + r.ID + ": " + what
}

// StopResult is what the gateway confirmed about a stop.
type StopResult struct {
	Gateway   string `json:"gateway"`
	ID        string `json:"id"`
	Transport string `json:"transport"`
	// Outcome is interrupted (a WebSocket turn ended by the interrupt),
	// cancelled (an API-server run stopped), completed or failed (the run
	// ended on its own first), or not-running (there was nothing to stop).
	Outcome string `json:"outcome"`
	// Message says it in words for people.
	Message string `json:"message"`
}

// Outcomes of a stop.
const (
	OutcomeInterrupted = "interrupted"
	OutcomeCancelled   = "cancelled"
	OutcomeNotRunning  = "not-running"
)

// ActiveRuns lists the runs Herald sees running, sorted by gateway and id.
func (s *Service) ActiveRuns() []RunRef {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []RunRef
	for _, v := range s.sessions {
		if !v.Running {
			continue
		}
		t := s.kindOf(v.Gateway)
		if t == "" {
			t = TransportWS
		}
		out = append(out, RunRef{Gateway: v.Gateway, ID: v.ID, StoredID: v.StoredID, Transport: t, Title: v.Title, Tool: v.Tool, Status: v.Status})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Gateway != out[j].Gateway {
			return out[i].Gateway < out[j].Gateway
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// resolveRun finds which gateway and run an id given by a user names:
// "gateway/id", or an id (or unique prefix; live or stored) of an active
// run, or of any session Herald knows when gw is given.
func (s *Service) resolveRun(gw, id string) (gwName, runID, transport string, err error) {
	id = strings.TrimSpace(id)
	if gw == "" {
		if i := strings.Index(id, "/"); i > 0 {
			gw, id = id[:i], id[i+1:]
		}
	}
	if id == "" {
		return "", "", "", errors.New("no run given: run `herald stop` without an id to list the active runs")
	}
	if gw != "" {
		t := s.transport(gw)
		if t == "" {
			return "", "", "", fmt.Errorf("no gateway or API server named %q is configured", gw)
		}
		s.mu.Lock()
		for _, v := range s.sessions {
			if v.Gateway == gw && v.StoredID == id && v.ID != id {
				id = v.ID // a stored id names its live session
			}
		}
		s.mu.Unlock()
		return gw, id, t, nil
	}
	var hits []RunRef
	for _, r := range s.ActiveRuns() {
		if strings.HasPrefix(r.ID, id) || (r.StoredID != "" && strings.HasPrefix(r.StoredID, id)) {
			hits = append(hits, r)
		}
	}
	switch len(hits) {
	case 0:
		return "", "", "", fmt.Errorf("no active run matches %q: run `herald stop` without an id to list them, or name the gateway (--gateway NAME or NAME/ID)", id)
	case 1:
		return hits[0].Gateway, hits[0].ID, hits[0].Transport, nil
	}
	return "", "", "", fmt.Errorf("%q matches %d active runs: give more of the id, or NAME/ID", id, len(hits))
}

// transport reports whether gw is a WebSocket gateway or an API server
// ("" when unknown).
func (s *Service) transport(gw string) string {
	if _, ok := s.gatewayClient(gw); ok {
		return TransportWS
	}
	if _, ok := s.apiClient(gw); ok {
		return TransportAPI
	}
	return ""
}

func (s *Service) runningNow(gw, id string) (running, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.sessions[gw+"/"+id]
	if v == nil {
		return false, false
	}
	return v.Running, true
}

// StopRun interrupts a WebSocket session's turn or stops an API-server
// run, and returns once the gateway confirmed the end of it. gw may be
// empty when id names one active run.
func (s *Service) StopRun(ctx context.Context, gw, id string) (StopResult, error) {
	gw, id, t, err := s.resolveRun(gw, id)
	if err != nil {
		return StopResult{}, err
	}
	if t == TransportAPI {
		return s.stopAPIRun(ctx, gw, id)
	}
	return s.interruptSession(ctx, gw, id)
}

func (s *Service) interruptSession(ctx context.Context, gw, id string) (StopResult, error) {
	c, ok := s.gatewayClient(gw)
	if !ok {
		return StopResult{}, fmt.Errorf("no gateway named %q is configured", gw)
	}
	res := StopResult{Gateway: gw, ID: id, Transport: TransportWS}
	wasRunning, known := s.runningNow(gw, id)
	ended, done := s.turns.watch(gw, id)
	defer done()
	var r struct {
		Status string `json:"status"`
	}
	if err := c.Call(ctx, "session.interrupt", map[string]any{"session_id": id}, &r); err != nil {
		return res, interruptError(gw, id, err)
	}
	if r.Status == "not_interrupted" {
		res.Outcome, res.Message = OutcomeNotRunning, fmt.Sprintf("%s/%s: the gateway says nothing was running to interrupt", gw, id)
		return res, nil
	}
	if known && !wasRunning {
		// Herald saw the session idle: ask instead of waiting for a
		// turn end that will not come.
		return s.confirmByStatus(ctx, c, res, false)
	}
	t := s.clk.NewTimer(ConfirmWait)
	defer t.Stop()
	tick := s.clk.NewTicker(PollEvery)
	defer tick.Stop()
	for {
		select {
		case ev := <-ended:
			res.Outcome = OutcomeInterrupted
			if cp, ok := ev.Data.(*wire.CompletePayload); ok && cp.Status != "" && cp.Status != OutcomeInterrupted {
				res.Outcome = cp.Status // the turn ended on its own first
			}
			res.Message = fmt.Sprintf("%s/%s: turn %s (confirmed by the gateway)", gw, id, res.Outcome)
			return res, nil
		case <-tick.C():
			if agentIdle(ctx, c, id) {
				res.Outcome = OutcomeInterrupted
				res.Message = fmt.Sprintf("%s/%s: the turn has ended (confirmed by session.status; its live events go to another client)", gw, id)
				return res, nil
			}
		case <-t.C():
			return s.confirmByStatus(ctx, c, res, true)
		case <-ctx.Done():
			return res, fmt.Errorf("%s/%s: the interrupt was sent but Herald stopped waiting before the gateway confirmed it (%v); check the session with `herald watch`", gw, id, ctx.Err())
		}
	}
}

// agentIdle reports whether session.status says the agent is not running.
func agentIdle(ctx context.Context, c *gateway.Client, id string) bool {
	var st struct {
		Output string `json:"output"`
	}
	return c.Call(ctx, "session.status", map[string]any{"session_id": id}, &st) == nil && strings.Contains(st.Output, "Agent Running: No")
}

// confirmByStatus asks session.status whether the agent still runs (the
// turn's events may go to another client on 0.18.2).
func (s *Service) confirmByStatus(ctx context.Context, c *gateway.Client, res StopResult, waited bool) (StopResult, error) {
	var st struct {
		Output string `json:"output"`
	}
	err := c.Call(ctx, "session.status", map[string]any{"session_id": res.ID}, &st)
	switch {
	case err != nil:
		return res, fmt.Errorf("%s/%s: the interrupt was sent, but whether the turn ended is unknown: asking the gateway failed (%v); check the session with `herald watch`", res.Gateway, res.ID, err)
	case strings.Contains(st.Output, "Agent Running: No"):
		if waited {
			res.Outcome = OutcomeInterrupted
			res.Message = fmt.Sprintf("%s/%s: the turn has ended (confirmed by session.status; its live events go to another client)", res.Gateway, res.ID)
		} else {
			res.Outcome = OutcomeNotRunning
			res.Message = fmt.Sprintf("%s/%s: nothing was running", res.Gateway, res.ID)
		}
		return res, nil
	case strings.Contains(st.Output, "Agent Running: Yes"):
		return res, fmt.Errorf("%s/%s: the gateway accepted the interrupt but the agent is still running after %s (a tool may not be interruptible); try again, or stop it on the Hermes host", res.Gateway, res.ID, ConfirmWait)
	}
	return res, fmt.Errorf("%s/%s: the interrupt was sent, but the gateway did not say whether the turn ended; check the session with `herald watch`", res.Gateway, res.ID)
}

func interruptError(gw, id string, err error) error {
	var re *wire.RPCError
	switch {
	case errors.Is(err, gateway.ErrNotConnected):
		return fmt.Errorf("%s is not connected, so nothing was sent; Herald reconnects by itself: try again once it shows connected", gw)
	case errors.As(err, &re) && re.Code == 4001:
		return fmt.Errorf("%s has no session %s (it ended or was reclaimed); nothing was interrupted", gw, id)
	}
	return fmt.Errorf("interrupting %s/%s failed: %v; try again", gw, id, err)
}

func (s *Service) stopAPIRun(ctx context.Context, gw, id string) (StopResult, error) {
	c, ok := s.apiClient(gw)
	if !ok {
		return StopResult{}, fmt.Errorf("no API server named %q is configured", gw)
	}
	res := StopResult{Gateway: gw, ID: id, Transport: TransportAPI}
	ended, done := s.turns.watch(gw, id)
	defer done()
	st, err := c.StopRun(ctx, id)
	switch {
	case errors.Is(err, apiserver.ErrNotFound):
		res.Outcome, res.Message = OutcomeNotRunning, fmt.Sprintf("%s/%s: the API server has no such run running (it ended or is unknown)", gw, id)
		return res, nil
	case err != nil:
		return res, fmt.Errorf("%v; nothing is known to have stopped: try again", err)
	}
	if terminalRunStatus(st.Status) {
		return apiOutcome(res, st.Status), nil
	}
	t := s.clk.NewTimer(ConfirmWait)
	defer t.Stop()
	tick := s.clk.NewTicker(PollEvery)
	defer tick.Stop()
	for {
		select {
		case ev := <-ended:
			status := strings.TrimPrefix(ev.Kind, "run.")
			if rs, ok := ev.Data.(*apiserver.RunStatus); ok {
				status = rs.Status
			}
			return apiOutcome(res, status), nil
		case <-tick.C():
			if got, err := c.GetRun(ctx, id); err == nil && terminalRunStatus(got.Status) {
				return apiOutcome(res, got.Status), nil
			}
			continue
		case <-t.C():
		case <-ctx.Done():
			return res, fmt.Errorf("%s/%s: the stop was sent but Herald stopped waiting before the server confirmed it (%v)", gw, id, ctx.Err())
		}
		break
	}
	got, err := c.GetRun(ctx, id)
	if err != nil {
		return res, fmt.Errorf("%s/%s: the stop was sent, but whether the run ended is unknown: %v", gw, id, err)
	}
	if terminalRunStatus(got.Status) {
		return apiOutcome(res, got.Status), nil
	}
	return res, fmt.Errorf("%s/%s: the API server is still %s after %s; try again, or stop it on the Hermes host", gw, id, got.Status, ConfirmWait)
}

func terminalRunStatus(st string) bool {
	switch st {
	case "completed", "failed", "cancelled", "interrupted":
		return true
	}
	return false
}

func apiOutcome(res StopResult, status string) StopResult {
	res.Outcome = status
	if status == "cancelled" {
		res.Message = fmt.Sprintf("%s/%s: run stopped (confirmed by the API server)", res.Gateway, res.ID)
	} else {
		res.Message = fmt.Sprintf("%s/%s: the run had already ended (%s)", res.Gateway, res.ID, status)
	}
	return res
}

// turnWaiters wakes StopRun when a session's turn or a run ends.
type turnWaiters struct {
	mu sync.Mutex
	m  map[string][]chan wire.Event
}

func (w *turnWaiters) watch(gw, id string) (<-chan wire.Event, func()) {
	k := gw + "/" + id
	ch := make(chan wire.Event, 1)
	w.mu.Lock()
	if w.m == nil {
		w.m = map[string][]chan wire.Event{}
	}
	w.m[k] = append(w.m[k], ch)
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		list := w.m[k]
		for i, c := range list {
			if c == ch {
				w.m[k] = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(w.m[k]) == 0 {
			delete(w.m, k)
		}
	}
}

// observe is fed every event; a turn or run end wakes its waiters.
func (w *turnWaiters) observe(ev wire.Event) {
	if !endsTurn(ev) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.m[ev.Gateway+"/"+ev.Session] {
		select {
		case ch <- ev:
		default:
		}
	}
}

func endsTurn(ev wire.Event) bool {
	if ev.Replayed {
		return false
	}
	switch ev.Kind {
	case wire.MessageComplete, wire.RunCompleted, wire.RunFailed, wire.RunCancelled, wire.RunInterrupted:
		return true
	case apiserver.RunStatusChanged:
		rs, ok := ev.Data.(*apiserver.RunStatus)
		return ok && terminalRunStatus(rs.Status)
	}
	return false
}

// handleRunControl serves the control socket's runs, stop and ask.
func (s *Service) handleRunControl(ctx context.Context, req ControlRequest) ControlResponse {
	switch req.Op {
	case "runs":
		return ControlResponse{Runs: s.ActiveRuns()}
	case "stop":
		sctx, cancel := context.WithTimeout(ctx, ConfirmWait+30*time.Second)
		defer cancel()
		r, err := s.StopRun(sctx, req.Gateway, req.Key)
		if err != nil {
			return ControlResponse{Error: err.Error()}
		}
		return ControlResponse{Stop: &r}
	}
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := s.Ask(actx, AskRequest{Gateway: req.Gateway, Session: req.Session, Text: req.Text})
	if err != nil {
		return ControlResponse{Error: err.Error()}
	}
	return ControlResponse{Ask: &r}
}
