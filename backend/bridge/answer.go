package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Answering a bridge approval.
//
// POST v1/answer {id, digest, choice, client} is bound to the request
// shown (its id and the digest the route sent with it); the first answer
// wins. The route records who answered: a later poll's recent entry for
// the request has outcome "answered", the choice and by (the answering
// client's id), and a second answer from the same client gets
// already_answered with by_you.
//
// Once the answer is written, a failure before its reply is understood (a
// dropped link, a proxy's timeout, a reset, EOF, a 5xx, a reply that does
// not decode) leaves the outcome unknown (source.AnswerOutcome): the
// error matches wire.ErrOutcomeUnknown and the inbox shows the answer as
// sent, outcome unknown, never "still pending". The client keeps the
// answer (unsure) and the first poll sent after it settles it:
//
//   - gone with outcome "answered" by this Herald's client id: this
//     Herald's answer, with its choice (a request.cancel saying
//     wire.AnsweredHere, which the inbox records as resolved by that
//     choice);
//   - gone otherwise: ended as the route says (answered by another
//     client, timed out, interrupted);
//   - still listed: the answer did not reach it; the request is delivered
//     again, and the inbox offers it again (an answer by id and digest is
//     bound, and a second one cannot win twice);
//   - the dashboard restarted: gone, outcome unknown.
//
// When a poll already saw the request end while the answer was on its
// way, that end is reported at once (the inbox, still answering, keeps
// it for the answer's result).

// AnswerError is the route's refusal of an answer.
type AnswerError struct {
	Status int
	Code   string // already_answered, gone, unknown, mismatch, not_offered, notice
	Detail string
	Choice string // already_answered: the winning choice
}

func (e *AnswerError) Error() string {
	if e.Detail != "" {
		return "the Herald bridge refused the answer: " + e.Detail
	}
	return fmt.Sprintf("the Herald bridge refused the answer (%d %s)", e.Status, e.Code)
}

// RespondServerRequest answers the bridge approval requestID with choice,
// bound to the digest the route sent with it. The first answer wins: an
// answer that lost (another Herald, Hermes' own prompt, a timeout) ends the
// request with request.cancel and returns an *AnswerError.
func (c *Client) RespondServerRequest(ctx context.Context, requestID, choice string) error {
	if err := source.CheckChoice(choice); err != nil {
		return err
	}
	c.mu.Lock()
	it, ok := c.known[requestID]
	if !ok {
		it, ok = c.ended[requestID]
	}
	inst := c.instance
	_, busy := c.answering[requestID]
	seen := new(Ended) // what a poll saw of its end meanwhile
	if ok && !busy {
		c.answering[requestID] = seen
	}
	c.mu.Unlock()
	if !ok || it.Kind != "approval" {
		return &AnswerError{Status: http.StatusNotFound, Code: "unknown", Detail: "Herald does not know this approval on the bridge"}
	}
	if busy {
		return errors.New("an answer to this approval is already on its way")
	}
	err := c.answer(ctx, it, inst, choice)
	unknown := errors.Is(err, wire.ErrOutcomeUnknown)
	c.mu.Lock()
	delete(c.answering, requestID)
	switch {
	case err == nil:
		// Answered: the inbox settles it from this result, not from a
		// later poll's request.cancel.
		delete(c.unsure, requestID)
		if _, still := c.known[requestID]; still {
			delete(c.known, requestID)
			c.rememberLocked(it)
		}
	case unknown && seen.ID == "":
		// Nothing seen yet: the first poll sent from now on settles it.
		if len(c.unsure) < maxEnded {
			c.unsure[requestID] = unsureAnswer{item: kept(it), instance: inst, choice: choice, after: c.polls}
		}
	}
	c.mu.Unlock()
	switch {
	case err == nil:
		return nil
	case seen.ID != "":
		// A poll saw it end while the answer was on its way and left the
		// end to us: report it now. After an unknown outcome this is what
		// settles it (this Herald's answer, with its choice, when the
		// route names this client); after a failure, how it ended.
		// The answer failed, and the poll saw it end meanwhile and left
		// the end to us: report that end now.
		c.end(inst, it, *seen, "", c.cfg.Clock.Now())
	}
	return err
}

// settleUnsureLocked settles the answers of unknown outcome that a poll
// sent after them can settle (see the top of this file). It returns what
// to report, to be called without the lock.
func (c *Client) settleUnsureLocked(st State, seen map[string]int, recent map[string]Ended, restarted bool) []func(time.Time) {
	var out []func(time.Time)
	for id, u := range c.unsure {
		if st.seq <= u.after {
			continue // this poll was sent before the answer failed
		}
		delete(c.unsure, id)
		switch i, listed := seen[id]; {
		case restarted:
			out = append(out, func(now time.Time) { c.end(u.instance, u.item, Ended{}, wire.CancelGatewayRestarted, now) })
		case listed:
			// Still waiting: the answer did not reach it. Delivered again,
			// whole, so the inbox offers it again.
			full := st.Items[i]
			out = append(out, func(now time.Time) { c.arrive(st.Instance, full, now) })
		default:
			e := recent[id] // zero when the route no longer says
			out = append(out, func(now time.Time) { c.end(u.instance, u.item, e, "", now) })
		}
	}
	return out
}

// answer posts one answer and reads the route's reply (source.AnswerOutcome
// decides what an error after the write means).
func (c *Client) answer(ctx context.Context, it Item, inst, choice string) error {
	requestID := it.ID
	body, _ := json.Marshal(map[string]string{"id": it.ID, "digest": it.Digest, "choice": choice, "client": c.cfg.ClientID})
	var w source.Writes
	req, err := http.NewRequestWithContext(source.TraceWrites(ctx, &w), http.MethodPost, c.endpoint("v1/answer", nil), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	c.auth(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		// Not sent (could not connect, a redirect refused before
		// anything went there), or written and lost: unknown.
		return peer.AnswerOutcome(w.Wrote(), false, peer.DescribeNetErr(c.base.Host, err))
	}
	defer resp.Body.Close()
	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var res struct {
		Status  string `json:"status"`
		Detail  string `json:"detail"`
		Choice  string `json:"choice"`
		Outcome string `json:"outcome"`
		ByYou   bool   `json:"by_you"`
	}
	derr := json.Unmarshal(raw, &res)
	switch {
	case source.RedirectStatus(resp.StatusCode):
		return peer.Redirected(c.base.Host, resp.StatusCode) // not acted on
	case !source.NotActed(resp.StatusCode) && resp.StatusCode/100 != 2:
		// A 5xx after the write (a proxy's 502 or 504, the route's
		// 500): it may have been applied.
		return peer.AnswerOutcome(true, false, fmt.Errorf("the Herald bridge answered HTTP %d", resp.StatusCode))
	case rerr != nil:
		return peer.AnswerOutcome(true, false, fmt.Errorf("reading the Herald bridge's reply failed: %w", rerr))
	case resp.StatusCode == http.StatusOK && derr == nil && res.Status == "answered":
		return nil
	case resp.StatusCode == http.StatusOK:
		// Taken, perhaps; said in a way Herald does not understand.
		return peer.AnswerOutcome(true, false, fmt.Errorf("the Herald bridge's reply did not decode (status %.40q)", res.Status))
	}
	if res.Status == "already_answered" && res.ByYou && res.Choice == choice {
		return nil // this Herald's own answer, whose reply was lost: reconciled, not sent twice
	}
	ae := &AnswerError{Status: resp.StatusCode, Code: res.Status, Detail: res.Detail, Choice: res.Choice}
	if resp.StatusCode == http.StatusUnauthorized {
		ae.Detail = "the Hermes dashboard refused Herald's token"
		return ae
	}
	switch res.Status {
	case "already_answered", "gone", "unknown":
		// The request is over: say so now, before the next poll would.
		e := Ended{ID: requestID, Outcome: res.Outcome}
		if res.Status == "already_answered" {
			e.Outcome, e.Choice = "answered", res.Choice
			e.By = "another client"
			if res.ByYou {
				e.By = c.cfg.ClientID
			}
		}
		c.mu.Lock()
		_, still := c.known[requestID]
		if still {
			delete(c.known, requestID)
			c.rememberLocked(it)
		}
		c.mu.Unlock()
		if still {
			c.end(inst, it, e, "", c.cfg.Clock.Now())
		}
	}
	return ae
}
