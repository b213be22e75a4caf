package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/herald-desktop/herald/app"
	native "github.com/herald-desktop/herald/desktop"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/mac"
	"github.com/wailsapp/wails/v2/pkg/options/windows"
)

// The desktop app's process models (see BENCHMARKS.md, "Memory"):
//
//   - split (Linux): `herald`, built without the desktop tag, so without
//     GTK or WebKit, is the always-on process (runDaemon): tray, D-Bus
//     notifications, push channels, control socket. The window is
//     `herald-window --window` (runWindow), the desktop build, started on
//     demand and gone when closed.
//   - single process (macOS, Windows, or the desktop build started without
//     --window): one Wails process holds everything (runSingle).
//
// Each is built by assemble (assemble.go); what differs between them is
// only what runs around the App.

// runDesktop runs the process model this build and system call for.
func runDesktop(f desktopFlags) error {
	switch {
	case f.window:
		if !windowBinary {
			return errors.New("this herald is built without a window: the window program is herald-window (make build)")
		}
		return runWindow(f)
	case !windowBinary && runtime.GOOS == "linux":
		return runDaemon(f)
	}
	return runSingle(f)
}

// runSingle runs the window, tray and notifications in one Wails process
// until the user quits.
func runSingle(f desktopFlags) error {
	p, err := assemble(f, os.Getenv)
	if err != nil {
		return err
	}
	// A second launch finds the history locked by the first: Wails'
	// single-instance lock below hands over to the first one.
	a := p.newApp()
	defer p.close()
	started := false
	o := p.windowOptions()
	o.Mac = &mac.Options{
		About: &mac.AboutInfo{Title: "Herald " + version, Message: "A live companion for Hermes Agent", Icon: appIcon},
	}
	o.Windows = &windows.Options{Theme: windows.SystemDefault}
	o.StartHidden = f.hidden
	o.HideWindowOnClose = p.st.CloseToTray
	o.SingleInstanceLock = &options.SingleInstanceLock{
		UniqueId:               "herald-desktop-6c1f",
		OnSecondInstanceLaunch: func(options.SecondInstanceData) { a.SecondInstance() },
	}
	o.OnStartup = func(ctx context.Context) {
		// Only the first instance gets here: connect now.
		if !started {
			started = true
			a.Start()
		}
		a.Startup(ctx)
	}
	o.OnBeforeClose = a.BeforeClose // remembers the window's place
	o.OnShutdown = a.Shutdown
	o.Bind = []any{a.WindowAPI()}
	tuneWebKit()
	if err := wails.Run(o); err != nil {
		return fmt.Errorf("could not start the window: %w", err)
	}
	return nil
}

// runDaemon is the always-on process of the split model. A second launch
// raises the running Herald's window and ends.
func runDaemon(f desktopFlags) error {
	p, err := assemble(f, os.Getenv)
	if err != nil {
		return err
	}
	if p.raiseRunning() {
		return nil
	}
	a := p.newApp()
	defer p.close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hp := &app.HeadlessPlatform{Log: p.log, OnQuit: stop}
	notes, err := native.NewDBusNotifier()
	if err != nil {
		hp.NotesErr = err
	} else {
		hp.Notes = notes
		defer notes.Close()
	}
	var win *native.Launcher
	if bin, err := native.WindowBinary(); err != nil {
		p.log.Warn(err.Error())
	} else {
		win = &native.Launcher{Path: bin, Name: "herald", Args: []string{"--window"}, Log: p.log}
		hp.Window = win
		// Without a tray, closing the window quits Herald if the user
		// chose so (the window says what closing does, and how to get a
		// tray).
		win.OnExit = func() {
			if a.TrayAbsentQuits() {
				stop()
			}
		}
	}
	if err := a.StartHeadless(hp); err != nil {
		p.log.Warn(err.Error())
	}
	if f.noTray {
		a.TrayHostChanged(false)
	} else if err := native.WatchTrayHost(ctx, a.TrayHostChanged); err != nil {
		p.log.Warn(err.Error())
		a.TrayHostChanged(false)
	}
	// After a sleep or a network change every link is checked at once
	// (redialed at once after a sleep), not at its next heartbeat.
	if err := native.WatchWake(ctx, func(r native.WakeReason) {
		p.log.Info("checking every gateway link", "why", string(r))
		a.Service().CheckLinks()
	}); err != nil {
		p.log.Info(err.Error())
	}
	if !f.hidden {
		hp.ShowWindow()
	}
	<-ctx.Done()
	if win != nil {
		win.Stop(3 * time.Second) // it got EventQuit; make sure
	}
	a.Close()
	return nil
}

// runWindow is the window process of the split model: the page, bound to
// app.Window, which forwards to the always-on Herald over the control
// socket and follows its events there.
func runWindow(f desktopFlags) error {
	p, err := assemble(f, os.Getenv)
	if err != nil {
		return err
	}
	w := app.NewWindow(p.control, p.log)
	o := p.windowOptions()
	o.OnStartup = func(ctx context.Context) { app.WindowStartup(w, ctx, p.st) }
	o.OnDomReady = func(ctx context.Context) { app.WindowDomReady(w, ctx) }
	o.OnBeforeClose = func(ctx context.Context) bool { return app.WindowBeforeClose(w, ctx) }
	o.Bind = []any{w}
	tuneWebKit()
	if err := wails.Run(o); err != nil {
		return errors.New("could not open the window: " + err.Error())
	}
	return nil
}
