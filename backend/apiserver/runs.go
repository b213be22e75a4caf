package apiserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Message is one entry of a run's conversation history.
type Message struct {
	Role    string `json:"role"`    // user or assistant
	Content string `json:"content"` // the message text
}

// RunRequest is the body of POST /v1/runs.
type RunRequest struct {
	// Input is the user message (required).
	Input string
	// Instructions is an extra system prompt for this run.
	Instructions string
	// SessionID continues a Hermes session (history is loaded from it).
	SessionID string
	// Model overrides the model alias.
	Model string
	// ConversationHistory is prior history for stateless callers.
	ConversationHistory []Message
	// PreviousResponseID chains onto a stored Responses API response.
	PreviousResponseID string
	// Extra fields are merged into the body as-is.
	Extra map[string]any
	// IdempotencyKey identifies this logical start; retries reuse it so
	// the server starts one run however often the request is sent. Leave
	// it empty to have one generated per StartRun call; set it to carry
	// the same key across calls (a user pressing "retry").
	IdempotencyKey string
	// NoFollow starts the run without following its events.
	NoFollow bool
}

func (r RunRequest) body() map[string]any {
	b := map[string]any{}
	for k, v := range r.Extra {
		b[k] = v
	}
	b["input"] = r.Input
	if r.Instructions != "" {
		b["instructions"] = r.Instructions
	}
	if r.SessionID != "" {
		b["session_id"] = r.SessionID
	}
	if r.Model != "" {
		b["model"] = r.Model
	}
	if len(r.ConversationHistory) > 0 {
		b["conversation_history"] = r.ConversationHistory
	}
	if r.PreviousResponseID != "" {
		b["previous_response_id"] = r.PreviousResponseID
	}
	return b
}

// StartedRun is the answer to StartRun.
type StartedRun struct {
	// ID is the run id ("run_...").
	ID string `json:"run_id"`
	// Status is the admission status ("started", or the current status of
	// a replayed run).
	Status string `json:"status"`
	// Replayed is true when the server recognised the Idempotency-Key and
	// returned the run it had already started.
	Replayed bool `json:"replayed"`
	// IdempotencyKey is the key the start was sent with.
	IdempotencyKey string `json:"-"`
}

// NewIdempotencyKey returns a fresh random key for RunRequest.
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "herald-" + hex.EncodeToString(b[:])
}

// StartRun starts a run (POST /v1/runs) and, unless req.NoFollow, follows
// its events (delivered while Run is active). Failures where the request
// may have reached the server are retried with the same Idempotency-Key,
// so a retried start never starts two runs on a server that honours the
// key (see ServerInfo.Idempotency).
func (c *Client) StartRun(ctx context.Context, req RunRequest) (StartedRun, error) {
	return c.startRun(ctx, req, false)
}

// startRun is StartRun; turn marks the run a turn Herald sent to the
// stored session req.SessionID (runturn.go).
func (c *Client) startRun(ctx context.Context, req RunRequest, turn bool) (StartedRun, error) {
	if strings.TrimSpace(req.Input) == "" {
		return StartedRun{}, &ConfigError{Msg: "a run needs input: type what the agent should do"}
	}
	key := req.IdempotencyKey
	if key == "" {
		key = NewIdempotencyKey()
	}
	hdr := http.Header{"Idempotency-Key": {key}}
	policy := retryAmbiguous
	if !c.keysHonoured() {
		// A retried start that the server does not recognise would be a
		// second run (a second turn in a session): it is sent once, but
		// for a failure to connect; whether one that may have reached the
		// server started is unknown, and said so.
		policy = retryUnsent
		if turn {
			hdr = nil
		}
	}
	var r StartedRun
	var w source.Writes // whether the start went out (source.TraceWrites)
	h, err := c.call(source.TraceWrites(ctx, &w), http.MethodPost, "/v1/runs", req.body(), &r, hdr, policy)
	if err != nil {
		if policy != retryAmbiguous && w.Wrote() && !understood(err) {
			if turn {
				return StartedRun{}, &unsureStart{err}
			}
			return StartedRun{}, &unsureStart{fmt.Errorf("the run may have started before the link failed, and this API server does not say whether (it ignores Idempotency-Key): look at its runs before starting it again (%w)", err)}
		}
		return StartedRun{}, fmt.Errorf("starting the run failed: %w", err)
	}
	if r.ID == "" {
		return StartedRun{}, errors.New("the API server accepted the run but returned no run_id; is it a Hermes API server?")
	}
	if h.Get("Idempotency-Replayed") == "true" {
		r.Replayed = true
	}
	if hdr != nil {
		r.IdempotencyKey = key
	}
	c.log.Info("run started", "run", r.ID, "replayed", r.Replayed)
	if req.SessionID != "" {
		c.storedRun(r.ID, req.SessionID, turn)
	}
	if !req.NoFollow {
		c.Follow(r.ID)
	}
	return r, nil
}

// unsureStart is a start that may have reached the server before the
// link failed.
type unsureStart struct{ error }

func (e *unsureStart) Unwrap() error { return e.error }

// keysHonoured reports whether the last probe said the server honours
// Idempotency-Key on starts.
func (c *Client) keysHonoured() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.feat.Idempotency != nil && c.feat.Idempotency.Supported
}

// RunStatus is GET /v1/runs/{id}.
type RunStatus struct {
	Object string `json:"object"` // "hermes.run"
	RunID  string `json:"run_id"`
	// Status is queued, running, waiting_for_approval, stopping,
	// completed, failed, cancelled or (newer servers) interrupted.
	Status string `json:"status"`
	// CreatedAt and UpdatedAt are the server's Unix times in seconds.
	CreatedAt float64 `json:"created_at"`
	UpdatedAt float64 `json:"updated_at"`
	// SessionID is the Hermes session the run writes to (the run id
	// unless the start named one).
	SessionID string `json:"session_id,omitempty"`
	Model     string `json:"model,omitempty"`
	// LastEvent is the name of the last event the run emitted (absent
	// until the first one).
	LastEvent string `json:"last_event,omitempty"`
	Output    string `json:"output,omitempty"` // final answer (completed)
	Error     string `json:"error,omitempty"`  // why it failed (failed)
	Usage     *Usage `json:"usage,omitempty"`  // token accounting (completed)
	// Approval is the pending approval.request event while Status is
	// waiting_for_approval, on servers that include it (0.18.2 does not).
	Approval json.RawMessage `json:"approval,omitempty"`
	// Raw is the whole answer.
	Raw json.RawMessage `json:"-"`
}

// Terminal reports whether the run has ended.
func (s RunStatus) Terminal() bool {
	switch s.Status {
	case "completed", "failed", "cancelled", "interrupted":
		return true
	}
	return false
}

func runPath(runID, suffix string) string {
	return "/v1/runs/" + url.PathEscape(runID) + suffix
}

// GetRun returns a run's status (GET /v1/runs/{id}).
func (c *Client) GetRun(ctx context.Context, runID string) (RunStatus, error) {
	return c.getRun(ctx, runID, retryAmbiguous)
}

// checkRunWait bounds CheckRun: a typed id is judged within it, or
// followed unjudged.
const checkRunWait = 3 * time.Second

// ErrUnknownRun is CheckRun's error for a run the server does not know.
var ErrUnknownRun = errors.New("the API server does not know this run")

// unknownRunError says which run the server does not know, and what to do.
type unknownRunError struct{ id string }

func (e unknownRunError) Error() string {
	return "the API server does not know run " + e.id + ": check the id POST /v1/runs returned (it starts with run_); one that finished long ago, or belongs to another key, is not known either"
}

func (e unknownRunError) Is(target error) bool { return target == ErrUnknownRun }

// CheckRun asks the server once whether it knows run runID (GET
// /v1/runs/{id}): an error wrapping ErrUnknownRun when it answers 404, nil
// when it knows it or cannot say now (unreachable, a refused key: the
// follower reports those).
func (c *Client) CheckRun(ctx context.Context, runID string) error {
	ctx, cancel := context.WithTimeout(ctx, checkRunWait)
	defer cancel()
	_, err := c.getRun(ctx, runID, retryNever)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return unknownRunError{runID}
	}
	return nil
}

func (c *Client) getRun(ctx context.Context, runID string, policy retryPolicy) (RunStatus, error) {
	var raw json.RawMessage
	if _, err := c.call(ctx, http.MethodGet, runPath(runID, ""), nil, &raw, nil, policy); err != nil {
		return RunStatus{}, err
	}
	var st RunStatus
	if err := json.Unmarshal(raw, &st); err != nil {
		return RunStatus{}, fmt.Errorf("the status of run %s did not decode: %w", runID, err)
	}
	st.Raw = raw
	if st.RunID == "" {
		st.RunID = runID
	}
	return st, nil
}

// StopRun asks the server to interrupt a run (POST /v1/runs/{id}/stop).
// The answer is usually status "stopping"; run.cancelled follows on the
// event stream. Stopping a run that has already ended answers 404 on
// 0.18.2 (ErrNotFound) and the final status on newer servers.
func (c *Client) StopRun(ctx context.Context, runID string) (RunStatus, error) {
	var raw json.RawMessage
	if _, err := c.call(ctx, http.MethodPost, runPath(runID, "/stop"), struct{}{}, &raw, nil, retryAmbiguous); err != nil {
		return RunStatus{}, fmt.Errorf("stopping run %s failed: %w", runID, err)
	}
	var st RunStatus
	_ = json.Unmarshal(raw, &st)
	st.Raw = raw
	if st.RunID == "" {
		st.RunID = runID
	}
	return st, nil
}

// RespondApproval answers the pending approval of a run (POST
// /v1/runs/{id}/approval) with once, session, always or deny. requestID
// names the approval when the server gave one (newer servers; 0.18.2
// answers the oldest pending approval). If nothing is pending (answered
// elsewhere, expired, run ended) the error is an *ApprovalNotPendingError
// (errors.Is ErrApprovalNotPending) and nothing was approved. An answer is
// never sent twice: only failures where the server certainly did not act
// are retried. approval.responded on the run's stream confirms the answer.
func (c *Client) RespondApproval(ctx context.Context, runID, choice, requestID string) error {
	if err := source.CheckChoice(choice); err != nil {
		return err
	}
	body := map[string]any{"choice": choice}
	if requestID != "" {
		body["request_id"] = requestID
	}
	var r struct {
		Choice    string        `json:"choice"`
		Resolved  wire.Resolved `json:"resolved"`
		RequestID string        `json:"request_id"`
	}
	// The one answer path (source.AnswerOutcome): once written, an answer
	// that is not confirmed has an unknown outcome.
	var w source.Writes
	_, err := c.call(source.TraceWrites(ctx, &w), http.MethodPost, runPath(runID, "/approval"), body, &r, nil, retryUnsent)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusConflict && (ae.Code == "approval_not_pending" || ae.Code == "approval_not_active" || ae.Code == "") {
		code := ae.Code
		if code == "" {
			code = "approval_not_pending"
		}
		return &ApprovalNotPendingError{RunID: runID, Code: code, Message: ae.Message}
	}
	if err != nil {
		err = peer.AnswerOutcome(w.Wrote(), understood(err), err)
		if errors.Is(err, wire.ErrOutcomeUnknown) {
			c.reconcileLater(runID, requestID)
		}
		return fmt.Errorf("sending the approval answer for run %s failed: %w", runID, err)
	}
	if requestID != "" && r.RequestID == requestID && r.Resolved > 0 {
		c.honoured()
	}
	if r.Choice == "" {
		r.Choice = choice
	}
	if r.RequestID == "" {
		r.RequestID = requestID
	}
	c.answered(runID, r.Choice, int(r.Resolved), r.RequestID)
	return nil
}

// Binding answers by request_id.
//
// An id on an approval event is not proof that the answer endpoint uses
// it: hermes-desktop#904 (mid-August 2026, at 503d863f) reported a /v1/runs
// approval endpoint that ignored request_id and resolved the run's oldest
// pending approval, and Hermes 0.18.2/0.19.0 read no id at all
// (tools/approval.py resolve_gateway_approval pops the queue head). Where
// the endpoint honours it (api_server_runs.py@005b4b76
// _handle_run_approval: resolve_gateway_approval(..., request_id=...), a
// stale id 409 approval_not_pending), its 200 echoes the request_id it
// resolved; the endpoints that ignore it echo none. So Herald binds an
// answer by id only once this connection answered by an id and got that
// id back; until then approvals carrying an id are answerable only by
// order (wire.ApprovalPayload.AnswerByOrder: the inbox's oldest-first
// proof), and the id is still sent, which narrows the answer on a server
// that honours it.

// honoured records that the server applied an answer to the request_id it
// named.
func (c *Client) honoured() {
	c.mu.Lock()
	first := !c.idsHonoured
	c.idsHonoured = true
	c.mu.Unlock()
	if first {
		c.log.Info("the API server honours request_id on approval answers; binding answers by id from now on")
	}
}

// answerByOrder reports whether approvals that carry a request_id must
// still be answered by order: this connection has not shown that the
// server honours the id.
func (c *Client) answerByOrder() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.idsHonoured
}

// understood reports whether a failed answer's error is a reply Herald
// read and understood as not acted on (source.NotActed: a refusal, a
// redirect, "not now"), or a refusal of Herald's own: anything else after
// the write leaves the outcome unknown.
func understood(err error) bool {
	var ae *APIError
	var ce *ConfigError
	switch {
	case errors.As(err, &ae):
		return source.NotActed(ae.Status)
	case errors.As(err, &ce), source.IsRedirect(err):
		return true
	}
	return false
}

// OutcomeUnknownError is an approval answer's error when the request may
// have reached the server before the link failed: the server may have
// acted on it. It matches wire.ErrOutcomeUnknown.
type OutcomeUnknownError = source.OutcomeUnknownError

// answered confirms an approval answer in the event stream when no live
// stream of the run will (polling mode).
func (c *Client) answered(runID, choice string, resolved int, requestID string) {
	c.mu.Lock()
	rs := c.runs[runID]
	// No stream will confirm it: polling, or a session turn's chat stream
	// (it carries no approval.responded: the 200 settles the answer).
	synth := rs != nil && (rs.info.Mode == ModePolling || rs.sessionTurn)
	c.mu.Unlock()
	if !synth {
		return
	}
	payload := map[string]any{"event": ApprovalResponded, "run_id": runID, "choice": choice, "resolved": resolved, "synthesized": true}
	if requestID != "" {
		payload["request_id"] = requestID
	}
	c.deliver(rs, c.synthEvent(rs, payload))
}

// synthEvent normalizes an event Herald builds itself.
func (c *Client) synthEvent(rs *runState, payload map[string]any) wire.Event {
	n := Normalizer{Gateway: c.name, Run: rs.id, Session: c.storedOf(rs), Now: c.clk.Now}
	ev, _ := n.Event(SSEEvent{Data: string(mustJSON(payload))})
	return ev
}
