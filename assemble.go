package main

import (
	"context"
	"fmt"
	stdlog "log"
	"log/slog"
	"os"
	"time"

	"github.com/herald-desktop/herald/app"
	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/service"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
)

// program is the desktop app as every process model builds it, in one
// place: the logger, the settings, the control socket, and for the models
// that hold the App its approval history and dependencies (newApp).
type program struct {
	flags    desktopFlags
	getenv   func(string) string
	log      *slog.Logger
	settings *app.SettingsStore
	st       app.Settings // as read at start: the window's size and place
	control  string
	store    *approval.BoltStore // opened by newApp; nil without a history
}

// assemble builds what every process model uses. Settings that cannot be
// read are the defaults here; the App says what is wrong with them in its
// window.
func assemble(f desktopFlags, getenv func(string) string) (*program, error) {
	log := newLogger()
	dir, err := service.ConfigDir(getenv)
	if err != nil {
		return nil, err
	}
	settings, err := app.NewSettingsStore(dir)
	if err != nil {
		return nil, err
	}
	st, _ := settings.Load()
	return &program{flags: f, getenv: getenv, log: log, settings: settings, st: st, control: service.DefaultControlPath()}, nil
}

// newLogger is Herald's logger: warnings and worse, to stderr. The tray
// library's own lines go through it too.
func newLogger() *slog.Logger {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	stdlog.SetFlags(0)
	stdlog.SetOutput(app.LibraryLog(log))
	return log
}

// raiseRunning asks a Herald already serving the control socket to raise
// its window, and reports whether one did.
func (p *program) raiseRunning() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return service.ShowWindow(ctx, p.control) == nil
}

// newApp opens the approval history and builds the App on it. A history
// that cannot be opened is logged and shown in the window, and Herald
// runs without one (approvals still work). Call close once the App is
// closed.
func (p *program) newApp() *app.App {
	d := app.Deps{
		Version:  version,
		Settings: p.settings,
		Secrets:  app.NewSecrets(app.OSKeyring{}),
		Logger:   p.log,
		Control:  p.control,
	}
	store, err := p.openHistory()
	if err != nil {
		p.log.Warn("the approval history is unavailable", "err", err)
		d.HistoryErr = err
	} else {
		p.store, d.Store = store, store
	}
	if !p.flags.noTray {
		d.NewTray = app.NewSystrayTray
	}
	return app.New(d)
}

// openHistory opens the approval history where every Herald keeps it
// (service.HistoryPath), which `herald log` reads.
func (p *program) openHistory() (*approval.BoltStore, error) {
	path, err := service.HistoryPath(p.getenv)
	if err != nil {
		return nil, err
	}
	return approval.OpenStore(path, approval.StoreOptions{})
}

// windowOptions are the Wails options every window shares: its title,
// size, icon and page. Each model adds its hooks and bindings.
func (p *program) windowOptions() *options.App {
	w, h := app.InitialWindowSize(p.st)
	return &options.App{
		Title:  "Herald",
		Width:  w,
		Height: h,
		Linux: &linux.Options{
			Icon:        windowIcon,
			ProgramName: "herald", // WM_CLASS: the desktop entry's StartupWMClass
			// Wails' default when Linux options are nil; software rendering
			// also keeps the idle footprint small.
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
		MinWidth:    app.MinWindowWidth,
		MinHeight:   app.MinWindowHeight,
		AssetServer: &assetserver.Options{Assets: assets},
	}
}

// close closes the approval history (after the App).
func (p *program) close() {
	if p.store != nil {
		if err := p.store.Close(); err != nil {
			p.log.Warn(fmt.Sprintf("closing the approval history: %v", err))
		}
	}
}
