package app

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// StartAtLogin is one OS's start-at-login mechanism. Enabled reads the
// OS's own record each time, so the toggle always shows the truth, also
// after the user changed it elsewhere (desktop settings, Task Manager).
type StartAtLogin interface {
	Enabled() (bool, error)
	Set(on bool) error
}

// Autostart is start-at-login on the OS Herald runs on: an XDG autostart
// entry on Linux and the BSDs, a LaunchAgent on macOS, a value under the
// Run key on Windows. The zero value uses this executable with --hidden.
type Autostart struct {
	// Dir is the folder of the XDG entry (default: UserConfigDir/autostart)
	// or of the LaunchAgent (default: ~/Library/LaunchAgents).
	Dir string
	// Exec is the XDG entry's command line (default: from Args).
	Exec string
	// Args is the command to start (default: this executable --hidden).
	Args []string
	// GOOS picks the mechanism (default: runtime.GOOS).
	GOOS string
}

// Enabled reports whether Herald starts at login.
func (a Autostart) Enabled() (bool, error) { return a.mechanism().Enabled() }

// Set turns start-at-login on or off.
func (a Autostart) Set(on bool) error { return a.mechanism().Set(on) }

func (a Autostart) mechanism() StartAtLogin {
	goos := a.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	switch goos {
	case "darwin":
		return LaunchAgent{Dir: a.Dir, Args: a.Args}
	case "windows":
		return RunKey{Args: a.Args}
	}
	return XDGAutostart{Dir: a.Dir, Exec: a.Exec, Args: a.Args}
}

// selfArgs is the default command: this executable, hidden in the tray.
func selfArgs(args []string) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find Herald's own path: %v", err)
	}
	return []string{self, "--hidden"}, nil
}

// XDGAutostart is an XDG autostart entry (~/.config/autostart/herald.desktop).
type XDGAutostart struct {
	Dir  string
	Exec string
	Args []string
}

func (a XDGAutostart) path() (string, error) {
	dir := a.Dir
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("cannot find your configuration folder: %v", err)
		}
		dir = filepath.Join(base, "autostart")
	}
	return filepath.Join(dir, "herald.desktop"), nil
}

// Enabled reports whether the entry exists and is not Hidden=true.
func (a XDGAutostart) Enabled() (bool, error) {
	return entryEnabled(a.path, func(b []byte) bool {
		// A desktop entry with Hidden=true is disabled by the desktop.
		for _, line := range strings.Split(string(b), "\n") {
			if strings.EqualFold(strings.TrimSpace(line), "Hidden=true") {
				return false
			}
		}
		return true
	})
}

// entryEnabled reads the start-at-login file at path(): absent is off,
// otherwise on reports whether its content leaves it enabled.
func entryEnabled(path func() (string, error), on func([]byte) bool) (bool, error) {
	p, err := path()
	if err != nil {
		return false, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return on(b), nil
}

// Set writes or removes the entry.
func (a XDGAutostart) Set(on bool) error {
	p, err := a.path()
	if err != nil {
		return err
	}
	if !on {
		return removeIfThere(p)
	}
	exec := a.Exec
	if exec == "" {
		args, err := selfArgs(a.Args)
		if err != nil {
			return err
		}
		q := make([]string, len(args))
		for i, s := range args {
			q[i] = quoteExec(s)
		}
		exec = strings.Join(q, " ")
	}
	entry := "[Desktop Entry]\nType=Application\nName=Herald\nComment=Hermes Agent companion\nExec=" + exec +
		"\nIcon=herald\nTerminal=false\nX-GNOME-Autostart-enabled=true\n"
	return writeFile(p, entry)
}

// quoteExec quotes one argument for a desktop entry's Exec key.
func quoteExec(p string) string {
	if p != "" && !strings.ContainsAny(p, " \t\n\"'\\$`%<>~|&;*?#()") {
		return p
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`", `$`, `\$`, `%`, `%%`)
	return `"` + r.Replace(p) + `"`
}

// LaunchAgentLabel is the LaunchAgent's label and file name.
const LaunchAgentLabel = BundleID

// LaunchAgent is a per-user launchd job (~/Library/LaunchAgents) that
// starts Herald when the user logs in.
type LaunchAgent struct {
	Dir  string
	Args []string
}

func (l LaunchAgent) path() (string, error) {
	dir := l.Dir
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find your home folder: %v", err)
		}
		dir = filepath.Join(home, "Library", "LaunchAgents")
	}
	return filepath.Join(dir, LaunchAgentLabel+".plist"), nil
}

var plistDisabled = regexp.MustCompile(`<key>Disabled</key>\s*<true\s*/>`)

// Enabled reports whether the job exists and is not Disabled.
func (l LaunchAgent) Enabled() (bool, error) {
	return entryEnabled(l.path, func(b []byte) bool { return !plistDisabled.Match(b) })
}

// Set writes or removes the job; launchd reads it at the next login.
func (l LaunchAgent) Set(on bool) error {
	p, err := l.path()
	if err != nil {
		return err
	}
	if !on {
		return removeIfThere(p)
	}
	args, err := selfArgs(l.Args)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + LaunchAgentLabel + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	for _, a := range args {
		var esc bytes.Buffer
		if err := xml.EscapeText(&esc, []byte(a)); err != nil {
			return err
		}
		b.WriteString("\t\t<string>" + esc.String() + "</string>\n")
	}
	b.WriteString(`	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>ProcessType</key>
	<string>Interactive</string>
</dict>
</plist>
`)
	return writeFile(p, b.String())
}

func removeIfThere(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot remove %s: %v", p, err)
	}
	return nil
}

func writeFile(p, text string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %v", filepath.Dir(p), err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %v", p, err)
	}
	return nil
}

// RunKey is a value under HKCU\Software\Microsoft\Windows\CurrentVersion\Run
// (see autostart_windows.go); elsewhere it reports that it cannot work.
type RunKey struct {
	Args []string
}

// Registry locations of the Run key and of its Task Manager switch.
const (
	runKeyPath      = `Software\Microsoft\Windows\CurrentVersion\Run`
	runApprovedPath = `Software\Microsoft\Windows\CurrentVersion\Explorer\StartupApproved\Run`
	runValueName    = "Herald"
)
