package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// A turn sent to a stored session as a run (POST /v1/runs with
// session_id and conversation_history).
//
// On a connection whose session chat stream was seen unable to ask
// approvals or stop (TurnUncontrolled: /v1/runs did not know the stream
// turn's run), Herald continues a stored session as a run instead: the
// session's stored messages (GET /api/sessions/{id}/messages, their role
// and text) go as conversation_history, the session's id as session_id.
// _handle_runs (gateway/platforms/api_server.py, 0.18.2 and 0.19.0:
// `session_id = body.get("session_id") or stored_session_id or run_id`)
// builds the agent with that session_id and the server's SessionDB, and
// the agent stores the new turn's messages under it while it skips the
// history it was given (run_agent.py _flush_messages_to_session_db:
// history dicts are marked persisted, only the turn's new messages are
// written). Checked on the real 0.18.2 and 0.19.0: the prompt and reply
// land in the session and its message_count grows. Such a run asks its
// approvals on /v1/runs/{id}/events and stops with POST
// /v1/runs/{id}/stop, like any run.
//
// The history is bounded: the most recent MaxTurnHistoryMessages user and
// assistant messages with text, within MaxTurnHistoryBytes of text, read
// from at most maxHistoryRead bytes of the messages answer. What is not
// sent stays stored; the turn's note says how much was sent.

// The bounds of a run turn's history.
const (
	// MaxTurnHistoryMessages is how many of a session's most recent
	// messages a run turn sends as its history, at most.
	MaxTurnHistoryMessages = 200
	// MaxTurnHistoryBytes bounds the text of those messages (the real
	// server accepts 10 MB request bodies, MAX_REQUEST_BYTES).
	MaxTurnHistoryBytes = 256 << 10
	// maxHistoryRead bounds the messages answer Herald reads.
	maxHistoryRead = 64 << 20
)

// RunTurnsNote says, for people, how turns sent to a session go on a
// server whose session chat stream cannot ask approvals or stop.
var RunTurnsNote = fmt.Sprintf("This API server's session chat stream cannot ask for your approval or stop a turn, so Herald sends turns to its sessions as runs, which can; each run gets the session's last %d messages (at most %d KiB of text) as context.", MaxTurnHistoryMessages, MaxTurnHistoryBytes>>10)

// How a turn is sent to a stored session (SessionTurn.Via).
const (
	ViaChatStream = "chat-stream"
	ViaRun        = "run"
)

// continueByRun sends text to stored session sessionID as a run.
func (c *Client) continueByRun(ctx context.Context, sessionID, text string) (SessionTurn, error) {
	if run, ok := c.runningTurns()[sessionID]; ok {
		return SessionTurn{}, fmt.Errorf("session %s already has a turn running (%s): wait for it to end, or stop it, then send the prompt again", sessionID, run)
	}
	hist, total, err := c.sessionHistory(ctx, sessionID)
	if err != nil {
		return SessionTurn{}, fmt.Errorf("the prompt was not sent to session %s: %w", sessionID, err)
	}
	r, err := c.startRun(ctx, RunRequest{Input: text, SessionID: sessionID, ConversationHistory: hist}, true)
	var ae *APIError
	var unsure *unsureStart
	switch {
	case errors.As(err, &unsure):
		return SessionTurn{}, fmt.Errorf("the prompt may have reached session %s before the link failed; whether a turn runs is unknown: look at the session before sending it again (%w)", sessionID, err)
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		return SessionTurn{}, sessionErr(sessionID, err)
	case err != nil:
		return SessionTurn{}, fmt.Errorf("the prompt was not sent to session %s: %w", sessionID, err)
	}
	turn := SessionTurn{RunID: r.ID, SessionID: sessionID, Control: TurnUncontrolled, Via: ViaRun, HistorySent: len(hist), HistoryStored: total}
	c.log.Info("turn sent to a session as a run", "session", sessionID, "run", r.ID, "history", len(hist), "stored", total)
	return turn, nil
}

// sessionHistory reads a session's stored messages (one attempt) and
// returns the history a run turn sends, and how many messages the
// session stores.
func (c *Client) sessionHistory(ctx context.Context, sessionID string) ([]Message, int, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	path := sessionPath(sessionID, "/messages")
	resp, err := c.send(cctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return nil, 0, sessionErr(sessionID, err)
	}
	defer resp.Body.Close()
	lr := &io.LimitedReader{R: resp.Body, N: maxHistoryRead}
	hist, total, err := decodeHistory(lr, MaxTurnHistoryMessages, MaxTurnHistoryBytes)
	if err != nil {
		if lr.N <= 0 {
			return nil, 0, fmt.Errorf("its stored messages are larger than the %d MiB Herald reads to continue a session: continue it in Hermes", maxHistoryRead>>20)
		}
		return nil, 0, fmt.Errorf("reading its stored messages failed: %w", err)
	}
	c.markOK()
	return hist, total, nil
}

// decodeHistory reads a messages answer ({"data": [{role, content, …}]})
// as a stream and keeps the most recent user and assistant messages with
// text: at most maxMsgs, within maxBytes of text (older ones dropped
// first). total counts every message of the answer.
func decodeHistory(r io.Reader, maxMsgs, maxBytes int) (hist []Message, total int, err error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, 0, err
	}
	var kept []Message
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, 0, unexpected(err)
		}
		if key, _ := tok.(string); key != "data" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, 0, unexpected(err)
			}
			continue
		}
		if err := expectDelim(dec, '['); err != nil {
			return nil, 0, err
		}
		for dec.More() {
			var m struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			}
			if err := dec.Decode(&m); err != nil {
				return nil, 0, unexpected(err)
			}
			total++
			text := jsonString(m.Content)
			if (m.Role != "user" && m.Role != "assistant") || strings.TrimSpace(text) == "" {
				continue
			}
			kept = append(kept, Message{Role: m.Role, Content: text})
			if len(kept) >= 2*maxMsgs {
				kept = append(kept[:0], kept[len(kept)-maxMsgs:]...)
			}
		}
		if err := expectDelim(dec, ']'); err != nil {
			return nil, 0, err
		}
	}
	if len(kept) > maxMsgs {
		kept = kept[len(kept)-maxMsgs:]
	}
	first, size := len(kept), 0
	for first > 0 && size+len(kept[first-1].Content) <= maxBytes {
		size += len(kept[first-1].Content)
		first--
	}
	return kept[first:], total, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return unexpected(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("the messages answer is not what Hermes sends (%v where %v was expected)", tok, want)
	}
	return nil
}

// unexpected maps a cut answer to io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
