// Command herald is the Herald desktop companion for Hermes Agent.
//
// With a subcommand (watch, approve, pending, log) it is the terminal
// surface. Otherwise, built with -tags desktop,production (and webkit2_41 on
// current Linux), it runs the native window, tray and notifications;
// without the desktop tag the window part is a stub.
package main

import (
	"context"
	"embed"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/herald-desktop/herald/app"
	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/cli"
	"github.com/herald-desktop/herald/service"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
)

//go:embed all:frontend/dist
var assets embed.FS

var version = "dev"

func main() {
	if len(os.Args) > 1 && cli.IsCommand(os.Args[1]) {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if err := runDesktop(); err != nil {
		fmt.Fprintln(os.Stderr, "herald:", err)
		os.Exit(1)
	}
}

func runDesktop() error {
	fs := flag.NewFlagSet("herald", flag.ContinueOnError)
	hidden := fs.Bool("hidden", false, "start in the tray without showing the window")
	noTray := fs.Bool("no-tray", false, "run without a tray icon")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	settings, err := app.NewSettingsStore(os.Getenv("HERALD_CONFIG_DIR"))
	if err != nil {
		return err
	}
	st, _ := settings.Load()
	store, err := approval.OpenStore(filepath.Join(settings.Dir(), "audit.db"), approval.StoreOptions{})
	if err != nil {
		// A second instance finds the history locked: Wails' single-instance
		// lock below hands over to the first one, so run without it.
		store = nil
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	deps := app.Deps{
		Version:  version,
		Settings: settings,
		Secrets:  app.NewSecrets(app.OSKeyring{}),
		Logger:   log,
		Control:  service.DefaultControlPath(),
	}
	if store != nil {
		deps.Store = store
		defer store.Close()
	}
	if !*noTray {
		deps.NewTray = app.NewSystrayTray
	}
	a := app.New(deps)
	started := false
	err = wails.Run(&options.App{
		Title:             "Herald",
		Width:             1100,
		Height:            760,
		MinWidth:          720,
		MinHeight:         480,
		StartHidden:       *hidden,
		HideWindowOnClose: st.CloseToTray,
		AssetServer:       &assetserver.Options{Assets: assets},
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId:               "herald-desktop-6c1f",
			OnSecondInstanceLaunch: func(options.SecondInstanceData) { a.SecondInstance() },
		},
		OnStartup: func(ctx context.Context) {
			// Only the first instance gets here: connect now.
			if !started {
				started = true
				a.Start()
			}
			a.Startup(ctx)
		},
		OnShutdown: a.Shutdown,
		Bind:       []any{a},
	})
	if err != nil {
		return fmt.Errorf("could not start the window: %w", err)
	}
	return nil
}
