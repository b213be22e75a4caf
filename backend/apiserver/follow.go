package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// Why live events can be lost, for people (RunInfo.Reason).
const (
	reasonSingleConsumer = "the API server serves one event stream per run and dropped it when the connection broke (Hermes 0.18.2 cannot resume); live events were interrupted, so Herald polls the run's status instead"
	reasonOtherReader    = "the run's event stream is not available (another client may be reading it: the API server serves one reader per run); Herald polls the run's status instead"
	reasonNoResume       = "the event stream dropped and the API server sends no event ids, so Herald reconnected without resuming: events from the gap may be missing or repeated"
	reasonStreamFailing  = "the run's event stream keeps failing; Herald polls the run's status instead"
	reasonNoStreams      = "the API server does not offer run event streams (run_events_sse is off); Herald polls the run's status, so only its state changes are shown"
)

// maxStreamAttempts bounds reconnects of one stream before polling.
const maxStreamAttempts = 8

// runState is one followed run. Its fields other than info are owned by
// the run's follower goroutine (and guarded by Client.mu where shared).
type runState struct {
	id   string
	info RunInfo

	following bool
	cancel    func() // stops the follower
	stored    string // Hermes session id, when it differs from the run id

	lastID      string
	lastNumeric uint64
	hasIDs      bool
	serverRetry time.Duration
	streams     int
	delivered   int
	terminal    bool

	// sessionTurn: a turn Herald sent to a stored session, followed on
	// its chat stream (sessionturn.go), never by /events.
	sessionTurn bool
	// storedTurn: a turn Herald sent to a stored session, on its chat
	// stream or as a run (runturn.go).
	storedTurn bool

	// pending counts approval requests delivered and not confirmed.
	pending int
	// seenApprovals holds request ids (or status timestamps) of approvals
	// already delivered, so polling does not repeat them.
	seenApprovals map[string]bool
	// synthApproval is set while a details-missing approval synthesized
	// from polled status is outstanding.
	synthApproval bool
	lastStatus    string
	lastEvent     string

	// unsure holds the request ids ("" when the server gave none) of
	// answers whose outcome is unknown, until the run's status was asked
	// (reconcile.go); reconciling is set while that runs, checks counts
	// its status checks.
	unsure      []string
	reconciling bool
	checks      int
}

// maxSeenApprovals bounds a run's seenApprovals: past it the set starts
// over, so a run that asks endless approvals cannot grow memory. A repeat
// delivered after that reaches the inbox, which knows it by its key.
const maxSeenApprovals = 4096

// seenKey is what seenApprovals keeps for key: itself, or a digest of a
// long one.
func seenKey(key string) string {
	if len(key) <= 64 {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + string(sum[:])
}

// markSeen records an approval as delivered. Caller holds c.mu.
func (rs *runState) markSeen(key string) {
	if len(rs.seenApprovals) >= maxSeenApprovals {
		clear(rs.seenApprovals)
	}
	rs.seenApprovals[seenKey(key)] = true
}

// storedOf returns the run's Hermes session id (when it differs).
func (c *Client) storedOf(rs *runState) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return rs.stored
}

func (c *Client) setStored(rs *runState, id string) {
	c.mu.Lock()
	if rs.stored == "" && id != rs.id {
		rs.stored = id
	}
	c.mu.Unlock()
}

// storedRun registers run runID, started with session_id sessionID,
// before it is followed: its events carry the session as their stored
// session (so the run bears the session's one name), and turn marks it a
// turn Herald sent to that session.
func (c *Client) storedRun(runID, sessionID string, turn bool) {
	c.mu.Lock()
	rs := c.runs[runID]
	if rs == nil {
		rs = &runState{id: runID, info: RunInfo{ID: runID, Mode: ModeStarting}, seenApprovals: map[string]bool{}}
		c.runs[runID] = rs
	}
	if sessionID != runID {
		rs.stored = sessionID
	}
	if turn {
		rs.storedTurn = true
		rs.info.Session = sessionID
	}
	c.mu.Unlock()
}

// Follow starts following a run's events (StartRun does it for the runs it
// starts). It is a no-op for a run already followed. Following begins when
// Run is active.
func (c *Client) Follow(runID string) {
	c.mu.Lock()
	rs := c.runs[runID]
	if rs == nil {
		rs = &runState{id: runID, info: RunInfo{ID: runID, Mode: ModeStarting}, seenApprovals: map[string]bool{}}
		c.runs[runID] = rs
	}
	if c.running {
		c.startFollowLocked(rs)
	}
	s, seq := c.stampLocked()
	c.mu.Unlock()
	c.publish(s, seq)
}

// Forget stops following a run and drops it from the status; its
// interrupted flag goes with it. The run itself goes on (see StopRun).
func (c *Client) Forget(runID string) {
	c.mu.Lock()
	if rs := c.runs[runID]; rs != nil && rs.cancel != nil {
		rs.cancel()
	}
	delete(c.runs, runID)
	c.mu.Unlock()
	c.setStatus(func(*Status) {})
}

func (c *Client) startFollowLocked(rs *runState) {
	if rs.following || rs.info.Mode == ModeDone {
		return
	}
	rs.following = true
	ctx, cancel := context.WithCancel(c.runCtx)
	rs.cancel = cancel
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cancel()
		c.follow(ctx, rs)
	}()
}

func (c *Client) current(rs *runState) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[rs.id] == rs
}

// awaitKey notes on the run that the key was refused with err and waits
// for a new one (wake); it reports false if ctx ended first.
func (c *Client) awaitKey(ctx context.Context, rs *runState, err error, wake <-chan struct{}) bool {
	c.setRun(rs, func(i *RunInfo) { i.Err = err.Error() })
	select {
	case <-ctx.Done():
		return false
	case <-wake:
		return true
	}
}

// follow streams a run's events until it ends, resuming or polling as the
// server allows.
func (c *Client) follow(ctx context.Context, rs *runState) {
	if rs.sessionTurn {
		// Its chat stream ended with the previous Run and cannot be
		// sent again (a second POST is a second turn).
		c.poll(ctx, rs, reasonTurnCut)
		return
	}
	if c.featureOff("run_events_sse") {
		c.poll(ctx, rs, reasonNoStreams)
		return
	}
	attempt := 0
	for ctx.Err() == nil && c.current(rs) {
		wake := c.wakeChan() // taken first: a SetKey during the request counts
		c.mu.Lock()
		before, opened := rs.delivered, rs.streams
		c.mu.Unlock()
		err := c.streamOnce(ctx, rs)
		if rs.terminal {
			c.finish(rs, "")
			return
		}
		if ctx.Err() != nil {
			return
		}
		c.mu.Lock()
		progressed := rs.delivered > before
		opened = rs.streams - opened
		resumable := rs.hasIDs || rs.serverRetry > 0
		c.mu.Unlock()
		if opened > 0 && !resumable {
			// A stream without event ids cannot be resumed. Hermes 0.18.2
			// serves one reader per run: subscribing again either finds
			// the run's stream gone (404) or, while the server has not
			// noticed the drop, splits the run's event queue between the
			// dead reader and the new one. Learn the outcome by polling.
			c.poll(ctx, rs, reasonSingleConsumer)
			return
		}
		if progressed {
			attempt = 0 // the stream worked for a while: start backing off anew
		}
		var ae *APIError
		isAPI := errors.As(err, &ae)
		switch {
		case isAPI && ae.Status == http.StatusNotFound:
			c.poll(ctx, rs, reasonSingleConsumer)
			return
		case isAPI && ae.Status == http.StatusUnauthorized:
			c.refused(err)
			if !c.awaitKey(ctx, rs, err, wake) {
				return
			}
			continue
		case isAPI && !ae.temporary():
			c.setRun(rs, func(i *RunInfo) { i.Err = err.Error() })
			c.poll(ctx, rs, reasonStreamFailing)
			return
		}
		if attempt >= maxStreamAttempts {
			c.poll(ctx, rs, reasonStreamFailing)
			return
		}
		why := "the run's event stream ended before the run did"
		if err != nil {
			why = err.Error()
		}
		d := c.delay(attempt, ae, rs.serverRetry)
		attempt++
		c.log.Info("run stream interrupted; reconnecting", "run", rs.id, "err", why, "in", d, "resume_from", rs.lastID)
		c.setRun(rs, func(i *RunInfo) { i.Mode = ModeResuming; i.Err = why })
		if !c.sleep(ctx, d, why, attempt) {
			return
		}
	}
}

// streamOnce reads one event stream of the run, until it ends, breaks or
// delivers the run's terminal event.
func (c *Client) streamOnce(ctx context.Context, rs *runState) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hdr := http.Header{"Accept": {"text/event-stream"}, "Cache-Control": {"no-cache"}}
	if rs.lastID != "" {
		hdr.Set("Last-Event-ID", rs.lastID)
	}
	resp, err := c.send(sctx, http.MethodGet, runPath(rs.id, "/events"), nil, hdr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "text/event-stream") {
		return &APIError{Status: resp.StatusCode, Method: http.MethodGet, Path: runPath(rs.id, "/events"), Message: "answered " + ct + " instead of an event stream"}
	}
	c.markOK()
	c.mu.Lock()
	resumed := rs.streams > 0
	rs.streams++
	delivered := rs.delivered
	c.mu.Unlock()
	if resumed && rs.lastID == "" && delivered > 0 {
		c.interrupted(rs, reasonNoResume)
	}
	c.setRun(rs, func(i *RunInfo) { i.Mode = ModeStream; i.Err = "" })

	ar := c.watchIdle(sctx, cancel, resp.Body, "run "+rs.id)
	defer ar.stop()

	sr := NewSSEReader(ar, c.cfg.MaxEventSize)
	norm := &Normalizer{Gateway: c.name, Run: rs.id, Session: c.storedOf(rs), Now: c.clk.Now, AnswerByOrder: c.answerByOrder}
	for {
		se, rerr := sr.Next()
		if rerr != nil {
			if d := sr.Retry(); d > 0 {
				rs.serverRetry = d
			}
			if errors.Is(rerr, ErrEventTooLarge) {
				c.log.Warn("run stream sent an oversized event", "run", rs.id)
			}
			if rerr == io.EOF {
				return nil
			}
			if ctx.Err() == nil && sctx.Err() != nil {
				return errors.New("the run's event stream went silent for longer than " + c.cfg.IdleTimeout.String())
			}
			return rerr
		}
		if se.Retry > 0 {
			rs.serverRetry = se.Retry
		}
		if se.HasID {
			if n := numericID(se.ID); n > 0 && n <= rs.lastNumeric {
				continue // replayed again after a resume: already delivered
			} else if n > 0 {
				rs.lastNumeric = n
			}
			c.mu.Lock()
			rs.lastID, rs.hasIDs = se.ID, true
			c.mu.Unlock()
		}
		ev, ok := norm.Event(se)
		if !ok {
			continue
		}
		if norm.Session != "" {
			c.setStored(rs, norm.Session)
		}
		c.deliver(rs, ev)
		if rs.terminal {
			return nil
		}
	}
}

// activityReader stamps the clock time of every successful read for the
// idle watchdog.
type activityReader struct {
	r    io.Reader
	clk  clock.Clock
	last atomic.Int64 // UnixNano of the last read that returned data
	// stop ends the watchdog and waits for it.
	stop func()
}

// watchIdle reads body through an activityReader and runs the idle
// watchdog on the clock: Hermes comments ": keepalive" every 30 s, so a
// longer silence means the link is dead, and cancel cuts the stream.
// Reads stamp the time themselves, so the watchdog never races the data
// it watches. Call the reader's stop when done.
func (c *Client) watchIdle(sctx context.Context, cancel func(), body io.Reader, what string) *activityReader {
	ar := &activityReader{r: body, clk: c.clk}
	ar.last.Store(c.clk.Now().UnixNano())
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		t := c.clk.NewTimer(c.cfg.IdleTimeout)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C():
				idle := c.clk.Now().Sub(time.Unix(0, ar.last.Load()))
				if idle < c.cfg.IdleTimeout {
					t.Reset(c.cfg.IdleTimeout - idle)
					continue
				}
				c.log.Info("stream silent too long; cutting it", "stream", what, "after", idle)
				cancel()
				return
			}
		}
	}()
	ar.stop = func() { cancel(); <-watchDone }
	return ar
}

func (a *activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.last.Store(a.clk.Now().UnixNano())
	}
	return n, err
}

// interrupted marks a run's live events as lost and tells consumers to
// refetch (wire.Resync), once per reason.
func (c *Client) interrupted(rs *runState, reason string) {
	c.mu.Lock()
	already := rs.info.Interrupted && rs.info.Reason == reason
	c.mu.Unlock()
	if already {
		return
	}
	c.log.Warn("live events of a run were interrupted", "run", rs.id, "reason", reason)
	c.setRun(rs, func(i *RunInfo) { i.Interrupted, i.Reason = true, reason })
	ev := wire.Event{
		Gateway:       c.name,
		Session:       rs.id,
		StoredSession: c.storedOf(rs),
		Kind:          wire.Resync,
		ReceivedAt:    c.clk.Now(),
		Payload:       mustJSON(wire.ResyncPayload{Reason: "no-replay"}),
		Data:          &wire.ResyncPayload{Reason: "no-replay"},
	}
	c.emit(ev)
}

// deliver records what an event says about its run and queues it.
func (c *Client) deliver(rs *runState, ev wire.Event) {
	c.mu.Lock()
	rs.delivered++
	rs.info.Events++
	if rs.lastID != "" {
		rs.info.LastEventID = rs.lastID
	}
	switch ev.Kind {
	case wire.ApprovalRequest:
		rs.pending++
		rs.info.Status = "waiting_for_approval"
		if a, ok := ev.Data.(*wire.ApprovalPayload); ok && a.RequestID != "" {
			rs.markSeen(a.RequestID)
		}
	case ApprovalResponded:
		n := 1
		if p, ok := ev.Data.(*ApprovalRespondedPayload); ok && p.Resolved > 0 {
			n = p.Resolved
		}
		rs.pending = max(0, rs.pending-n)
		if rs.pending == 0 {
			rs.synthApproval = false
		}
		rs.info.Status = "running"
	case RunCompleted, RunFailed, RunCancelled, RunInterrupted:
		rs.terminal = true
		rs.pending = 0
		rs.info.Status = ev.Kind[len("run."):]
	case RunStatusChanged:
	default:
		if rs.info.Status == "" || rs.info.Status == "started" || rs.info.Status == "queued" {
			rs.info.Status = "running"
		}
	}
	rs.info.PendingApprovals = rs.pending
	s, seq := c.stampLocked()
	q := c.out
	c.mu.Unlock()
	q.Push(ev)
	c.publish(s, seq)
}

// finish marks a run done.
func (c *Client) finish(rs *runState, errText string) {
	c.setRun(rs, func(i *RunInfo) {
		i.Mode = ModeDone
		i.NextPoll = time.Time{}
		if errText != "" {
			i.Err = errText
		} else {
			i.Err = ""
		}
	})
	c.mu.Lock()
	rs.following = false
	c.mu.Unlock()
}

// poll follows a run through GET /v1/runs/{id} when no stream can be had.
// Live events are reported interrupted (with reason) at once if a stream
// of the run was read; if none ever was, only once the status shows the
// run exists (an unknown run is not an interruption).
func (c *Client) poll(ctx context.Context, rs *runState, reason string) {
	c.mu.Lock()
	streamed := rs.streams > 0
	c.mu.Unlock()
	if !streamed && reason == reasonSingleConsumer {
		reason = reasonOtherReader
	}
	if streamed {
		c.interrupted(rs, reason)
		reason = ""
	}
	c.setRun(rs, func(i *RunInfo) { i.Mode = ModePolling })
	attempt := 0
	for ctx.Err() == nil && c.current(rs) {
		wake := c.wakeChan()
		st, err := c.getRun(ctx, rs.id, retryNever)
		d := c.cfg.PollInterval
		var ae *APIError
		isAPI := errors.As(err, &ae)
		switch {
		case err == nil:
			attempt = 0
			if reason != "" {
				c.interrupted(rs, reason)
				reason = ""
			}
			c.applyStatus(rs, st)
			if rs.terminal {
				c.finish(rs, "")
				return
			}
			c.setRun(rs, func(i *RunInfo) { i.Err = "" })
		case ctx.Err() != nil:
			return
		case isAPI && ae.Status == http.StatusNotFound:
			c.mu.Lock()
			seen := rs.streams > 0 || rs.delivered > 0
			c.mu.Unlock()
			if !seen {
				// Never seen: a mistyped id, or a run long gone. Nothing
				// of it was missed, so no "events may have been missed".
				msg := "the API server does not know run " + rs.id + ": check the id that POST /v1/runs returned (it starts with run_); a run that finished long ago, or belongs to another key, is not known either"
				if c.cfg.OnProblem != nil { // before finish: watchers of the run's end hear it first
					c.cfg.OnProblem(errors.New(msg))
				}
				c.finish(rs, msg)
				return
			}
			msg := "the API server does not know run " + rs.id + " (it finished and expired, the server restarted, or it belongs to another key); its outcome is unknown"
			if rs.sessionTurn {
				msg = turnGone(rs.id)
			}
			c.interrupted(rs, msg)
			c.finish(rs, msg)
			return
		case isAPI && ae.Status == http.StatusUnauthorized:
			if !c.awaitKey(ctx, rs, err, wake) {
				return
			}
			continue
		default:
			c.setRun(rs, func(i *RunInfo) { i.Err = err.Error() })
			if dd := c.delay(attempt, ae, 0); dd > d {
				d = dd
			}
			attempt++
		}
		t := c.clk.NewTimer(d)
		next := c.clk.Now().Add(d)
		c.setRun(rs, func(i *RunInfo) { i.NextPoll = next })
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		case <-wake:
		}
		t.Stop()
	}
}

// applyStatus turns a polled status into events: a RunStatusChanged when
// it changed, the pending approval when the stream that carried it was
// lost, and the terminal run event when the run ended.
func (c *Client) applyStatus(rs *runState, st RunStatus) {
	if st.SessionID != "" {
		c.setStored(rs, st.SessionID)
	}
	if st.Status != rs.lastStatus || st.LastEvent != rs.lastEvent {
		rs.lastStatus, rs.lastEvent = st.Status, st.LastEvent
		stc := st
		ev := wire.Event{
			Gateway:       c.name,
			Session:       rs.id,
			StoredSession: c.storedOf(rs),
			Kind:          RunStatusChanged,
			ReceivedAt:    c.clk.Now(),
			Payload:       st.Raw,
			Data:          &stc,
		}
		if len(ev.Payload) == 0 {
			ev.Payload = mustJSON(st)
		}
		c.deliver(rs, ev)
	}
	c.mu.Lock()
	if st.Status != "waiting_for_approval" {
		rs.pending, rs.synthApproval = 0, false
		rs.info.PendingApprovals = 0
	}
	rs.info.Status = st.Status
	pending, synthOut := rs.pending, rs.synthApproval
	c.mu.Unlock()

	if st.Status == "waiting_for_approval" {
		switch {
		case len(st.Approval) > 0 && string(st.Approval) != "null":
			n := Normalizer{Gateway: c.name, Run: rs.id, Session: c.storedOf(rs), Now: c.clk.Now, AnswerByOrder: c.answerByOrder}
			ev, ok := n.Event(SSEEvent{Type: wire.ApprovalRequest, Data: string(st.Approval)})
			if !ok {
				break
			}
			key := ev.RequestID
			if key == "" {
				key = "ts:" + string(jsonTimestamp(st.Approval))
			}
			c.mu.Lock()
			seen := rs.seenApprovals[seenKey(key)] || (ev.RequestID == "" && pending > 0)
			rs.markSeen(key)
			c.mu.Unlock()
			if !seen {
				c.deliver(rs, ev)
			}
		case pending == 0 && !synthOut:
			// 0.18.2 says only that an approval waits; what it is was in
			// the lost part of the stream. Only deny is safe: Herald never
			// approves a command it was not shown.
			c.mu.Lock()
			rs.synthApproval = true
			c.mu.Unlock()
			c.deliver(rs, c.synthEvent(rs, map[string]any{
				"event":           wire.ApprovalRequest,
				"run_id":          rs.id,
				"command":         "",
				"description":     "Hermes is waiting for an approval whose details were lost when the live event stream was interrupted; Herald cannot show the command, so it can only deny it here (review it in Hermes itself to approve it)",
				"choices":         []string{"deny"},
				"allow_permanent": false,
				"synthesized":     true,
				"details_missing": true,
			}))
		}
	}

	if st.Terminal() {
		payload := map[string]any{"event": "run." + st.Status, "run_id": rs.id, "synthesized": true}
		if st.Output != "" {
			payload["output"] = st.Output
		}
		if st.Error != "" {
			payload["error"] = st.Error
		}
		if st.Usage != nil {
			payload["usage"] = st.Usage
		}
		c.deliver(rs, c.synthEvent(rs, payload))
	}
}

func jsonTimestamp(raw []byte) []byte {
	var v struct {
		Timestamp any `json:"timestamp"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.Timestamp == nil {
		return raw
	}
	return mustJSON(v.Timestamp)
}
