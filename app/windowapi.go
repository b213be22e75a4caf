package app

import (
	"context"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
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
	a.mu.Lock()
	t := a.tray
	a.mu.Unlock()
	if t != nil {
		t.Update(trayModel(s))
	}
}

// Snapshot is the window's whole state; it pulls one on load and then
// follows EventSnapshot.
func (a *App) Snapshot() Snapshot {
	v := a.svc.View()
	a.mu.Lock()
	st := a.settings
	warnings := append(append([]string(nil), a.warnings...), v.Limits...)
	trayMissing := a.trayMissing
	a.mu.Unlock()
	auto, _ := a.d.Autostart.Enabled()
	s := Snapshot{
		Version:             a.d.Version,
		Now:                 v.At,
		Sessions:            displaySessions(v.Sessions),
		Live:                liveViews(v.Live),
		NotificationsPaused: st.PauseNotifications,
		SecretsSessionOnly:  a.d.Secrets != nil && a.d.Secrets.SessionOnly(),
		Autostart:           auto,
		TrayMissing:         trayMissing,
		QuitWithoutTray:     st.QuitWithoutTray,
		NotifyRunFinished:   st.NotifyRunFinished,
		Warnings:            warnings,
		AuditError:          v.AuditError,
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
			Name: g.Gateway, URL: urls[g.Gateway], Kind: firstNonEmpty(g.Kind, "ws"), State: string(g.State), Error: approval.VisibleLine(g.Err),
			MayHaveMissedEvents: g.MayHaveMissedEvents, MissedReason: approval.VisibleLine(g.MissedReason), Version: approval.VisibleLine(g.Version),
		})
	}
	for _, r := range v.Approvals {
		s.Approvals = append(s.Approvals, approvalView(r))
	}
	s.Gateways = a.withUnconnected(s.Gateways, st.Gateways)
	for i, r := range v.Recent {
		if i == 20 {
			break
		}
		s.Recent = append(s.Recent, approvalView(r))
	}
	return s
}

// Answer sends the user's choice from the window.
func (a *App) Answer(key, choice string, confirmAlways bool) error {
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	// The error may quote a gateway (approval's errors show it as
	// VisibleLine already): surface.LineError marks anything left raw.
	return surface.LineError(a.svc.Answer(ctx, key, choice, "window", confirmAlways))
}

// Dismiss ends an uncertain request without sending anything.
func (a *App) Dismiss(key string) error { return surface.LineError(a.svc.Dismiss(key, "window")) }

// History lists the audit log, newest last, with each command as the
// window shows it.
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
