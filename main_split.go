package main

import (
	"context"
	"errors"
	stdlog "log"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/herald-desktop/herald/app"
	"github.com/herald-desktop/herald/approval"
	native "github.com/herald-desktop/herald/desktop"
	"github.com/herald-desktop/herald/service"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
)

// Two process models (see README, "Memory"):
//
//   - split (Linux): `herald`, built without the desktop tag, so without
//     GTK or WebKit, is the always-on process: tray, D-Bus notifications,
//     push channels, control socket. The window is `herald-window --window`,
//     the desktop build, started on demand and gone when closed.
//   - single process (macOS, Windows, or the desktop build started without
//     --window): one Wails process holds everything, as before.

// runApp picks the process model for a desktop launch.
func runApp(f desktopFlags) error {
	switch {
	case f.window:
		if !windowBinary {
			return errors.New("this herald is built without a window: the window program is herald-window (make build)")
		}
		return runWindow()
	case !windowBinary && runtime.GOOS == "linux":
		return runDaemon(f)
	}
	return runDesktop(f)
}

// runDaemon is the always-on process of the split model.
func runDaemon(f desktopFlags) error {
	control := service.DefaultControlPath()
	// A second launch raises the running Herald's window and ends.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	err := service.ShowWindow(sctx, control)
	cancel()
	if err == nil {
		return nil
	}
	settings, err := app.NewSettingsStore(os.Getenv("HERALD_CONFIG_DIR"))
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	stdlog.SetFlags(0)
	stdlog.SetOutput(app.LibraryLog(log)) // the tray library's lines, as Herald's
	store, err := approval.OpenStore(filepath.Join(settings.Dir(), "audit.db"), approval.StoreOptions{})
	if err != nil {
		log.Warn("the approval history is unavailable", "err", err)
		store = nil
	}
	deps := app.Deps{
		Version:  version,
		Settings: settings,
		Secrets:  app.NewSecrets(app.OSKeyring{}),
		Logger:   log,
		Control:  control,
	}
	if store != nil {
		deps.Store = store
		defer store.Close()
	}
	if !f.noTray {
		deps.NewTray = app.NewSystrayTray
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p := &app.HeadlessPlatform{Log: log, OnQuit: stop}
	notes, err := native.NewDBusNotifier()
	if err != nil {
		p.NotesErr = err
	} else {
		p.Notes = notes
		defer notes.Close()
	}
	var win *native.Launcher
	if bin, err := native.WindowBinary(); err != nil {
		log.Warn(err.Error())
	} else {
		win = &native.Launcher{Path: bin, Name: "herald", Args: []string{"--window"}, Log: log}
		p.Window = win
	}
	a := app.New(deps)
	if win != nil {
		// Without a tray, closing the window quits Herald if the user
		// chose so (the window says what closing does, and how to get a
		// tray).
		win.OnExit = func() {
			if a.TrayAbsentQuits() {
				stop()
			}
		}
	}
	if err := a.StartHeadless(p); err != nil {
		log.Warn(err.Error())
	}
	if f.noTray {
		a.TrayHostChanged(false)
	} else if err := native.WatchTrayHost(ctx, a.TrayHostChanged); err != nil {
		log.Warn(err.Error())
		a.TrayHostChanged(false)
	}
	// After a sleep or a network change every link is checked at once
	// (redialed at once after a sleep), not at its next heartbeat.
	if err := native.WatchWake(ctx, func(r native.WakeReason) {
		log.Info("checking every gateway link", "why", string(r))
		a.Service().CheckLinks()
	}); err != nil {
		log.Info(err.Error())
	}
	if !f.hidden {
		p.ShowWindow()
	}
	<-ctx.Done()
	if win != nil {
		win.Stop(3 * time.Second) // it got EventQuit; make sure
	}
	a.Close()
	return nil
}

// runWindow is the window process of the split model: the page, bound to
// app.Window, which forwards to the always-on Herald.
func runWindow() error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	stdlog.SetFlags(0)
	stdlog.SetOutput(app.LibraryLog(log)) // the tray library's lines, as Herald's
	w := app.NewWindow(service.DefaultControlPath(), log)
	var st app.Settings
	if settings, err := app.NewSettingsStore(os.Getenv("HERALD_CONFIG_DIR")); err == nil {
		st, _ = settings.Load()
	}
	winW, winH := app.InitialWindowSize(st)
	err := wails.Run(&options.App{
		Title:  "Herald",
		Width:  winW,
		Height: winH,
		Linux: &linux.Options{
			Icon:             windowIcon,
			ProgramName:      "herald",
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
		MinWidth:      app.MinWindowWidth,
		MinHeight:     app.MinWindowHeight,
		AssetServer:   &assetserver.Options{Assets: assets},
		OnStartup:     func(ctx context.Context) { app.WindowStartup(w, ctx, st) },
		OnDomReady:    func(ctx context.Context) { app.WindowDomReady(w, ctx) },
		OnBeforeClose: func(ctx context.Context) bool { return app.WindowBeforeClose(w, ctx) },
		Bind:          []any{w},
	})
	if err != nil {
		return errors.New("could not open the window: " + err.Error())
	}
	return nil
}
