package service

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/backend/source"
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
	// Name is its one name (SessionNames).
	Name string `json:"name,omitempty"`
}

// Label is how surfaces name a run: "gateway · name: what it does".
func (r RunRef) Label() string { return r.Gateway + " · " + r.Name + ": " + RunDoing(r.Tool, r.Title) }

// RunDoing is what surfaces say a run does: its tool running now, else
// its title, else "running".
func RunDoing(tool, title string) string {
	switch {
	case tool != "":
		return tool
	case title != "":
		return title
	}
	return "running"
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
	OutcomeNotRunning  = source.OutcomeNotRunning
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
		if t == "" { // its gateway is gone: the default transport's
			d, _ := source.Lookup("")
			t = string(d.Kind)
		}
		out = append(out, RunRef{Gateway: v.Gateway, ID: v.ID, StoredID: v.StoredID, Transport: t, Title: v.Title, Tool: v.Tool, Status: v.Status, Name: v.Naming().Name()})
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
	gw, id = TypedID(gw, id)
	if id == "" {
		return "", "", "", errors.New("no run given: run `herald stop` without an id to list the active runs")
	}
	if gw != "" {
		t := s.transport(gw)
		if t == "" {
			return "", "", "", fmt.Errorf("no gateway or API server named %q is configured", gw)
		}
		id, err := s.ResolveConversation(gw, id)
		if err != nil {
			return "", "", "", err
		}
		return gw, id, t, nil
	}
	var hits []RunRef
	for _, r := range s.ActiveRuns() {
		if strings.HasPrefix(r.ID, id) || strings.HasPrefix(strings.TrimPrefix(r.ID, "run_"), id) || (r.StoredID != "" && strings.HasPrefix(r.StoredID, id)) {
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

// transport is the kind of the source gw if it takes prompts or stops
// runs ("" when unknown or when it does neither).
func (s *Service) transport(gw string) string {
	src, ok := s.Source(gw)
	if !ok {
		return ""
	}
	_, asks := src.(source.Asker)
	_, stops := src.(source.Stopper)
	if !asks && !stops {
		return ""
	}
	return string(src.Kind())
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
	src, _ := s.Source(gw)
	st, ok := src.(source.Stopper)
	if !ok {
		return StopResult{}, fmt.Errorf("%s cannot stop runs: stop it on the Hermes host", gw)
	}
	w := source.StopWait{Confirm: ConfirmWait, Poll: PollEvery, Clock: s.clk}
	w.Running, w.Known = s.runningNow(gw, id)
	ended, done := s.turns.watch(gw, id)
	defer done()
	w.Ended = ended
	r, err := st.Stop(ctx, id, w)
	// The transport says "gateway/id: …"; every surface names the run by
	// its one name instead (its id is in the result).
	if rest, ok := strings.CutPrefix(r.Message, gw+"/"+id+":"); ok {
		r.Message = gw + " · " + s.sessionTitle(gw, id, "") + ":" + rest
	}
	return StopResult{Gateway: gw, ID: id, Transport: t, Outcome: r.Outcome, Message: r.Message}, err
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
	case wire.RunStatusChanged:
		rs, ok := ev.Data.(wire.RunState)
		return ok && rs.Terminal()
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
