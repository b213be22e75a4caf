// Command herald is the Herald desktop companion for Hermes Agent.
//
// With a subcommand (watch, approve, pending, log…) it is the terminal
// surface (package cli); `herald version` and `herald help` print and
// exit, and any other word is a usage error. Without one it is the desktop
// app, in one of three process models (desktop.go): on Linux, built
// without the desktop tag, the always-on tray, notifications and push
// channels, which start the window program herald-window (built with
// -tags desktop,production,webkit2_41) while the window is open; that
// window program; and, built with the desktop tag (macOS, Windows, or
// herald-window started by hand), window, tray and notifications in one
// Wails process.
//
// The files read top down, and every call goes down the list, never back
// up (layout_test.go checks it):
//
//	main.go      the entry point: main, run, the command line's routes
//	desktop.go   the three process models of the desktop app
//	assemble.go  the one place the program is built: logger, settings,
//	             approval history, the App and its window options
//	crash.go     a panic becomes one line and a crash log
//	tags_*.go    what a build tag decides, as constants only
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/herald-desktop/herald/cli"
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

// run is herald's whole command line: it returns the exit code. A panic
// on this goroutine becomes one line and a crash log, never a trace.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return guard(stderr, crashDir(), func() int { return dispatch(args, stdin, stdout, stderr, os.Getenv, runDesktop) })
}

// dispatch runs what args ask for; desktop runs the desktop app.
func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, desktop func(desktopFlags) error) int {
	switch routeOf(args) {
	case routeVersion:
		info, _ := debug.ReadBuildInfo()
		fmt.Fprintln(stdout, versionLine(version, commit, info))
		return 0
	case routeCLI:
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return cli.Main(ctx, args, stdin, stdout, stderr)
	case routeUnknown:
		fmt.Fprintf(stderr, "herald: unknown command %q%s; run `herald help` for the list\n", oneLine(args[0], 60), cli.DidYouMean(args[0]))
		return 2
	}
	f, err := parseDesktopFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return cli.Main(context.Background(), []string{"help"}, stdin, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "herald: %s; run `herald help` for the list\n", oneLine(err.Error(), 120))
		return 2
	}
	if msg := noDisplay(runtime.GOOS, getenv); msg != "" && !generatingBindings {
		fmt.Fprintln(stderr, "herald:", msg)
		return 1
	}
	if p, err := startCrashOutput(crashDir()); err == nil {
		defer p.Close()
	}
	if err := desktop(f); err != nil {
		fmt.Fprintln(stderr, "herald:", err)
		return 1
	}
	return 0
}

// route is what a command line asks for.
type route int

const (
	routeDesktop route = iota // no word (flags only): the window
	routeCLI                  // a terminal subcommand, help included
	routeVersion              // herald version
	routeUnknown              // any other word: a usage error
)

// routeOf classifies a command line (without the program name). Only a
// line of flags, or none, reaches the desktop, so nothing that is not
// meant to open a window ever needs a display.
func routeOf(args []string) route {
	if len(args) == 0 {
		return routeDesktop
	}
	switch a := args[0]; {
	case a == "version" || a == "--version" || a == "-version":
		return routeVersion
	case cli.IsCommand(a):
		return routeCLI
	case strings.HasPrefix(a, "-") && a != "-":
		return routeDesktop
	}
	return routeUnknown
}

// desktopFlags are the window's flags.
type desktopFlags struct {
	hidden bool
	noTray bool
	window bool // the window process of the split model (desktop.go)
}

func parseDesktopFlags(args []string) (desktopFlags, error) {
	var f desktopFlags
	fs := flag.NewFlagSet("herald", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.hidden, "hidden", false, "start in the tray without showing the window")
	fs.BoolVar(&f.noTray, "no-tray", false, "run without a tray icon")
	fs.BoolVar(&f.window, "window", false, "internal: be the window process of a running Herald")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return f, nil
}

// noDisplay explains why the window cannot open, or returns "".
func noDisplay(goos string, getenv func(string) string) string {
	switch goos {
	case "windows", "darwin", "android", "ios":
		return ""
	}
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		return "no graphical display (DISPLAY and WAYLAND_DISPLAY are unset): start Herald from your desktop session, or use `herald watch` in a terminal"
	}
	return ""
}

// versionLine is `herald version`'s output. The commit comes from the
// build's VCS stamp, else from -ldflags "-X main.commit=..." (the Makefile
// sets it: builds with -buildvcs=false carry no stamp).
func versionLine(v, ldCommit string, info *debug.BuildInfo) string {
	parts := []string{runtime.GOOS + "/" + runtime.GOARCH}
	rev, dirty := ldCommit, ""
	if info != nil {
		parts = append([]string{info.GoVersion}, parts...)
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		parts = append([]string{"commit " + rev + dirty}, parts...)
	}
	return fmt.Sprintf("herald %s (%s)", v, strings.Join(parts, ", "))
}
