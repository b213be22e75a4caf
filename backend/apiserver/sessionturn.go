package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// A turn sent to a stored session (POST /api/sessions/{id}/chat/stream).
//
// The answer is a server-sent event stream of that one turn: run.started
// (it names the turn's run id), message.started, assistant.delta, tool
// events, assistant.completed, run.completed and done, or error and done;
// every payload carries session_id, run_id, seq and ts, and each frame has
// an "event:" line (gateway/platforms/api_server.py
// _handle_session_chat_stream, 0.18.2 and 0.19.0). Herald follows the turn
// as a run of the client (runState, ModeSessionStream): its events are
// delivered like a run's, under the run id, with the session as the
// stored session.
//
// What the server can do with the turn is learned per connection, from
// what it does (never from its version):
//
//   - Hermes 0.18.2/0.19.0 keep no handle on such a turn: /v1/runs does
//     not know its run id (GET, stop and approval answer 404
//     run_not_found), no approval notifier is registered, so a dangerous
//     command is refused by Hermes without asking, and nothing stops the
//     turn (closing the stream does not either: the agent thread runs on).
//     Herald says so once (TurnControl).
//   - After PR #121769 (commit 583d5b407b) the run is known to /v1/runs:
//     the stream carries approval.request (answered on POST
//     /v1/runs/{run_id}/approval; no approval.responded follows on the
//     chat stream, the answer's 200 settles it), and POST
//     /v1/runs/{run_id}/stop ends it with run.cancelled and done.
//
// Herald never closes the stream to cancel a turn (closing it interrupts
// the turn on some builds and only detaches it on later ones,
// api_server_session_stream.py); it stops with stop or answers with deny.
// The stream is closed only when its link is dead (the idle watchdog, no
// ": keepalive" for IdleTimeout) or Herald stops following the server. It
// is never sent again: a second POST would be a second turn. If the
// stream breaks before the turn's end, its live events are reported
// interrupted (wire.Resync: approvals shown from it can no longer be
// proven the oldest) and the run's status is polled where /v1/runs knows
// it; where it does not, the turn's outcome is reported unknown.

// ModeSessionStream: the run is a turn sent to a stored session, followed
// on its chat stream.
const ModeSessionStream = "session-stream"

// TurnControl is what the server can do with a turn sent to a session,
// as learned on this connection.
type TurnControl string

// Turn controls.
const (
	// TurnControlUnknown: no turn was sent to a session yet.
	TurnControlUnknown TurnControl = ""
	// TurnControlled: /v1/runs knows such turns (approvals, stop).
	TurnControlled TurnControl = "controlled"
	// TurnUncontrolled: /v1/runs does not know them (Hermes 0.18/0.19).
	TurnUncontrolled TurnControl = "uncontrolled"
)

// UncontrolledNote says, for people, what a turn sent on a session's chat
// stream means on a server whose such turns /v1/runs does not know.
const UncontrolledNote = "This API server cannot ask for your approval in a turn sent to a session, nor stop one: Hermes refuses a dangerous command in such a turn without asking, and the turn runs to its end. Start a new run instead when a command needs your approval."

// uncontrolledStop is why a turn on such a server cannot be stopped.
const uncontrolledStop = "this API server cannot stop a turn sent to a session (/v1/runs does not know it): it runs to its end on the Hermes host, and Herald keeps showing it; closing its stream would not stop it either"

// reasonTurnCut is why a session turn's live events were lost.
const reasonTurnCut = "the chat stream of a turn sent to a session broke before the turn ended, and it cannot be resumed (sending it again would be a second turn)"

// turnFirstEventTimeout bounds the wait for a turn's first event.
const turnFirstEventTimeout = callTimeout

// SessionTurn is a turn sent to a stored session.
type SessionTurn struct {
	// RunID is the turn's run id (run_…), SessionID the session's.
	RunID, SessionID string
	// Control is what the server can do with a turn on the session's
	// chat stream, as far as known on this connection.
	Control TurnControl
	// Via is how the turn was sent: ViaChatStream, or ViaRun (runturn.go)
	// where the chat stream cannot ask approvals or stop.
	Via string
	// HistorySent and HistoryStored count, for a turn sent as a run, the
	// messages sent as its history and those the session stores.
	HistorySent, HistoryStored int
}

// Note is what a surface says about the turn for people ("" when
// nothing).
func (t SessionTurn) Note() string {
	switch {
	case t.Via == ViaRun && t.HistorySent < t.HistoryStored:
		return fmt.Sprintf("Sent as a run with the session's last %d of %d stored messages as context (Herald sends at most %d messages, %d KiB of text); all of them stay stored in the session.", t.HistorySent, t.HistoryStored, MaxTurnHistoryMessages, MaxTurnHistoryBytes>>10)
	case t.Via == ViaRun:
		return ""
	case t.Control == TurnUncontrolled:
		return UncontrolledNote
	}
	return ""
}

// TurnControl is what the server can do with turns sent to a session, as
// learned on this connection.
func (c *Client) TurnControl() TurnControl {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turnCtl
}

func (c *Client) setTurnControl(tc TurnControl) {
	c.mu.Lock()
	changed := c.turnCtl != tc
	c.turnCtl = tc
	c.mu.Unlock()
	if changed {
		c.setStatus(func(s *Status) { s.SessionTurns = tc })
	}
}

// IsSessionTurn reports whether id is a turn Herald sent to a session.
func (c *Client) IsSessionTurn(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	rs := c.runs[id]
	return rs != nil && rs.sessionTurn
}

// turnStart is what the first event of a turn's stream said.
type turnStart struct {
	rs  *runState
	err error
}

// ChatSession sends text to a stored session as one turn on its chat
// stream and returns once the turn started (its run id known). The
// turn's events are then delivered while Run is active, like a run's. The
// prompt is sent once: only a failure to connect is retried. Run must be
// active: the stream belongs to it, not to ctx, which bounds only the
// wait for the turn to start.
func (c *Client) ChatSession(ctx context.Context, sessionID, text string) (SessionTurn, error) {
	sessionID = strings.TrimSpace(sessionID)
	switch {
	case sessionID == "":
		return SessionTurn{}, &ConfigError{Msg: "no session given: name the session to continue"}
	case strings.TrimSpace(text) == "":
		return SessionTurn{}, &ConfigError{Msg: "the prompt is empty: type what the agent should do"}
	}
	runCtx, ok := c.runContext(ctx)
	if !ok {
		return SessionTurn{}, ErrNotRunning
	}
	if c.TurnControl() == TurnUncontrolled {
		// The chat stream cannot ask approvals or stop here: a run can
		// (runturn.go). Its events come while Run is active, as a run's.
		c.wg.Done()
		return c.continueByRun(ctx, sessionID, text)
	}
	body, _ := json.Marshal(map[string]any{"message": text})
	// Newer servers recognise a retried start by its key
	// (api_server_session_stream.py session_run_key); Herald sends it
	// once, but says which start it is.
	hdr := http.Header{"Accept": {"text/event-stream"}, "Cache-Control": {"no-cache"}, "Idempotency-Key": {NewIdempotencyKey()}}
	path := sessionPath(sessionID, "/chat/stream")
	started := make(chan turnStart, 1)
	go func() {
		defer c.wg.Done()
		c.runTurn(runCtx, sessionID, path, body, hdr, started)
	}()
	t := c.clk.NewTimer(turnFirstEventTimeout)
	defer t.Stop()
	select {
	case st := <-started:
		if st.err != nil {
			return SessionTurn{}, st.err
		}
		turn := SessionTurn{RunID: st.rs.id, SessionID: sessionID, Control: c.learnTurnControl(ctx, st.rs), Via: ViaChatStream}
		c.log.Info("turn sent to a session", "session", sessionID, "run", turn.RunID, "control", turn.Control)
		return turn, nil
	case <-ctx.Done():
		return SessionTurn{}, fmt.Errorf("the prompt was sent to session %s, but Herald stopped waiting for its turn to start; its events still come here: %w", sessionID, ctx.Err())
	case <-t.C():
		return SessionTurn{}, fmt.Errorf("the prompt was sent to session %s, but its turn did not start within %s; its events still come here if it does", sessionID, turnFirstEventTimeout)
	}
}

// learnTurnControl asks /v1/runs about the turn's run once per
// connection, to learn whether the server controls session turns.
func (c *Client) learnTurnControl(ctx context.Context, rs *runState) TurnControl {
	if tc := c.TurnControl(); tc != TurnControlUnknown {
		return tc
	}
	_, err := c.getRun(ctx, rs.id, retryNever)
	var ae *APIError
	switch {
	case err == nil:
		c.setTurnControl(TurnControlled)
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		c.setTurnControl(TurnUncontrolled)
	}
	return c.TurnControl()
}

// runTurn sends the prompt, reads the turn's stream to its end, and then
// learns an unfinished turn's end by polling. The first event (or the
// failure before it) goes to started.
func (c *Client) runTurn(ctx context.Context, sessionID, path string, body []byte, hdr http.Header, started chan<- turnStart) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var resp *http.Response
	var err error
	var w source.Writes // whether the prompt went out (source.TraceWrites)
	for attempt := 0; ; attempt++ {
		w.Reset()
		resp, err = c.send(source.TraceWrites(sctx, &w), http.MethodPost, path, body, hdr)
		if err == nil || w.Wrote() || !isUnsent(err) || attempt >= c.cfg.MaxRetries || ctx.Err() != nil {
			break
		}
		if !c.sleep(ctx, c.delay(attempt, nil, 0), err.Error(), attempt+1) {
			break
		}
	}
	if err == nil && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		err = &APIError{Status: resp.StatusCode, Method: http.MethodPost, Path: path, Message: "answered " + resp.Header.Get("Content-Type") + " instead of an event stream"}
	}
	if err != nil {
		started <- turnStart{err: c.turnErr(sessionID, w.Wrote(), err)}
		return
	}
	defer resp.Body.Close()
	c.markOK()
	ar := c.watchIdle(sctx, cancel, resp.Body, "session "+sessionID)
	defer ar.stop()

	rs, err := c.readTurn(sctx, ar, sessionID, started)
	if rs == nil {
		if err == nil || err == io.EOF {
			err = errors.New("the chat stream ended before the turn started")
		}
		started <- turnStart{err: fmt.Errorf("the prompt was sent to session %s, but %v; whether a turn runs is unknown: look at the session before sending it again", sessionID, err)}
		return
	}
	if rs.terminal {
		c.finish(rs, "")
		return
	}
	if ctx.Err() != nil {
		return
	}
	c.log.Info("a session turn's stream broke before its end", "run", rs.id, "err", err)
	c.poll(ctx, rs, reasonTurnCut)
}

// turnErr says what a refused prompt means; wrote says whether it went
// out to the server.
func (c *Client) turnErr(sessionID string, wrote bool, err error) error {
	var ae *APIError
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		return sessionErr(sessionID, err)
	case errors.As(err, &ae) && ae.Status == http.StatusConflict && ae.Code == "run_already_active":
		return fmt.Errorf("session %s already has a turn running: wait for it to end, or stop it, then send the prompt again (%w)", sessionID, err)
	case wrote && !understood(err):
		return fmt.Errorf("the prompt may have reached session %s before the link failed; whether a turn runs is unknown: look at the session before sending it again (%w)", sessionID, err)
	}
	return fmt.Errorf("the prompt was not sent to session %s: %w", sessionID, err)
}

// sessionRun registers a session turn's run, followed by its stream.
func (c *Client) sessionRun(runID, sessionID string) *runState {
	c.mu.Lock()
	rs := c.runs[runID]
	if rs == nil || rs.terminal || rs.info.Mode == ModeDone {
		// (A run id seen before and ended is a new turn all the same.)
		rs = &runState{id: runID, info: RunInfo{ID: runID, Session: sessionID, Mode: ModeSessionStream}, seenApprovals: map[string]bool{}}
		c.runs[runID] = rs
	}
	rs.following, rs.sessionTurn, rs.storedTurn, rs.streams = true, true, true, 1
	if sessionID != runID {
		rs.stored = sessionID
	}
	s, seq := c.stampLocked()
	c.mu.Unlock()
	c.publish(s, seq)
	return rs
}

// readTurn reads a turn's stream until its end ("done") or a failure,
// delivering its events; the first one registers the run and goes to
// started.
func (c *Client) readTurn(ctx context.Context, r io.Reader, sessionID string, started chan<- turnStart) (*runState, error) {
	sr := NewSSEReader(r, c.cfg.MaxEventSize)
	norm := &Normalizer{Gateway: c.name, Session: sessionID, Now: c.clk.Now, AnswerByOrder: c.answerByOrder}
	var rs *runState
	var lastText, lastErr string
	for {
		se, err := sr.Next()
		if err != nil {
			if errors.Is(err, ErrEventTooLarge) {
				c.log.Warn("a session turn's stream sent an oversized event", "session", sessionID)
			}
			if err != io.EOF && ctx.Err() != nil {
				return rs, errors.New("the turn's chat stream went silent for longer than " + c.cfg.IdleTimeout.String())
			}
			return rs, err
		}
		if se.Type == "done" {
			if rs != nil && !rs.terminal {
				// 0.18.2/0.19.0 end a failed turn with error, then done.
				why := lastErr
				if why == "" {
					why = "the turn ended without saying how"
				}
				c.deliver(rs, c.synthEvent(rs, map[string]any{"event": RunFailed, "run_id": rs.id, "error": why, "synthesized": true}))
			}
			return rs, nil
		}
		ev, ok := norm.Event(se)
		if !ok {
			continue
		}
		if rs == nil {
			if ev.Session == "" {
				continue // nothing names the turn yet
			}
			rs = c.sessionRun(ev.Session, sessionID)
			started <- turnStart{rs: rs}
		}
		switch ev.Kind {
		case wire.MessageComplete:
			if p, ok := ev.Data.(*wire.CompletePayload); ok {
				lastText = p.Text
			}
		case wire.ErrorEvent:
			if p, ok := ev.Data.(*wire.ErrorPayload); ok {
				lastErr = p.Message
			}
		case RunCompleted:
			// The session stream's run.completed carries the turn's
			// messages, not its output: the answer is the completed
			// assistant message.
			if p, ok := ev.Data.(*RunOutcomePayload); ok && p.Output == "" && lastText != "" {
				p.Output = lastText
				ev.Payload = withField(ev.Payload, "output", lastText)
			}
		case wire.ApprovalRequest:
			c.setTurnControl(TurnControlled) // the stream asks: /v1/runs answers it
		}
		c.deliver(rs, ev)
	}
}

// withField returns a JSON object with key set to v.
func withField(payload json.RawMessage, key string, v any) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(payload, &obj) != nil || obj == nil {
		return payload
	}
	obj[key] = mustJSON(v)
	return mustJSON(obj)
}

// stopTurnRefused says why a session turn was not stopped when the stop
// answered 404; ok is false when id is not such a turn.
func (c *Client) stopTurnRefused(id string) (why string, ok bool) {
	c.mu.Lock()
	rs := c.runs[id]
	live := rs != nil && rs.sessionTurn && !rs.terminal && rs.info.Mode != ModeDone
	tc := c.turnCtl
	c.mu.Unlock()
	if !live || tc == TurnControlled {
		return "", false
	}
	return uncontrolledStop, true
}

// turnGone says how a followed session turn ended when /v1/runs does not
// know it.
func turnGone(id string) string {
	return "the chat stream of turn " + id + " broke before the turn ended, and this API server keeps no status of turns sent to a session, so how it ended is unknown: its reply, if any, is in the session's messages"
}

// runningTurns maps each stored session to the run of the turn Herald sent
// to it that is under way.
func (c *Client) runningTurns() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]string{}
	for _, rs := range c.runs {
		if rs.storedTurn && !rs.terminal && rs.info.Mode != ModeDone {
			m[rs.info.Session] = rs.id
		}
	}
	return m
}

// runContext waits (within ctx) for Run to be active and returns its
// context, with the client's wait group counting the caller in; ok is
// false if ctx ended first.
func (c *Client) runContext(ctx context.Context) (context.Context, bool) {
	for {
		c.mu.Lock()
		runCtx, running, started := c.runCtx, c.running, c.started
		if running {
			c.wg.Add(1)
		}
		c.mu.Unlock()
		if running {
			return runCtx, true
		}
		select {
		case <-started:
		case <-ctx.Done():
			return nil, false
		}
	}
}
