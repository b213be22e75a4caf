package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// The dashboard gateway follows live sessions by stored id, takes
// prompts and interrupts turns.
var (
	_ source.SessionFollower = (*Source)(nil)
	_ source.Asker           = (*Source)(nil)
	_ source.Stopper         = (*Source)(nil)
	_ source.LinkChecker     = (*Source)(nil)
)

func followedOf(r SessionRef) source.FollowedSession {
	return source.FollowedSession{ID: r.ID, StoredID: r.StoredID, Elsewhere: r.Elsewhere}
}

// Followed lists the sessions the client follows.
func (s *Source) Followed() []source.FollowedSession {
	refs := s.c.Sessions()
	out := make([]source.FollowedSession, len(refs))
	for i, r := range refs {
		out[i] = followedOf(r)
	}
	return out
}

// Attach follows a stored session now (session.resume).
func (s *Source) Attach(ctx context.Context, storedID string) (source.FollowedSession, error) {
	r, err := s.c.AttachSession(ctx, storedID)
	return followedOf(r), err
}

// TakeBack resumes a followed session another client took.
func (s *Source) TakeBack(ctx context.Context, id string) error {
	_, err := s.c.TakeBack(ctx, id)
	return err
}

// FanOut reports whether this gateway sends each session's events to
// every client that follows it.
func (s *Source) FanOut() bool { return s.c.FanOut() }

// Ask submits a prompt to a followed session, a stored session (followed
// first, with session.resume) or a new one (session.create first), with
// prompt.submit.
func (s *Source) Ask(ctx context.Context, session, text string) (source.Asked, error) {
	c := s.c
	var res source.Asked
	switch live, stored, ok := s.followed(session); {
	case session == "":
		ref, err := c.CreateSession(ctx, nil)
		if err != nil {
			return res, askError(c.Name(), err)
		}
		res.Session, res.StoredSession, res.NewSession = ref.ID, ref.StoredID, true
	case ok:
		res.Session, res.StoredSession = live, stored
	default:
		// Follow the stored session first (session.resume), so its turn
		// shows up here.
		ref, err := c.AttachSession(ctx, session)
		if err != nil {
			return res, askError(c.Name(), err)
		}
		res.Session, res.StoredSession = ref.ID, ref.StoredID
	}
	var r struct {
		Status string `json:"status"`
	}
	if err := c.Call(ctx, "prompt.submit", map[string]any{"session_id": res.Session, "text": text}, &r); err != nil {
		return res, askError(c.Name(), err)
	}
	res.Status = r.Status
	if res.Status == "" {
		res.Status = "submitted"
	}
	switch {
	case res.NewSession || c.FanOut():
	case res.Status == "queued":
		// A busy session queues the text (0.19's "queued" reply); the
		// queued turn's events go to the client that submitted it.
		res.Note = "the session was busy: your text runs after the current turn, and its events come to Herald (this gateway sends each session's events to one client at a time, so other clients showing it stop receiving them)"
	default:
		res.Note = "this gateway sends each session's events to one client at a time: its live events now go to Herald only; other clients showing it stop receiving them until they resume it"
	}
	return res, nil
}

// followed finds a session the client follows by live or stored id.
func (s *Source) followed(id string) (live, stored string, ok bool) {
	if id == "" {
		return "", "", false
	}
	for _, r := range s.c.Sessions() {
		if r.ID == id || (r.StoredID != "" && r.StoredID == id) {
			return r.ID, r.StoredID, true
		}
	}
	return "", "", false
}

func askError(gw string, err error) error {
	var re *wire.RPCError
	switch {
	case errors.Is(err, ErrNotConnected):
		return notSent(gw)
	case errors.As(err, &re) && (re.Code == 4001 || re.Code == 4007):
		return fmt.Errorf("%s: %v; nothing was sent: check the session id (`herald watch` shows them)", gw, err)
	}
	return fmt.Errorf("%s: %v; the prompt may not have been sent: check the session before sending it again", gw, err)
}

// Stop interrupts a session's turn (session.interrupt) and returns once
// the gateway confirmed its end: by the turn's end event, or by
// session.status (the turn's events may go to another client on 0.18.2).
func (s *Source) Stop(ctx context.Context, id string, w source.StopWait) (source.Stopped, error) {
	c, gw := s.c, s.c.Name()
	var r struct {
		Status string `json:"status"`
	}
	if err := c.Call(ctx, "session.interrupt", map[string]any{"session_id": id}, &r); err != nil {
		return source.Stopped{}, interruptError(gw, id, err)
	}
	if r.Status == "not_interrupted" {
		return source.Stopped{Outcome: source.OutcomeNotRunning, Message: fmt.Sprintf("%s/%s: the gateway says nothing was running to interrupt", gw, id)}, nil
	}
	if w.Known && !w.Running {
		// Herald saw the session idle: ask instead of waiting for a
		// turn end that will not come.
		return s.confirmByStatus(ctx, id, w, false)
	}
	res, done, err := w.Wait(ctx, func(ev wire.Event) source.Stopped {
		res := source.Stopped{Outcome: outcomeInterrupted}
		if cp, ok := ev.Data.(*wire.CompletePayload); ok && cp.Status != "" && cp.Status != outcomeInterrupted {
			res.Outcome = cp.Status // the turn ended on its own first
		}
		res.Message = fmt.Sprintf("%s/%s: turn %s (confirmed by the gateway)", gw, id, res.Outcome)
		return res
	}, func() (source.Stopped, bool) {
		if !s.agentIdle(ctx, id) {
			return source.Stopped{}, false
		}
		return endedByStatus(gw, id), true
	})
	switch {
	case err != nil:
		return res, fmt.Errorf("%s/%s: the interrupt was sent but Herald stopped waiting before the gateway confirmed it (%v); check the session with `herald watch`", gw, id, err)
	case !done:
		return s.confirmByStatus(ctx, id, w, true)
	}
	return res, nil
}

const outcomeInterrupted = "interrupted"

// endedByStatus: session.status says the interrupted turn has ended.
func endedByStatus(gw, id string) source.Stopped {
	return source.Stopped{Outcome: outcomeInterrupted, Message: fmt.Sprintf("%s/%s: the turn has ended (confirmed by session.status; its live events go to another client)", gw, id)}
}

// agentIdle reports whether session.status says the agent is not running.
func (s *Source) agentIdle(ctx context.Context, id string) bool {
	var st struct {
		Output string `json:"output"`
	}
	return s.c.Call(ctx, "session.status", map[string]any{"session_id": id}, &st) == nil && strings.Contains(st.Output, "Agent Running: No")
}

// confirmByStatus asks session.status whether the agent still runs (the
// turn's events may go to another client on 0.18.2).
func (s *Source) confirmByStatus(ctx context.Context, id string, w source.StopWait, waited bool) (source.Stopped, error) {
	gw := s.c.Name()
	var res source.Stopped
	var st struct {
		Output string `json:"output"`
	}
	err := s.c.Call(ctx, "session.status", map[string]any{"session_id": id}, &st)
	switch {
	case err != nil:
		return res, fmt.Errorf("%s/%s: the interrupt was sent, but whether the turn ended is unknown: asking the gateway failed (%v); check the session with `herald watch`", gw, id, err)
	case strings.Contains(st.Output, "Agent Running: No"):
		if waited {
			res = endedByStatus(gw, id)
		} else {
			res.Outcome = source.OutcomeNotRunning
			res.Message = fmt.Sprintf("%s/%s: nothing was running", gw, id)
		}
		return res, nil
	case strings.Contains(st.Output, "Agent Running: Yes"):
		return res, fmt.Errorf("%s/%s: the gateway accepted the interrupt but the agent is still running after %s (a tool may not be interruptible); try again, or stop it on the Hermes host", gw, id, w.Confirm)
	}
	return res, fmt.Errorf("%s/%s: the interrupt was sent, but the gateway did not say whether the turn ended; check the session with `herald watch`", gw, id)
}

func interruptError(gw, id string, err error) error {
	var re *wire.RPCError
	switch {
	case errors.Is(err, ErrNotConnected):
		return notSent(gw)
	case errors.As(err, &re) && re.Code == 4001:
		return fmt.Errorf("%s has no session %s (it ended or was reclaimed); nothing was interrupted", gw, id)
	}
	return fmt.Errorf("interrupting %s/%s failed: %v; try again", gw, id, err)
}

// notSent is the error of a call made while the gateway is not connected.
func notSent(gw string) error {
	return fmt.Errorf("%s is not connected, so nothing was sent; Herald reconnects by itself: try again once it shows connected", gw)
}
