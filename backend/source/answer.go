package source

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/herald-desktop/herald/backend/wire"
)

// The one answer path.
//
// An approval answer is written once. What happens next decides what
// Herald may say, the same on every transport:
//
//   - Nothing was written (the connection could not be made, a redirect
//     was refused, the link was already down): the error as it is. The
//     answer did not reach the server; the user may answer again.
//   - A reply arrived and the transport understood it (taken; a refusal
//     such as "nothing pending", "already answered", a 4xx; a proxy's
//     "not now", 429 or 503): the result or that refusal.
//   - Anything else after the write (a dropped link, a reset, EOF, a
//     timeout of Herald's or of a proxy, a 5xx, a reply that does not
//     decode or says something the transport does not know): the outcome
//     is unknown, an *OutcomeUnknownError (errors.Is
//     wire.ErrOutcomeUnknown). The server may have acted on it. It is
//     never reported as "not sent" or "still pending, try again", and
//     never retried blind; the inbox shows it as sent, outcome unknown,
//     until the server says how the request ended.
//
// Each transport's answer calls AnswerOutcome with what it knows
// (written, understood); HTTP transports learn "written" from
// TraceWrites.

// OutcomeUnknownError is an answer that was written and whose outcome
// Herald cannot know: the server may have acted on it. It matches
// wire.ErrOutcomeUnknown and wraps its cause.
type OutcomeUnknownError struct {
	Peer  Peer
	Cause error
}

func (e *OutcomeUnknownError) Error() string {
	name := e.Peer.Name
	if name == "" {
		name = "the server"
	}
	s := "the answer was sent, but " + name + " did not confirm it"
	if e.Cause != nil {
		s += " (" + e.Cause.Error() + ")"
	}
	return s + ", so whether it took effect is unknown: Herald does not send it again, and shows the outcome once " + name + " reports it"
}

// Is matches wire.ErrOutcomeUnknown.
func (e *OutcomeUnknownError) Is(target error) bool { return target == wire.ErrOutcomeUnknown }

// Unwrap returns the cause.
func (e *OutcomeUnknownError) Unwrap() error { return e.Cause }

// AnswerOutcome is the rule above: err of an answer, given whether it was
// written and whether the server's reply was understood. A nil err stays
// nil; an err that already says the outcome is unknown is kept.
func (p Peer) AnswerOutcome(written, understood bool, err error) error {
	switch {
	case err == nil, errors.Is(err, wire.ErrOutcomeUnknown):
		return err
	case IsRedirect(err):
		return err // answered with a redirect, not followed: not acted on
	case written && !understood:
		return &OutcomeUnknownError{Peer: p, Cause: err}
	}
	return err
}

// NotActed reports an HTTP status with which a server (or a proxy in
// front of it) refused a request before acting on it: a 3xx (not
// followed), a 4xx, 429 and 503. Any other non-2xx status after a write
// (500, 502 "the upstream dropped it", 504 "the upstream did not answer
// in time") leaves an answer's outcome unknown.
func NotActed(status int) bool {
	switch {
	case status/100 == 3, status/100 == 4:
		return true
	case status == http.StatusServiceUnavailable:
		return true
	}
	return false
}

// Writes records whether a request's bytes went out to the server.
type Writes struct{ wrote atomic.Bool }

// Wrote reports whether the request's headers were written (from then
// on the server may have it).
func (w *Writes) Wrote() bool { return w.wrote.Load() }

// Reset forgets an earlier attempt's write (before a retry).
func (w *Writes) Reset() { w.wrote.Store(false) }

type writesKey struct{}

// TraceWrites returns ctx set up to record in w whether a request made
// with it was written (net/http/httptrace), keeping any trace ctx has.
func TraceWrites(ctx context.Context, w *Writes) context.Context {
	ctx = context.WithValue(ctx, writesKey{}, w)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { w.wrote.Store(true) },
	})
}

// ResetWrites forgets the write of an earlier attempt made with ctx
// (TraceWrites), before a retry: what counts is the last attempt's.
func ResetWrites(ctx context.Context) {
	if w, ok := ctx.Value(writesKey{}).(*Writes); ok {
		w.Reset()
	}
}
