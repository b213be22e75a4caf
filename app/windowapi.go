package app

import (
	"context"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// The window bridge: the snapshot pushed to the page and the calls with
// which it answers and reads the history.

// push sends one snapshot to the window and redraws the tray.
func (a *App) push() {
	s := a.Snapshot()
	if p := a.plat(); p != nil {
		p.Emit(EventSnapshot, s)
	}
	// The tray has one updater, its pump: a second one drawing this
	// (older) snapshot could land after the pump's newer one and leave
	// the tray stale until the next change.
	a.trayPump.poke()
}

// Snapshot is the window's whole state; it pulls one on load and then
// follows EventSnapshot.
func (a *App) Snapshot() Snapshot { return a.snapshotOf(a.svc.View()) }

// traySnapshot is the snapshot the tray is drawn from: without the ended
// requests (Recent), which it does not show and which cost most to copy.
func (a *App) traySnapshot() Snapshot { return a.snapshotOf(a.svc.LiveView()) }

func (a *App) snapshotOf(v service.View) Snapshot {
	a.mu.Lock()
	st := a.settings
	warnings := append(append([]string(nil), a.warnings...), v.Limits...)
	trayMissing, dnd := a.trayMissing, a.dnd
	a.mu.Unlock()
	auto, _ := a.d.Autostart.Enabled()
	names := v.Names() // one name per session, on every part of the window
	s := Snapshot{
		Version:             a.d.Version,
		Now:                 v.At,
		Sessions:            displaySessions(v.Sessions, names),
		Live:                liveViews(v.Live, names),
		NotificationsPaused: st.PauseNotifications,
		SecretsSessionOnly:  a.d.Secrets != nil && a.d.Secrets.SessionOnly(),
		Autostart:           auto,
		TrayMissing:         trayMissing,
		QuitWithoutTray:     st.QuitWithoutTray,
		TrayNoticeDismissed: st.TrayNoticeDismissed,
		NotifyRunFinished:   st.NotifyRunFinished,
		DoNotDisturb:        dnd,
		Warnings:            warnings,
		AuditError:          v.AuditError,
		Choices:             source.ChoiceTable(),
		// The window reads these as arrays: never send null.
		Gateways:  []GatewayView{},
		Approvals: []ApprovalView{},
		Recent:    []ApprovalView{},
	}
	if s.Sessions == nil {
		s.Sessions = []service.SessionView{}
	}
	urls := map[string]string{}
	for _, g := range st.Gateways {
		urls[g.Name] = g.URL
	}
	for _, g := range v.Gateways {
		s.Gateways = append(s.Gateways, GatewayView{
			Name: g.Gateway, URL: urls[g.Gateway], State: string(g.State), Error: approval.VisibleLine(g.Err),
			MayHaveMissedEvents: g.MayHaveMissedEvents, MissedReason: approval.VisibleLine(g.MissedReason), Version: approval.VisibleLine(g.Version),
			Delivery: approval.VisibleLine(g.Features.DeliveryText), DeliveryEvidence: approval.VisibleLine(g.Features.DeliveryEvidence),
		}.ofKind(g.Kind))
	}
	s.Gateways = a.withUnconnected(s.Gateways, st.Gateways)
	statuses := map[string]source.Status{}
	for _, g := range v.Gateways {
		statuses[g.Gateway] = g
	}
	s.Gateways = a.withBridges(s.Gateways, statuses, st.Gateways)
	// A request is worded as its gateway's transport words it (a gateway
	// since removed: GenericWords).
	transports := map[string]Transport{}
	for _, g := range s.Gateways {
		transports[g.Name] = g.Transport
	}
	view := func(r approval.Request) ApprovalView {
		av := approvalViewIn(r, names.Of(r.Gateway, r.Session, r.StoredSession, r.SessionTitle))
		if t, ok := transports[r.Gateway]; ok {
			av.Transport = t
		}
		return av
	}
	for _, r := range v.Approvals {
		s.Approvals = append(s.Approvals, view(r))
	}
	for i, r := range v.Recent {
		if i == 20 {
			break
		}
		s.Recent = append(s.Recent, view(r))
	}
	return s
}

// Answer sends the user's choice from the window, with only "always"
// confirmed (confirmAlways): see AnswerConfirmed.
func (a *App) Answer(key, choice string, confirmAlways bool) error {
	return a.AnswerConfirmed(key, choice, approval.Confirmed{Always: confirmAlways})
}

// AnswerConfirmed sends the user's choice from the window with what the
// sheet had them confirm: "always", and approving a command Hermes
// partly hid.
func (a *App) AnswerConfirmed(key, choice string, c approval.Confirmed) error {
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	// The error may quote a gateway (approval's errors show it as
	// VisibleLine already): surface.LineError marks anything left raw.
	return surface.LineError(a.svc.AnswerConfirmed(ctx, key, choice, "window", c))
}

// Dismiss ends an uncertain request without sending anything.
func (a *App) Dismiss(key string) error { return surface.LineError(a.svc.Dismiss(key, "window")) }

// History lists the audit log, newest last, with each command and
// session name as the window shows them.
func (a *App) History(limit int, gatewayName string) ([]HistoryEntry, error) {
	es, err := a.svc.History(approval.Filter{Limit: limit, Gateway: gatewayName})
	if err != nil {
		return nil, err
	}
	out := make([]HistoryEntry, len(es))
	for i, e := range es {
		out[i] = historyEntry(e)
	}
	return out, nil
}

// WindowAPI is what Wails binds to the window: exactly the calls the page
// makes (frontend/src/lib/bridge.ts), plus RememberWindow, which the
// window process sends when it closes. Lifecycle hooks, the tray's actions
// and the service stay on App, out of the page's reach. The window process
// of the split model forwards calls by name to it (see callBound).
type WindowAPI struct{ a *App }

// WindowAPI returns the window's bound API.
func (a *App) WindowAPI() *WindowAPI { return &WindowAPI{a: a} }

// Snapshot is everything the window shows.
func (w *WindowAPI) Snapshot() Snapshot { return w.a.Snapshot() }

// Answer sends the user's choice for an approval or a clarify choice.
func (w *WindowAPI) Answer(key, choice string, confirmAlways bool) error {
	return w.a.Answer(key, choice, confirmAlways)
}

// AnswerConfirmed sends the user's choice for an approval with what the
// sheet had them confirm ("always", a command Hermes partly hid).
func (w *WindowAPI) AnswerConfirmed(key, choice string, c approval.Confirmed) error {
	return w.a.AnswerConfirmed(key, choice, c)
}

// AnswerText answers a clarify, sudo or secret prompt ("" declines).
func (w *WindowAPI) AnswerText(key, value string) error { return w.a.AnswerText(key, value) }

// Dismiss ends an uncertain request without sending anything.
func (w *WindowAPI) Dismiss(key string) error { return w.a.Dismiss(key) }

// Reconnect asks a gateway to reconnect now.
func (w *WindowAPI) Reconnect(name string) error { return w.a.Reconnect(name) }

// History lists the audit log, newest first.
func (w *WindowAPI) History(limit int, gatewayName string) ([]HistoryEntry, error) {
	return w.a.History(limit, gatewayName)
}

// GatewayKinds lists the transports the gateway form offers.
func (w *WindowAPI) GatewayKinds() []GatewayKind { return w.a.GatewayKinds() }

// ProbeGateway asks a server of the kind which sign-in it wants.
func (w *WindowAPI) ProbeGateway(kind, url string) ProbeResult { return w.a.ProbeGateway(kind, url) }

// TestGateway checks a gateway end to end with the form's credentials.
func (w *WindowAPI) TestGateway(req AddGatewayRequest) TestResult { return w.a.TestGateway(req) }

// AddGateway saves a gateway (its secret to the keychain) and connects.
func (w *WindowAPI) AddGateway(req AddGatewayRequest) error { return w.a.AddGateway(req) }

// GatewayForm is a configured gateway as the Edit form shows it.
func (w *WindowAPI) GatewayForm(name string) (GatewayFormView, error) { return w.a.GatewayForm(name) }

// EditGateway changes a configured gateway and reconnects it.
func (w *WindowAPI) EditGateway(oldName string, req AddGatewayRequest) error {
	return w.a.EditGateway(oldName, req)
}

// RemoveGateway disconnects a gateway and forgets it and its secrets.
func (w *WindowAPI) RemoveGateway(name string) error { return w.a.RemoveGateway(name) }

// SetPauseNotifications pauses or resumes notifications.
func (w *WindowAPI) SetPauseNotifications(p bool) error { return w.a.SetPauseNotifications(p) }

// SetAutostart turns start-at-login on or off.
func (w *WindowAPI) SetAutostart(on bool) error { return w.a.SetAutostart(on) }

// SetQuitWithoutTray sets whether closing the window quits without a tray.
func (w *WindowAPI) SetQuitWithoutTray(on bool) error { return w.a.SetQuitWithoutTray(on) }

// DismissTrayNotice closes the note on how to get a tray.
func (w *WindowAPI) DismissTrayNotice() error { return w.a.DismissTrayNotice() }

// DismissWarning closes a warning the user read; it does not come back.
func (w *WindowAPI) DismissWarning(msg string) { w.a.DismissWarning(msg) }

// SetNotifyRunFinished sets whether a finished run is notified.
func (w *WindowAPI) SetNotifyRunFinished(on bool) error { return w.a.SetNotifyRunFinished(on) }

// StopRun interrupts a session's turn or stops a run.
func (w *WindowAPI) StopRun(gateway, id string) (service.StopResult, error) {
	return w.a.StopRun(gateway, id)
}

// ActiveRuns lists what Stop can stop.
func (w *WindowAPI) ActiveRuns() []service.RunRef { return w.a.ActiveRuns() }

// Ask submits the quick prompt.
func (w *WindowAPI) Ask(gateway, session, text string) (service.AskResult, error) {
	return w.a.Ask(gateway, session, text)
}

// StoredSessions lists an API server's stored sessions.
func (w *WindowAPI) StoredSessions(gatewayName string) (StoredSessionsUI, error) {
	return w.a.StoredSessions(gatewayName)
}

// FollowSession follows a live session.
func (w *WindowAPI) FollowSession(gatewayName, id string) error {
	return w.a.FollowSession(gatewayName, id)
}

// FollowRun follows a run started elsewhere by its id, on a gateway
// whose transport follows by id (an API server); it returns the run with
// its whole id and its one name.
func (w *WindowAPI) FollowRun(gatewayName, runID string) (service.RunRef, error) {
	return w.a.FollowRun(gatewayName, runID)
}

// UnfollowSession stops following a session.
func (w *WindowAPI) UnfollowSession(gatewayName, id string) error {
	return w.a.UnfollowSession(gatewayName, id)
}

// FollowAll follows every live session of a gateway.
func (w *WindowAPI) FollowAll(gatewayName string) (int, error) { return w.a.FollowAll(gatewayName) }

// TakeBack resumes a session another client took.
func (w *WindowAPI) TakeBack(gatewayName, id string) error { return w.a.TakeBack(gatewayName, id) }

// SetFollowPolicy sets what Herald does with a gateway's other sessions.
func (w *WindowAPI) SetFollowPolicy(gatewayName, policy string) error {
	return w.a.SetFollowPolicy(gatewayName, policy)
}

// SaveWindowState remembers the window's place and size.
func (w *WindowAPI) SaveWindowState() error { return w.a.SaveWindowState() }

// RememberWindow remembers the place the window process reports.
func (w *WindowAPI) RememberWindow(g WindowGeometry) error { return w.a.RememberWindow(g) }

// HideWindow hides the window (Herald keeps running).
func (w *WindowAPI) HideWindow() { w.a.HideWindow() }

// QuitApp quits Herald.
func (w *WindowAPI) QuitApp() { w.a.QuitApp() }
