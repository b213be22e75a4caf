// Command herald is the Herald desktop companion for Hermes Agent.
//
// With a subcommand (watch, approve, pending, log) it is the terminal
// surface; `herald version` and `herald help` print and exit, and any other
// word is a usage error (run.go). Without one it is the desktop app: on
// Linux, built without the desktop tag, the always-on tray, notifications
// and push channels, which start the window program herald-window (built
// with -tags desktop,production,webkit2_41) while the window is open; built
// with the desktop tag (macOS, Windows, or herald-window started by hand)
// window, tray and notifications in one Wails process (main_split.go).
package main

import (
	"context"
	"embed"
	"fmt"
	stdlog "log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/herald-desktop/herald/app"
	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/service"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/options/mac"
	"github.com/wailsapp/wails/v2/pkg/options/windows"
)

//go:embed all:frontend/dist
var assets embed.FS

// appIcon is Herald's icon (package brand, written by brand/gen) for the
// window and the About box.
//
//go:embed build/appicon.png
var appIcon []byte

// windowIcon is the icon at 256 px for the window on Linux: GTK 3 drops a
// window icon that does not fit one X11 request (512 px and more).
//
//go:embed build/linux/icons/hicolor/256x256/apps/herald.png
var windowIcon []byte

// version and commit are set at build time:
// -ldflags "-X main.version=1.2.3 -X main.commit=abcdef".
var (
	version = "dev"
	commit  = ""
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// runDesktop runs the window, tray and notifications until the user quits.
func runDesktop(f desktopFlags) error {
	hidden, noTray := &f.hidden, &f.noTray
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
	stdlog.SetFlags(0)
	stdlog.SetOutput(app.LibraryLog(log)) // the tray library's lines, as Herald's
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
	winW, winH := app.InitialWindowSize(st)
	err = wails.Run(&options.App{
		Title:  "Herald",
		Width:  winW,
		Height: winH,
		Linux: &linux.Options{
			Icon:        windowIcon,
			ProgramName: "herald", // WM_CLASS: the desktop entry's StartupWMClass
			// Wails' default when Linux options are nil; software rendering
			// also keeps the idle footprint small.
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
		Mac: &mac.Options{
			About: &mac.AboutInfo{Title: "Herald " + version, Message: "A live companion for Hermes Agent", Icon: appIcon},
		},
		Windows:           &windows.Options{Theme: windows.SystemDefault},
		MinWidth:          app.MinWindowWidth,
		MinHeight:         app.MinWindowHeight,
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
		OnBeforeClose: a.BeforeClose, // remembers the window's place
		OnShutdown:    a.Shutdown,
		Bind:          []any{a.WindowAPI()},
	})
	if err != nil {
		return fmt.Errorf("could not start the window: %w", err)
	}
	return nil
}
