// Package app is the only package in Herald that knows about Wails. It adapts
// the service core to methods bound to the window, pushes batched snapshots
// to it, and drives notifications and the tray from the service's event
// stream. Every Wails runtime call sits behind the Platform interface, so the
// adapter is tested with a fake. It names no transport: the gateway form's
// kinds and sign-ins come from backend/source's drivers; a new setting goes
// in settings.go.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// Events the window listens to.
const (
	EventSnapshot     = "herald:snapshot"
	EventOpenApproval = "herald:open-approval"
)

// Deps are what the App is built from.
type Deps struct {
	Version   string
	Clock     clock.Clock
	Settings  *SettingsStore
	Secrets   *Secrets
	Store     approval.Store
	Autostart Autostart
	Logger    *slog.Logger
	// NewTray starts the tray once the app runs; nil runs without one.
	NewTray func(TrayActions) (Tray, error)
	// Control is the control socket path ("" for none).
	Control string
}

// App is the object bound to the frontend.
type App struct {
	d      Deps
	svc    *service.Service
	notify *notifier
	notice *notices
	batch  *Batcher
	log    *slog.Logger
	// consumed is closed once consume returned.
	consumed chan struct{}

	mu       sync.Mutex
	platform Platform
	tray     Tray
	settings Settings
	ctx      context.Context
	cancel   context.CancelFunc
	warnings []string
	// trayMissing: the desktop has no tray host (TrayHostChanged).
	trayMissing bool
	// unconnected: configured gateways that could not start, and why
	// (see unconnected.go).
	unconnected map[string]string
}

// New builds the App and its service; gateways start on Start.
func New(d Deps) *App {
	if d.Clock == nil {
		d.Clock = clock.Real{}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	a := &App{d: d, notify: newNotifier(d.Clock, d.Logger), notice: newNotices(d.Clock), log: d.Logger}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.batch = NewBatcher(d.Clock, 100*time.Millisecond, a.push)
	a.svc = service.New(service.Config{
		Clock:   d.Clock,
		Store:   d.Store,
		Logger:  d.Logger,
		Timeout: a.timeout,
	})
	a.consumed = make(chan struct{})
	go a.consume(a.svc.Subscribe(service.WatchEvents|service.WatchApprovals|service.WatchNotices|service.WatchChanges, 0))
	return a
}

// consume feeds the service's notifications to the surfaces, in order,
// until the app closes: events and approvals to the notifications,
// sessions other clients drive to their offers, and every change to the
// window's batched view.
func (a *App) consume(sub *service.Subscription) {
	defer close(a.consumed)
	for {
		n, err := sub.Next(a.ctx)
		if err != nil {
			return
		}
		if n.Lagged > 0 {
			// The window is refreshed from the whole view below; only
			// the notifications of what was lost are missing.
			a.log.Warn("the window fell behind Herald's events; some notifications were not shown", "lost", n.Lagged)
			a.batch.Poke()
		}
		switch {
		case n.Event != nil:
			a.onEvent(*n.Event)
		case n.Approval != nil:
			a.notify.approval(*n.Approval)
		case n.Notice != nil:
			a.notify.session(*n.Notice)
		case n.Changed:
			a.batch.Poke()
		}
	}
}

// Service is the core the App drives.
func (a *App) Service() *service.Service { return a.svc }

func (a *App) timeout(string) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return time.Duration(a.settings.ApprovalTimeoutSeconds) * time.Second
}

// Start loads settings and connects to every configured gateway. It works
// without a window (tests, --hidden start before Wails is up).
func (a *App) Start() error {
	st, err := a.d.Settings.Load()
	if err != nil {
		a.warn(err.Error())
	}
	a.mu.Lock()
	a.settings = st
	a.mu.Unlock()
	a.notify.setPaused(st.PauseNotifications)
	a.notify.setRuns(st.NotifyRunFinished)
	a.notice.setPaused(st.PauseNotifications)
	for _, g := range st.Gateways {
		if err := a.connect(g); err != nil {
			a.setUnconnected(g, err) // listed with its error and Edit
			if !errors.Is(err, ErrNoKeychain) {
				a.warn(fmt.Sprintf("gateway %s: %v", g.Name, err))
			}
		}
	}
	if a.d.Control != "" {
		if err := a.svc.ServeControl(a.ctx, a.d.Control); err != nil {
			a.warn(err.Error())
		}
	}
	return nil
}

// warn logs msg and shows it in the window, once: the same problem met
// again (every gateway added without a keychain) is not stacked.
func (a *App) warn(msg string) {
	a.log.Warn(msg)
	a.mu.Lock()
	seen := slices.Contains(a.warnings, msg)
	if !seen {
		a.warnings = append(a.warnings, msg)
	}
	a.mu.Unlock()
	if !seen {
		a.batch.Poke()
	}
}

// Attach installs the platform (Wails runtime, or a fake in tests).
func (a *App) Attach(p Platform) {
	a.mu.Lock()
	a.platform = p
	a.mu.Unlock()
	a.notify.attach(p)
	a.notice.attach(p)
	p.OnNotificationAction(a.onNotificationAction)
	a.batch.Poke()
}

// Startup is Wails' OnStartup hook.
func (a *App) Startup(ctx context.Context) {
	p, err := newWailsPlatform(ctx)
	a.Attach(p)
	a.restoreWindow()
	if err != nil {
		a.warn(err.Error()) // logged and shown in the window
	}
	if a.d.NewTray != nil {
		t, err := a.d.NewTray(a)
		if err != nil {
			a.warn("no system tray: " + err.Error())
		} else {
			a.mu.Lock()
			a.tray = t
			a.mu.Unlock()
		}
	}
	a.push()
}

// Shutdown is Wails' OnShutdown hook.
func (a *App) Shutdown(context.Context) { a.Close() }

// Close stops everything.
func (a *App) Close() {
	a.batch.Stop()
	a.cancel()
	a.svc.Close()
	<-a.consumed
	a.notice.close()
	a.mu.Lock()
	t := a.tray
	a.mu.Unlock()
	if t != nil {
		t.Stop()
	}
}

// SecondInstance raises the window when Herald is launched again; the
// second process opens no gateway connection.
func (a *App) SecondInstance() {
	if p := a.plat(); p != nil {
		p.ShowWindow()
	}
}

func (a *App) plat() Platform {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.platform
}

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

func (a *App) onNotificationAction(id, action string) {
	if a.promptAction(id, action) {
		return
	}
	switch action {
	case approval.ChoiceOnce, approval.ChoiceDeny:
		if r, ok := a.svc.Inbox().Get(id); ok && action == approval.ChoiceOnce && !oneClick(r, notifyCommandMax) {
			// The notification could not show all of it: show it first.
			a.openApproval(id)
			return
		}
		ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
		defer cancel()
		if err := a.svc.Answer(ctx, id, action, "notification", false); err != nil {
			a.warn(err.Error())
		}
	case ActionOpen, ActionDefault:
		a.openApproval(id)
	default:
		// ActionClickedOrDismissed (Wails cannot tell a click on the body
		// from a dismissal) or anything unknown: dismissing must never
		// raise the window.
	}
}

func (a *App) openApproval(key string) {
	if p := a.plat(); p != nil {
		p.ShowWindow()
		p.Emit(EventOpenApproval, key)
	}
}

// TrayAnswer answers from the tray menu.
func (a *App) TrayAnswer(key, choice string) {
	if r, ok := a.svc.Inbox().Get(key); ok && choice == approval.ChoiceOnce && !oneClick(r, trayLabelMax) {
		a.openApproval(key) // the tray could not show all of it
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	if err := a.svc.Answer(ctx, key, choice, "tray", false); err != nil {
		a.warn(err.Error())
	}
}

// TrayOpen opens an approval's sheet.
func (a *App) TrayOpen(key string) { a.openApproval(key) }

// TrayReconnect reconnects every gateway now.
func (a *App) TrayReconnect() {
	for _, src := range a.svc.Sources() {
		src.ReconnectNow()
	}
}

// TrayTogglePause flips "pause notifications".
func (a *App) TrayTogglePause() {
	a.mu.Lock()
	p := !a.settings.PauseNotifications
	a.mu.Unlock()
	a.SetPauseNotifications(p)
}

// TrayShow raises the window.
func (a *App) TrayShow() {
	if p := a.plat(); p != nil {
		p.ShowWindow()
	}
}

// TrayQuit quits Herald.
func (a *App) TrayQuit() {
	if p := a.plat(); p != nil {
		p.Quit()
	}
}

// ---- methods bound to the window ----

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

// Reconnect reconnects one gateway now.
func (a *App) Reconnect(name string) error {
	if a.isUnconnected(name) {
		return a.retryUnconnected(name) // e.g. the keychain is unlocked now
	}
	return a.svc.Reconnect(name)
}

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

// SetPauseNotifications silences or resumes notifications.
func (a *App) SetPauseNotifications(p bool) error {
	a.notify.setPaused(p)
	a.notice.setPaused(p)
	err := a.updateSettings(func(s *Settings) { s.PauseNotifications = p })
	a.batch.Poke()
	return err
}

// SetNotifyRunFinished turns the notification for every finished turn
// on or off (off by default).
func (a *App) SetNotifyRunFinished(on bool) error {
	a.notify.setRuns(on)
	err := a.updateSettings(func(s *Settings) { s.NotifyRunFinished = on })
	a.batch.Poke()
	return err
}

// SetQuitWithoutTray chooses what closing the window does on a desktop
// without a tray: quit Herald (on), or keep it running in the background
// (off; the app menu opens the window again).
func (a *App) SetQuitWithoutTray(on bool) error {
	err := a.updateSettings(func(s *Settings) { s.QuitWithoutTray = on })
	a.batch.Poke()
	return err
}

// TrayHostChanged records whether the desktop has a tray host (a
// StatusNotifierWatcher); without one the window says how to get a tray
// and what closing it does. Called at start and whenever a host appears
// or goes (the tray icon registers with a new host by itself).
func (a *App) TrayHostChanged(present bool) {
	a.mu.Lock()
	changed := a.trayMissing == present
	a.trayMissing = !present
	a.mu.Unlock()
	if changed {
		a.batch.Poke()
	}
}

// TrayAbsentQuits reports whether closing the window should quit Herald:
// there is no tray to keep it in, and the user chose to quit then.
func (a *App) TrayAbsentQuits() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.trayMissing && a.settings.QuitWithoutTray
}

// SetAutostart turns start-at-login on or off; the snapshot then reports
// what the OS says.
func (a *App) SetAutostart(on bool) error {
	err := a.d.Autostart.Set(on)
	a.batch.Poke()
	return err
}

func (a *App) updateSettings(fn func(*Settings)) error {
	a.mu.Lock()
	fn(&a.settings)
	st := a.settings
	a.mu.Unlock()
	return a.d.Settings.Save(st)
}

// ProbeGateway asks a gateway (the default transport) which sign-in it
// wants, as its driver detects it.
func (a *App) ProbeGateway(url string) ProbeResult {
	d, err := source.Lookup("")
	if err == nil && d.Detect == nil {
		err = fmt.Errorf("a %s cannot say which sign-in it wants: pick one", strings.ToLower(d.Title))
	}
	if err != nil {
		return ProbeResult{Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
	defer cancel()
	info, err := d.Detect(ctx, source.Config{URL: url})
	if err != nil {
		return ProbeResult{Error: err.Error()}
	}
	return ProbeResult{Reachable: true, AuthRequired: info.AuthRequired, Version: info.Version, SuggestedAuth: info.Auth}
}
