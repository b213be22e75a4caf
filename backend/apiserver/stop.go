package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// The API server starts runs for prompts and stops them.
var (
	_ source.Asker   = (*Source)(nil)
	_ source.Stopper = (*Source)(nil)
)

// Ask starts a run with text, continuing the Hermes session named (""
// starts a new one), and follows it.
func (a *Source) Ask(ctx context.Context, session, text string) (source.Asked, error) {
	run, err := a.c.StartRun(ctx, RunRequest{Input: text, SessionID: session})
	if err != nil {
		return source.Asked{}, fmt.Errorf("%v; check the server with `herald watch --api`, then try again", err)
	}
	return source.Asked{Session: run.ID, StoredSession: session, NewSession: session == "", Status: run.Status}, nil
}

// Stop stops a run (POST /v1/runs/{id}/stop) and returns once the server
// confirmed its end: by the run's end event or its polled status.
func (a *Source) Stop(ctx context.Context, id string, w source.StopWait) (source.Stopped, error) {
	c, gw := a.c, a.c.Name()
	st, err := c.StopRun(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return source.Stopped{Outcome: source.OutcomeNotRunning, Message: fmt.Sprintf("%s/%s: the API server has no such run running (it ended or is unknown)", gw, id)}, nil
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
