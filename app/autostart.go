package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Autostart manages start-at-login through an XDG autostart entry
// (~/.config/autostart/herald.desktop). Enabled reads the file itself, so
// the toggle always reflects the OS truth, also after the user removed the
// entry by hand.
type Autostart struct {
	// Dir is the autostart directory (default: UserConfigDir/autostart).
	Dir string
	// Exec is the command line to start (default: this executable --hidden).
	Exec string
}

func (a Autostart) path() (string, error) {
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

// Enabled reports whether Herald starts at login.
func (a Autostart) Enabled() (bool, error) {
	p, err := a.path()
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
	// A desktop entry with Hidden=true is disabled by the desktop.
	for _, line := range strings.Split(string(b), "\n") {
		if strings.EqualFold(strings.TrimSpace(line), "Hidden=true") {
			return false, nil
		}
	}
	return true, nil
}

// Set turns start-at-login on or off.
func (a Autostart) Set(on bool) error {
	p, err := a.path()
	if err != nil {
		return err
	}
	if !on {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("cannot remove %s: %v", p, err)
		}
		return nil
	}
	exec := a.Exec
	if exec == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("cannot find Herald's own path: %v", err)
		}
		exec = quoteExec(self) + " --hidden"
	}
	entry := "[Desktop Entry]\nType=Application\nName=Herald\nComment=Hermes Agent companion\nExec=" + exec + "\nTerminal=false\nX-GNOME-Autostart-enabled=true\n"
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %v", filepath.Dir(p), err)
	}
	if err := os.WriteFile(p, []byte(entry), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %v", p, err)
	}
	return nil
}

// quoteExec quotes a path for a desktop entry's Exec key.
func quoteExec(p string) string {
	if !strings.ContainsAny(p, " \t\"'\\$`") {
		return p
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`", `$`, `\$`)
	return `"` + r.Replace(p) + `"`
}
