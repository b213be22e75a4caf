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
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
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
	// HistoryErr is why the approval history could not be opened (Store
	// is then nil): the window says so.
	HistoryErr error
}

// App is the object bound to the frontend.
type App struct {
	d      Deps
	svc    *service.Service
	notify *notifier
	notice *notices
	// desk applies the notification policy to every notification.
	desk  *desk
	batch *Batcher
	// trayPump updates the tray at once on a change (the window's
	// snapshot waits for the batch).
	trayPump *pump
	log      *slog.Logger
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
	// trayTicking: a refresh of the tray's run times is armed.
	trayTicking bool
	// warnKeys ties a warning to the request it is about: it goes once
	// the request is settled. dismissed are warnings the user closed;
	// they do not come back.
	warnKeys  map[string]string
	dismissed map[string]bool
	// dnd: the desktop's do not disturb is on.
	dnd bool
	// unconnected: configured gateways that could not start, and why
	// (see unconnected.go).
	unconnected map[string]string
	// bridgeProblem: configured gateways whose bridge could not be
	// added, and why (see bridge.go).
	bridgeProblem map[string]string
}

// New builds the App and its service; gateways start on Start.
func New(d Deps) *App {
	if d.Clock == nil {
		d.Clock = clock.Real{}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	a := &App{d: d, notify: newNotifier(d.Clock, d.Logger), notice: newNotices(d.Clock), desk: newDesk(d.Clock), log: d.Logger}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.batch = NewBatcher(d.Clock, 100*time.Millisecond, a.push)
	a.trayPump = newPump(d.Clock, trayGap, a.updateTray)
	a.svc = service.New(service.Config{
		Clock:   d.Clock,
		Store:   d.Store,
		Logger:  d.Logger,
		Timeout: a.timeout,
	})
	if d.HistoryErr != nil {
		a.warn(fmt.Sprintf("%v; approvals still work, but are not being recorded", d.HistoryErr))
	}
	a.consumed = make(chan struct{})
	go a.consume(a.svc.Subscribe(service.WatchEvents|service.WatchApprovals|service.WatchNotices|service.WatchChanges, 0))
	return a
}

// Service is the core the App drives.
func (a *App) Service() *service.Service { return a.svc }

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
	a.desk.setPaused(st.PauseNotifications)
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
// again (every gateway added without a keychain) is not stacked, and one
// the user dismissed does not come back.
func (a *App) warn(msg string) { a.warnFor("", msg) }

// warnFor is warn for a warning about request key: it goes once the
// request is settled (settleWarnings).
func (a *App) warnFor(key, msg string) {
	a.log.Warn(msg)
	a.mu.Lock()
	seen := slices.Contains(a.warnings, msg) || a.dismissed[msg]
	if !seen {
		a.warnings = append(a.warnings, msg)
		if key != "" {
			if a.warnKeys == nil {
				a.warnKeys = map[string]string{}
			}
			a.warnKeys[msg] = key
		}
	}
	a.mu.Unlock()
	if !seen {
		a.batch.Poke()
	}
}

// maxDismissed bounds the dismissed warnings remembered.
const maxDismissed = 256

// DismissWarning closes a warning the user read; the same warning does
// not come back.
func (a *App) DismissWarning(msg string) {
	a.mu.Lock()
	i := slices.Index(a.warnings, msg)
	if i >= 0 {
		a.warnings = slices.Delete(slices.Clone(a.warnings), i, i+1)
		delete(a.warnKeys, msg)
		if a.dismissed == nil || len(a.dismissed) >= maxDismissed {
			a.dismissed = map[string]bool{}
		}
		a.dismissed[msg] = true
	}
	a.mu.Unlock()
	if i >= 0 {
		a.batch.Poke()
	}
}

// settleWarnings drops the warnings about a request that is settled.
func (a *App) settleWarnings(r approval.Request) {
	if r.State.Live() {
		return
	}
	a.mu.Lock()
	n := len(a.warnings)
	for msg, key := range a.warnKeys {
		if key == r.Key {
			delete(a.warnKeys, msg)
			a.warnings = slices.DeleteFunc(slices.Clone(a.warnings), func(w string) bool { return w == msg })
		}
	}
	changed := len(a.warnings) != n
	a.mu.Unlock()
	if changed {
		a.batch.Poke()
	}
}

// Attach installs the platform (Wails runtime, or a fake in tests).
func (a *App) Attach(p Platform) {
	a.mu.Lock()
	a.platform = p
	a.mu.Unlock()
	a.desk.attach(p)
	a.notify.attach(a.desk)
	a.notice.attach(a.desk)
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
	a.startTray()
	a.push()
}

// startTray starts the tray, when the app has one.
func (a *App) startTray() {
	if a.d.NewTray == nil {
		return
	}
	t, err := a.d.NewTray(a)
	if err != nil {
		a.warn("no system tray: " + err.Error())
		return
	}
	a.mu.Lock()
	a.tray = t
	a.mu.Unlock()
}

// Shutdown is Wails' OnShutdown hook.
func (a *App) Shutdown(context.Context) { a.Close() }

// Close stops everything.
func (a *App) Close() {
	a.batch.Stop()
	a.trayPump.stop()
	a.cancel()
	a.svc.Close()
	<-a.consumed
	a.notice.close()
	a.desk.close()
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

// ---- methods bound to the window ----
