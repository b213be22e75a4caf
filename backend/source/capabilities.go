package source

import (
	"context"
	"errors"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// Optional capabilities. A Source has one when it implements the
// interface; the service finds them by type assertion and surfaces ask
// the service, never a source. A transport implements those its server
// offers and nothing else.

// RunStarter is a Source that can start runs.
type RunStarter interface {
	// StartRun starts a run with input, follows it and returns its id.
	StartRun(ctx context.Context, input string) (string, error)
}

// LinkChecker is a Source whose link can be checked at once (after the
// machine woke up), instead of waiting for its next heartbeat.
type LinkChecker interface {
	CheckLink()
}

// FollowedSession is a session a SessionFollower follows.
type FollowedSession struct {
	// ID is the live id, StoredID the stored one (what resuming takes).
	ID       string
	StoredID string
	// Elsewhere: another client took its live events.
	Elsewhere bool
}

// SessionFollower is a Source whose server has live sessions that other
// clients drive too, and that follows them by stored id (it reports
// listings through Hooks.OnDiscovery).
type SessionFollower interface {
	// Followed lists the sessions followed now.
	Followed() []FollowedSession
	// Attach follows a stored session now; the source must be
	// connected.
	Attach(ctx context.Context, storedID string) (FollowedSession, error)
	// TakeBack makes the live events of a followed session that another
	// client took come to Herald again.
	TakeBack(ctx context.Context, id string) error
	// FanOut reports whether the server sends each session's events to
	// every client that follows it (else to one client at a time).
	FanOut() bool
}

// ErrNotStarted is what SessionFollower.Attach returns (errors.Is) for a
// session the server cannot resume yet: it is stored only after its
// first prompt.
var ErrNotStarted = errors.New("the session cannot be resumed before its first prompt")

// Asker is a Source that takes prompts: the window's quick prompt and
// `herald ask`.
type Asker interface {
	// Ask sends text to a session (live or stored id; "" starts a new
	// one). Its errors say, for people, whether the text was sent.
	Ask(ctx context.Context, session, text string) (Asked, error)
}

// Asked is what the server answered to a prompt.
type Asked struct {
	// Session is the live session (or run) id, StoredSession the stored
	// one when known.
	Session       string
	StoredSession string
	NewSession    bool
	// Status is the server's answer (streaming, queued, started, ...).
	Status string
	// Note is a caveat for the user.
	Note string
}

// SessionStore is a Source whose server keeps sessions that a prompt can
// continue without Herald following them live (the API server's
// /api/sessions): surfaces list them by name and send prompts to them
// (Asker), and each prompt's turn is followed like a run.
type SessionStore interface {
	// StoredSessions lists at most limit sessions, the most recently
	// active first.
	StoredSessions(ctx context.Context, limit int) (StoredSessions, error)
	// TurnNote says, for people, what a turn sent to a stored session
	// cannot do on this server, once the connection has shown it ("" while
	// not known, or when there is nothing to say).
	TurnNote() string
}

// StoredSessions is one listing of a server's stored sessions.
type StoredSessions struct {
	Sessions []StoredSession `json:"sessions"`
	// More: the server has more sessions than were listed.
	More bool `json:"more,omitempty"`
	// Note says, for people, what a turn sent to these sessions cannot do
	// on this server, once Herald has learned it ("" otherwise).
	Note string `json:"note,omitempty"`
}

// StoredSession is one stored session, as its server lists it.
type StoredSession struct {
	ID           string    `json:"id"`
	Title        string    `json:"title,omitempty"`
	Preview      string    `json:"preview,omitempty"`
	MessageCount int       `json:"message_count"`
	LastActive   time.Time `json:"last_active,omitzero"`
	// Turn is the run id of a turn Herald sent to it that is under way.
	Turn string `json:"turn,omitempty"`
}

// Stopper is a Source that can stop a session's turn or a run and
// confirm its end.
type Stopper interface {
	// Stop stops the turn or run id and returns once the server confirmed
	// its end, or an error that says what is not known.
	Stop(ctx context.Context, id string, w StopWait) (Stopped, error)
}

// StopWait is what the caller knows and gives a Stopper to wait with.
type StopWait struct {
	// Ended delivers the turn's (or run's) end event when the source
	// reports it.
	Ended <-chan wire.Event
	// Known: the caller has seen the session; Running: it was running.
	Known, Running bool
	// Confirm is how long to wait for the end before asking the server;
	// Poll how often to ask it meanwhile.
	Confirm, Poll time.Duration
	Clock         clock.Clock
}

// Wait waits for the end of a turn or run a Stopper asked the server to
// stop: until Ended delivers it (ended says how it ended) or poll, asked
// every Poll, finds it ended. It reports false once Confirm has passed
// without either (the caller asks the server one last time), and ctx's
// error if ctx ends first.
func (w StopWait) Wait(ctx context.Context, ended func(wire.Event) Stopped, poll func() (Stopped, bool)) (Stopped, bool, error) {
	t := w.Clock.NewTimer(w.Confirm)
	defer t.Stop()
	tick := w.Clock.NewTicker(w.Poll)
	defer tick.Stop()
	for {
		select {
		case ev := <-w.Ended:
			return ended(ev), true, nil
		case <-tick.C():
			if res, ok := poll(); ok {
				return res, true, nil
			}
		case <-t.C():
			return Stopped{}, false, nil
		case <-ctx.Done():
			return Stopped{}, false, ctx.Err()
		}
	}
}

// Stopped is what the server confirmed about a stop.
type Stopped struct {
	// Outcome is interrupted, cancelled, completed, failed, or
	// OutcomeNotRunning.
	Outcome string
	// Message says it for people.
	Message string
}

// OutcomeNotRunning: there was nothing to stop.
const OutcomeNotRunning = "not-running"
