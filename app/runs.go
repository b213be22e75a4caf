package app

import (
	"context"
	"fmt"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/wire"
	"github.com/herald-desktop/herald/service"
)

// TrayRun is one active run, at the top of the tray's menu with Stop and
// Open.
type TrayRun struct {
	Gateway string
	ID      string
	// Label is the one line the menu and the tooltip show: "gateway ·
	// name: what it does now, for how long".
	Label string
	Name  string
	// Doing says what it does now, in words ("waiting for your
	// approval", "running a command: make test", "thinking").
	Doing string
	Since time.Time
}

// trayRunLabelMax bounds a run's label in the tray menu.
const trayRunLabelMax = 90

// onEvent sees every gateway event after the service did.
func (a *App) onEvent(ev wire.Event) {
	a.notify.event(ev)
	a.notice.event(ev)
}

// stopTimeout bounds a stop from any surface: the call and the wait for
// the gateway's confirmation.
const stopTimeout = service.ConfirmWait + 30*time.Second

// StopRun interrupts a session's turn or stops an API-server run (the
// window's Stop button). It returns once the gateway confirmed the end;
// the error says what happened and what to do.
func (a *App) StopRun(gateway, id string) (service.StopResult, error) {
	ctx, cancel := context.WithTimeout(a.ctx, stopTimeout)
	defer cancel()
	res, err := a.svc.StopRun(ctx, gateway, id)
	res.Gateway, res.ID, res.Outcome, res.Message = visible(res.Gateway), visible(res.ID), visible(res.Outcome), visible(res.Message)
	return res, visibleErr(err)
}

// resultTextMax bounds what the window shows of a gateway's answer.
const resultTextMax = 1000

// visible is gateway text as the window may show it (one line, bounded).
func visible(s string) string {
	t, cut := approval.Truncate(s, resultTextMax)
	t = approval.VisibleLine(t)
	if cut {
		t += "…"
	}
	return t
}

// visibleErr is err, whose text is a gateway's, for the window: shown as
// VisibleLine and cut to resultTextMax; errors.Is and As still see err.
func visibleErr(err error) error { return surface.ShownError(err, visible) }

// ActiveRuns lists the runs that can be stopped.
func (a *App) ActiveRuns() []service.RunRef {
	runs := a.svc.ActiveRuns()
	if runs == nil {
		runs = []service.RunRef{} // the window reads arrays: never null
	}
	return runs
}

// Ask starts a prompt on a followed session, or a new one when session is
// empty (the window's quick prompt).
func (a *App) Ask(gateway, session, text string) (service.AskResult, error) {
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	res, err := a.svc.Ask(ctx, service.AskRequest{Gateway: gateway, Session: session, Text: text})
	// Session ids stay as the gateway gave them: the window sends them
	// back (Stop, a second prompt). It shows them through the page's text
	// escaping; the status and the note are for reading only.
	res.Status, res.Note = visible(res.Status), visible(res.Note)
	return res, visibleErr(err)
}

// TrayStop stops a run from the tray. The tray has no place for the
// outcome, so it is a notification: after the gateway confirmed, or with
// what went wrong and what to do.
func (a *App) TrayStop(gateway, id string) {
	res, err := a.StopRun(gateway, id)
	n := Notification{ID: "herald-stop:" + service.ShortKey(gateway+"/"+id), Gateway: gateway, Kind: NoteStopped}
	if err != nil {
		a.warn(err.Error())
		n.Title, n.Body, n.Kind = "Could not stop the run", err.Error(), NoteFailed
	} else {
		n.Title, n.Body = "Run stopped", res.Message
		if res.Outcome == service.OutcomeNotRunning {
			n.Title = "Nothing to stop"
		}
	}
	if err := a.desk.Notify(n); err != nil {
		a.log.Warn(fmt.Sprintf("showing the stop result failed: %v", err))
	}
	a.trayPump.poke()
}

// TrayOpenRun shows the window (its Sessions panel lists the run).
func (a *App) TrayOpenRun(gateway, id string) { a.TrayShow() }

// TrayFollow follows a session from the tray (an unseen session's item).
func (a *App) TrayFollow(gateway, id string) {
	if err := a.FollowSession(gateway, id); err != nil {
		a.warn(fmt.Sprintf("following %s on %s failed: %v", id, gateway, err))
	}
}
