package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/herald-desktop/herald/cli"
)

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
	window bool // the window process of the split model (main_split.go)
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

// run is herald's whole command line: it returns the exit code. A panic
// on this goroutine becomes one line and a crash log, never a trace.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return guard(stderr, crashDir(), func() int { return dispatch(args, stdin, stdout, stderr, os.Getenv, runApp) })
}

// dispatch runs what args ask for; desktop runs the window.
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

// oneLine keeps at most n runes of s and no control characters (an
// argument or a panic value may hold anything).
func oneLine(s string, n int) string {
	r := []rune(strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return ' '
		}
		return c
	}, s))
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return string(r)
}

// crashDir is where crash logs go: the user cache folder's herald/.
func crashDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "herald")
}

const crashLogName = "crash.log"

// guard runs fn; a panic becomes a short message that names a crash log
// holding the details, and exit code 70 (EX_SOFTWARE).
func guard(stderr io.Writer, dir string, fn func() int) (code int) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		code = 70
		msg := oneLine(fmt.Sprint(r), 160)
		path, err := appendCrashLog(dir, fmt.Sprintf("%s panic: %v\n\n%s\n", time.Now().UTC().Format(time.RFC3339), r, debug.Stack()))
		if err != nil {
			fmt.Fprintf(stderr, "herald: internal error (%s); no crash log could be written (%v). Please report this bug.\n", msg, err)
			return
		}
		fmt.Fprintf(stderr, "herald: internal error (%s). Please report this bug with the details in %s\n", msg, path)
	}()
	return fn()
}

func appendCrashLog(dir, text string) (string, error) {
	if dir == "" {
		return "", errors.New("no cache folder")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, crashLogName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return path, err
}

// startCrashOutput copies a fatal crash on any goroutine (which no
// recover can catch) into the crash log, so a window started from the app
// menu, whose stderr nobody reads, still leaves the details behind.
func startCrashOutput(dir string) (*os.File, error) {
	if dir == "" {
		return nil, errors.New("no cache folder")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, crashLogName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if err := debug.SetCrashOutput(f, debug.CrashOptions{}); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
