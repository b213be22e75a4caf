package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

func init() {
	source.Register(source.Driver{
		Kind:       Kind,
		Aliases:    []string{"apiserver", "api-server"},
		Title:      "API server",
		Hint:       "HTTP, port 8642",
		DefaultURL: DefaultURL,
		Flag:       "api",
		Auth: []source.AuthMode{
			{Name: "key", Label: "API key", Secret: "API key", Flag: "api-key", Env: "HERALD_API_KEY",
				Hint: "`API_SERVER_KEY` from Hermes' `~/.hermes/.env`."},
			source.NoAuth,
		},
		// A new prompt is a run of its own, and nothing lists the runs
		// started elsewhere: they are followed by their id. Stored
		// sessions are listed, and a prompt continues one as a turn on
		// its chat stream (sessionturn.go).
		Words:  source.Words{Conversation: "run", Interrupted: "Run stopped", Badge: "API server", FollowHint: "run_… started elsewhere", IDHint: "POST /v1/runs returns it as run_…"},
		Offers: source.Offers{AskNew: true, FollowByID: true, StartsRuns: true, ContinuesSessions: true},
		Open: func(cfg source.Config, h source.Hooks) (source.Source, error) {
			c, err := New(configOf(cfg, h))
			if err != nil {
				return nil, err
			}
			return &Source{c: c}, nil
		},
		Check: check,
	})
}

// configOf is a client's configuration from the contract's.
func configOf(cfg source.Config, h source.Hooks) Config {
	c := Config{Name: cfg.Name, URL: cfg.URL, Key: cfg.Secrets["key"], RootCAs: cfg.RootCAs,
		Clock: cfg.Clock, Logger: cfg.Logger, OnEvent: h.OnEvent, OnProblem: h.OnProblem}
	if h.OnStatus != nil {
		c.OnStatus = func(st Status) { h.OnStatus(st.Source()) }
	}
	return c
}

// check is the driver's Check: /health, then the key on
// /v1/capabilities.
func check(ctx context.Context, cfg source.Config) source.CheckResult {
	cfg.Name = "test"
	ac := configOf(cfg, source.Hooks{})
	ac.MaxRetries = 1
	c, err := New(ac)
	if err != nil {
		return source.CheckFailed("address", err)
	}
	info, err := c.Probe(ctx)
	switch {
	case errors.Is(err, ErrUnauthorized):
		return source.CheckResult{Stage: "key", Message: "the API server refused the key: copy API_SERVER_KEY from Hermes' ~/.hermes/.env into the key field"}
	case err != nil:
		return source.CheckFailed("http", err)
	}
	msg := "Connected: the API server answered"
	if info.Version != "" {
		msg += " (Hermes " + info.Version + ")"
	}
	return source.CheckResult{OK: true, Stage: "key", Message: msg}
}

// Source is a Client as a source.Source: runs are its sessions, and
// "nothing pending" (409) is a resolved count of 0.
type Source struct{ c *Client }

var (
	_ source.Source       = (*Source)(nil)
	_ source.RunStarter   = (*Source)(nil)
	_ source.Asker        = (*Source)(nil)
	_ source.Stopper      = (*Source)(nil)
	_ source.LinkChecker  = (*Source)(nil)
	_ source.SessionStore = (*Source)(nil)
)

// NewSource is c as a source.Source (the driver's Open builds one).
func NewSource(c *Client) *Source { return &Source{c: c} }

// Client is the API-server client, for the API-only calls (stopping
// runs, starting them with options).
func (a *Source) Client() *Client { return a.c }

func (a *Source) Name() string                  { return a.c.Name() }
func (a *Source) Kind() source.Kind             { return Kind }
func (a *Source) Status() source.Status         { return a.c.Status().Source() }
func (a *Source) ReconnectNow()                 { a.c.ReconnectNow() }
func (a *Source) CheckLink()                    { a.c.CheckLink() }
func (a *Source) Unfollow(id string)            { a.c.Forget(id) }
func (a *Source) Run(ctx context.Context) error { return a.c.Run(ctx) }

// Follow follows a run by id. A run the server says it does not know is
// refused at once (a mistyped id says so where it was typed); when the
// server cannot be asked now the run is followed all the same, and its
// follower says what it finds.
func (a *Source) Follow(ctx context.Context, id string) error {
	id = strings.TrimSpace(id)
	if id == "" {
		return errors.New("no run id given")
	}
	if err := a.c.CheckRun(ctx, id); err != nil {
		return err
	}
	a.c.Follow(id)
	return nil
}

// StartRun starts a run with input and follows it.
func (a *Source) StartRun(ctx context.Context, input string) (string, error) {
	r, err := a.c.StartRun(ctx, RunRequest{Input: input})
	if err != nil {
		return "", err
	}
	return r.ID, nil
}

// RespondApproval answers a run's approval; a run with nothing pending
// resolved 0.
func (a *Source) RespondApproval(ctx context.Context, runID, choice, requestID string) (int, error) {
	err := a.c.RespondApproval(ctx, runID, choice, requestID)
	if errors.Is(err, ErrApprovalNotPending) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return 1, nil
}

// RespondServerRequest fails: the API server sends no server requests.
func (a *Source) RespondServerRequest(context.Context, string, string) error {
	return errors.New("the API server has no server requests")
}

// Ask sends text: to the stored session named, as a turn on its chat
// stream (sessionturn.go) or, where that stream cannot ask approvals or
// stop, as a run continuing it (runturn.go); or ("") as a new run. Each
// is followed.
func (a *Source) Ask(ctx context.Context, session, text string) (source.Asked, error) {
	if session != "" {
		t, err := a.c.ChatSession(ctx, session, text)
		if err != nil {
			return source.Asked{}, err
		}
		return source.Asked{Session: t.RunID, StoredSession: t.SessionID, Status: "started", Note: t.Note()}, nil
	}
	run, err := a.c.StartRun(ctx, RunRequest{Input: text})
	if err != nil {
		return source.Asked{}, fmt.Errorf("%v; check the server with `herald watch --api`, then try again", err)
	}
	return source.Asked{Session: run.ID, NewSession: true, Status: run.Status}, nil
}

// StoredSessions lists the server's stored sessions (one page, at most
// MaxListedSessions), each with the turn Herald sent to it that is under
// way, and what such turns cannot do here once known.
func (a *Source) StoredSessions(ctx context.Context, limit int) (source.StoredSessions, error) {
	p, err := a.c.ListSessions(ctx, limit, 0)
	if err != nil {
		return source.StoredSessions{}, err
	}
	turns := a.c.runningTurns()
	out := source.StoredSessions{Sessions: make([]source.StoredSession, 0, len(p.Sessions)), More: p.More}
	for _, s := range p.Sessions {
		out.Sessions = append(out.Sessions, source.StoredSession{ID: s.ID, Title: s.Title, Preview: s.Preview,
			MessageCount: s.MessageCount, LastActive: s.LastActive, Turn: turns[s.ID]})
	}
	out.Note = a.TurnNote()
	return out, nil
}

// TurnNote says how turns sent to a stored session go here, once learned
// on this connection: as runs where the chat stream cannot ask approvals
// or stop.
func (a *Source) TurnNote() string {
	if a.c.TurnControl() == TurnUncontrolled {
		return RunTurnsNote
	}
	return ""
}

// Stop stops a run (POST /v1/runs/{id}/stop) and returns once the server
// confirmed its end: by the run's end event or its polled status.
func (a *Source) Stop(ctx context.Context, id string, w source.StopWait) (source.Stopped, error) {
	c, gw := a.c, a.c.Name()
	st, err := c.StopRun(ctx, id)
	if why, ok := c.stopTurnRefused(id); ok && errors.Is(err, ErrNotFound) {
		return source.Stopped{}, fmt.Errorf("%s/%s: %s", gw, id, why)
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return source.Stopped{Outcome: source.OutcomeNotRunning, Message: fmt.Sprintf("%s/%s: the API server has no such run running (it ended or is unknown; a turn sent to a session is unknown to it on servers that cannot stop such turns)", gw, id)}, nil
	case err != nil:
		return source.Stopped{}, fmt.Errorf("%v; nothing is known to have stopped: try again", err)
	}
	if st.Terminal() {
		return stopped(gw, id, st.Status), nil
	}
	res, done, err := w.Wait(ctx, func(ev wire.Event) source.Stopped {
		status := strings.TrimPrefix(ev.Kind, "run.")
		if rs, ok := ev.Data.(*RunStatus); ok {
			status = rs.Status
		}
		return stopped(gw, id, status)
	}, func() (source.Stopped, bool) {
		got, err := c.GetRun(ctx, id)
		if err != nil || !got.Terminal() {
			return source.Stopped{}, false
		}
		return stopped(gw, id, got.Status), true
	})
	switch {
	case err != nil:
		return res, fmt.Errorf("%s/%s: the stop was sent but Herald stopped waiting before the server confirmed it (%v)", gw, id, err)
	case done:
		return res, nil
	}
	got, err := c.GetRun(ctx, id)
	if err != nil {
		return source.Stopped{}, fmt.Errorf("%s/%s: the stop was sent, but whether the run ended is unknown: %v", gw, id, err)
	}
	if got.Terminal() {
		return stopped(gw, id, got.Status), nil
	}
	return source.Stopped{}, fmt.Errorf("%s/%s: the API server is still %s after %s; try again, or stop it on the Hermes host", gw, id, got.Status, w.Confirm)
}

// stopped says how a run ended after a stop.
func stopped(gw, id, status string) source.Stopped {
	res := source.Stopped{Outcome: status}
	if status == "cancelled" {
		res.Message = fmt.Sprintf("%s/%s: run stopped (confirmed by the API server)", gw, id)
	} else {
		res.Message = fmt.Sprintf("%s/%s: the run had already ended (%s)", gw, id, status)
	}
	return res
}
