package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/herald-desktop/herald/backend/wire"
)

// respondKeys is the parameter that carries the answer of each 0.18.2
// <kind>.respond method (tui_gateway/server.py, _respond).
var respondKeys = map[string]string{"clarify": "answer", "sudo": "password", "secret": "value"}

// codeNoPending is Hermes' "no pending <kind> request" error (4009).
const codeNoPending = 4009

// RespondPrompt answers a clarify, sudo or secret prompt with a.Value,
// in the form the gateway asked: <kind>.respond for the event form, a
// response frame (or clarify.lock for one question of several) for the
// server-request form. It reports whether the gateway took the answer:
// false means it no longer waited (answered elsewhere, expired or
// interrupted). The value is sent only to this gateway's connection and
// never appears in an error.
func (c *Client) RespondPrompt(ctx context.Context, a wire.PromptAnswer) (bool, error) {
	key, ok := respondKeys[a.Kind]
	if !ok {
		return false, fmt.Errorf("Herald cannot answer a %q prompt", a.Kind)
	}
	if a.RequestID == "" {
		return false, errors.New("the prompt has no request id, so it cannot be answered from Herald; answer it in Hermes itself")
	}
	value := string(a.Value.Reveal())
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout)
		defer cancel()
	}
	switch {
	case !a.ServerRequest:
		var r struct {
			Status string `json:"status"`
		}
		err := c.Call(ctx, a.Kind+".respond", map[string]any{"request_id": a.RequestID, key: value}, &r)
		var re *wire.RPCError
		switch {
		case errors.As(err, &re) && re.Code == codeNoPending:
			return false, nil
		case err != nil:
			return false, fmt.Errorf("sending the %s answer failed: %w", a.Kind, sanitizeRPC(err))
		}
		return r.Status != "expired", nil
	case a.Lock:
		var r struct {
			Status string `json:"status"`
		}
		if err := c.Call(ctx, "clarify.lock", map[string]any{"request_id": a.RequestID, "question_id": a.QuestionID, "answer": value}, &r); err != nil {
			return false, fmt.Errorf("sending the clarify answer failed: %w", sanitizeRPC(err))
		}
		ok := r.Status != "expired"
		if ok {
			c.closeSRQ(a.RequestID)
		}
		return ok, nil
	}
	var result any
	switch a.Kind {
	case "clarify":
		qid := a.QuestionID
		result = map[string]any{"answers": map[string]string{qid: value}}
	default:
		result = map[string]string{"value": value}
	}
	if c.canRequestAnswer() {
		// It says whether this answer won.
		ok, err := c.requestAnswer(ctx, a.RequestID, result)
		if err != nil {
			return false, fmt.Errorf("sending the %s answer failed: %w", a.Kind, sanitizeRPC(err))
		}
		return ok, nil
	}
	cn := c.current()
	if cn == nil {
		return false, ErrNotConnected
	}
	id, err := c.srqID(a.RequestID)
	if err != nil {
		return false, err
	}
	b, err := wire.EncodeResult(id, result)
	if err != nil {
		return false, errors.New("the answer could not be encoded")
	}
	err = cn.enqueue(ctx, b, true, nil)
	for i := range b {
		b[i] = 0
	}
	if err != nil {
		return false, fmt.Errorf("sending the %s answer failed: %w", a.Kind, err)
	}
	c.closeSRQ(a.RequestID)
	return true, nil
}

// sanitizeRPC keeps a gateway error's code and message only: Hermes never
// echoes an answer in an error, but a hostile gateway might, so the data
// member is dropped.
func sanitizeRPC(err error) error {
	var re *wire.RPCError
	if errors.As(err, &re) {
		return &wire.RPCError{Code: re.Code, Message: re.Message}
	}
	return err
}
