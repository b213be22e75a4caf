package service

import (
	"fmt"
	"os"
	"path/filepath"
)

// Where Herald keeps its files. The desktop app, `herald watch` and
// `herald log` all find them here, so what one writes the others read.

// ConfigDir is Herald's configuration folder: $HERALD_CONFIG_DIR when
// set, else herald/ in the user's configuration folder
// (os.UserConfigDir: $XDG_CONFIG_HOME or ~/.config on Linux).
func ConfigDir(getenv func(string) string) (string, error) {
	if d := getenv("HERALD_CONFIG_DIR"); d != "" {
		return d, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("cannot find your configuration folder (%v): set XDG_CONFIG_HOME or HOME, or HERALD_CONFIG_DIR", err)
	}
	return filepath.Join(base, "herald"), nil
}

// HistoryPath is the approval history: audit.db in ConfigDir. The
// desktop app and `herald watch` write it, `herald log` reads it when no
// Herald runs.
func HistoryPath(getenv func(string) string) (string, error) {
	dir, err := ConfigDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "audit.db"), nil
}
