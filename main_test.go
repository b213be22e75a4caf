package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestMain lets the tests run this test binary as herald itself.
func TestMain(m *testing.M) {
	if os.Getenv("HERALD_TEST_AS_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

func TestRouteOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want route
	}{
		{nil, routeDesktop},
		{[]string{"--hidden"}, routeDesktop},
		{[]string{"-no-tray", "--hidden"}, routeDesktop},
		{[]string{"--bogus"}, routeDesktop}, // a flag error, reported by dispatch
		{[]string{"version"}, routeVersion},
		{[]string{"--version"}, routeVersion},
		{[]string{"help"}, routeCLI},
		{[]string{"-h"}, routeCLI},
		{[]string{"--help"}, routeCLI},
		{[]string{"watch", "--url", "x"}, routeCLI},
		{[]string{"pending"}, routeCLI},
		{[]string{"bogus"}, routeUnknown},
		{[]string{"Version"}, routeUnknown},
		{[]string{"-"}, routeUnknown},
		{[]string{""}, routeUnknown},
	}
	for _, tc := range tests {
		if got := routeOf(tc.args); got != tc.want {
			t.Errorf("routeOf(%q) = %d, want %d", tc.args, got, tc.want)
		}
	}
}

// Nothing but a line of desktop flags, with a display, opens the window;
// everything else answers on the terminal with the right exit code.
func TestDispatch(t *testing.T) {
	t.Parallel()
	withDisplay := func(k string) string {
		if k == "DISPLAY" {
			return ":0"
		}
		return ""
	}
	noEnv := func(string) string { return "" }
	tests := []struct {
		name       string
		args       []string
		getenv     func(string) string
		desktopErr error
		code       int
		window     bool
		stdout     string // substring
		stderr     string // substring; "" means stderr must be empty
	}{
		{name: "version", args: []string{"version"}, getenv: noEnv, stdout: "herald dev ("},
		{name: "help", args: []string{"help"}, getenv: noEnv, stdout: "herald version"},
		{name: "-h", args: []string{"-h"}, getenv: noEnv, stdout: "Usage:"},
		{name: "--help", args: []string{"--help"}, getenv: noEnv, stdout: "--no-tray"},
		{name: "-help as a flag", args: []string{"-help"}, getenv: noEnv, stdout: "Usage:"},
		{name: "unknown word", args: []string{"bogus"}, getenv: withDisplay, code: 2, stderr: `unknown command "bogus"`},
		{name: "unknown flag", args: []string{"--bogus"}, getenv: withDisplay, code: 2, stderr: "flag provided but not defined: -bogus"},
		{name: "stray argument", args: []string{"--hidden", "now"}, getenv: withDisplay, code: 2, stderr: `unexpected argument "now"`},
		{name: "no display", args: nil, getenv: noEnv, code: 1, stderr: "no graphical display"},
		{name: "window", args: []string{"--hidden"}, getenv: withDisplay, window: true},
		{name: "wayland", args: nil, getenv: func(k string) string {
			if k == "WAYLAND_DISPLAY" {
				return "wayland-0"
			}
			return ""
		}, window: true},
		{name: "window fails", args: nil, getenv: withDisplay, desktopErr: errors.New("could not start the window: boom"), window: true, code: 1, stderr: "herald: could not start the window: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			opened := false
			code := dispatch(tc.args, strings.NewReader(""), &out, &errb, tc.getenv, func(f desktopFlags) error {
				opened = true
				if tc.name == "window" && !f.hidden {
					t.Error("--hidden was lost")
				}
				return tc.desktopErr
			})
			if code != tc.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.code, errb.String())
			}
			if opened != tc.window {
				t.Errorf("window opened: %v, want %v", opened, tc.window)
			}
			if !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout %q lacks %q", out.String(), tc.stdout)
			}
			if tc.stderr == "" && errb.Len() > 0 {
				t.Errorf("unexpected stderr %q", errb.String())
			}
			if tc.stderr != "" {
				if !strings.Contains(errb.String(), tc.stderr) {
					t.Errorf("stderr %q lacks %q", errb.String(), tc.stderr)
				}
				if n := strings.Count(strings.TrimSuffix(errb.String(), "\n"), "\n"); n > 0 {
					t.Errorf("stderr has %d lines, want one: %q", n+1, errb.String())
				}
			}
		})
	}
}

func TestGuardTurnsAPanicIntoOneLineAndALog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var errb bytes.Buffer
	code := guard(&errb, dir, func() int { panic("boom\x1b[2J in the engine") })
	if code != 70 {
		t.Fatalf("exit code %d, want 70", code)
	}
	msg := errb.String()
	if strings.Count(msg, "\n") != 1 || strings.Contains(msg, "goroutine") || strings.Contains(msg, "\x1b") {
		t.Fatalf("message is not one clean line: %q", msg)
	}
	path := filepath.Join(dir, crashLogName)
	if !strings.Contains(msg, path) {
		t.Fatalf("message %q does not name the log %s", msg, path)
	}
	log, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "panic: boom") || !strings.Contains(string(log), "goroutine") {
		t.Fatalf("the log lacks the panic and its stack:\n%s", log)
	}
	// No crash: the code passes through, nothing is written.
	if code := guard(&errb, t.TempDir(), func() int { return 3 }); code != 3 {
		t.Fatalf("code %d", code)
	}
	// No writable folder: still one line, no trace.
	errb.Reset()
	guard(&errb, "", func() int { panic("x") })
	if strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "no crash log") {
		t.Fatalf("%q", errb.String())
	}
}

func TestVersionLine(t *testing.T) {
	t.Parallel()
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"},
		{Key: "vcs.modified", Value: "true"},
	}}
	got := versionLine("1.2.3", "", info)
	for _, want := range []string{"herald 1.2.3 (", "commit 0123456789ab+dirty", "go1.26.8"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if got := versionLine("dev", "", nil); !strings.HasPrefix(got, "herald dev (") || strings.Contains(got, "commit") {
		t.Errorf("%q", got)
	}
	if got := versionLine("1.2.3", "fedcba9876543210", &debug.BuildInfo{GoVersion: "go1.26.8"}); !strings.Contains(got, "commit fedcba987654,") {
		t.Errorf("the -X commit is lost: %q", got)
	}
}

// The real entry point, in a process of its own without a display.
func TestMainWithoutADisplay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"version"}, 0, "herald dev (", ""},
		{[]string{"help"}, 0, "Usage:", ""},
		{[]string{"-h"}, 0, "Usage:", ""},
		{[]string{"frobnicate"}, 2, "", "unknown command \"frobnicate\"; run `herald help` for the list\n"},
		{[]string{"wacth"}, 2, "", "unknown command \"wacth\" (did you mean \"watch\"?); run `herald help` for the list\n"},
		{[]string{"vesion"}, 2, "", "unknown command \"vesion\" (did you mean \"version\"?); run `herald help` for the list\n"},
		{nil, 1, "", "no graphical display"},
	}
	for _, tc := range tests {
		cmd := exec.Command(os.Args[0], tc.args...)
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
				env = append(env, kv)
			}
		}
		cmd.Env = append(env, "HERALD_TEST_AS_MAIN=1", "XDG_CACHE_HOME="+t.TempDir())
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), tc.stderr) {
			t.Errorf("herald %q: exit %d, stdout %q, stderr %q", tc.args, code, out.String(), errb.String())
		}
		if strings.Contains(errb.String(), "goroutine") || strings.Contains(errb.String(), "Gtk") {
			t.Errorf("herald %q leaked a trace: %q", tc.args, errb.String())
		}
	}
}
