package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/herald-desktop/herald/service"
)

// GatewaySettings is one configured gateway. It holds no secret: tokens,
// passwords and keys live in the OS keychain (see Secrets).
type GatewaySettings struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Kind is the transport's (source.Driver.Kind: "ws", "api", ...);
	// "" is the default transport, as settings from before kinds say.
	Kind string `json:"kind"`
	// Auth is the sign-in (source.AuthMode.Name: "token", "password",
	// "key", "none"), which also names the keychain entry of its secret.
	Auth     string `json:"auth"`
	Username string `json:"username,omitempty"`
	// CAFile is an optional PEM bundle trusted for this gateway's TLS.
	CAFile string `json:"ca_file,omitempty"`
	// Sessions are stored session ids Herald follows on this gateway.
	Sessions []string `json:"sessions,omitempty"`
	// Follow is what Herald does with sessions other clients drive:
	// "auto" follows each one found, "ask" (default) offers them.
	Follow string `json:"follow,omitempty"`
	// Bridge also follows what rides beside this gateway's kind (the
	// Herald plugin's route on a dashboard: source.Driver.Beside), with
	// the gateway's address, secret and CA file.
	Bridge bool `json:"bridge,omitempty"`
}

// Settings is Herald's user configuration.
type Settings struct {
	Gateways []GatewaySettings `json:"gateways"`
	// CloseToTray keeps Herald running in the tray when the window closes.
	CloseToTray bool `json:"close_to_tray"`
	// QuitWithoutTray quits Herald when the window closes on a desktop
	// with no tray host (stock GNOME); otherwise it keeps running in the
	// background, and the app menu opens the window again.
	QuitWithoutTray bool `json:"quit_without_tray,omitempty"`
	// TrayNoticeDismissed: the user closed the window's note on how to
	// get a tray; it stays closed across restarts until a tray host is
	// seen (then a tray lost again is news, and the note returns).
	TrayNoticeDismissed bool `json:"tray_notice_dismissed,omitempty"`
	// PauseNotifications silences notifications (approvals still show in
	// the tray and window).
	PauseNotifications bool `json:"pause_notifications"`
	// NotifyRunFinished shows a notification for every finished turn
	// (default off).
	NotifyRunFinished bool `json:"notify_run_finished,omitempty"`
	// ApprovalTimeoutSeconds is the gateways' approval timeout when they
	// do not say (Hermes' default: 300).
	ApprovalTimeoutSeconds int `json:"approval_timeout_seconds"`
	// Window is where the window was last (nil: centred, default size).
	Window *WindowGeometry `json:"window,omitempty"`
}

// DefaultSettings is what a first run starts with.
func DefaultSettings() Settings {
	return Settings{CloseToTray: true, ApprovalTimeoutSeconds: 300}
}

// SettingsStore reads and writes settings.json in a directory (normally
// service.ConfigDir), atomically and with owner-only permissions.
type SettingsStore struct {
	mu  sync.Mutex
	dir string
}

// NewSettingsStore uses dir; an empty dir means Herald's configuration
// folder (service.ConfigDir).
func NewSettingsStore(dir string) (*SettingsStore, error) {
	if dir == "" {
		d, err := service.ConfigDir(os.Getenv)
		if err != nil {
			return nil, err
		}
		dir = d
	}
	return &SettingsStore{dir: dir}, nil
}

// Dir is the settings directory.
func (s *SettingsStore) Dir() string { return s.dir }

func (s *SettingsStore) path() string { return filepath.Join(s.dir, "settings.json") }

// Load returns the saved settings, or the defaults on first run.
func (s *SettingsStore) Load() (Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := os.ReadFile(s.path())
	if errors.Is(err, os.ErrNotExist) {
		return DefaultSettings(), nil
	}
	if err != nil {
		return DefaultSettings(), fmt.Errorf("reading settings %s failed: %v", s.path(), err)
	}
	st := DefaultSettings()
	if err := json.Unmarshal(b, &st); err != nil {
		return DefaultSettings(), fmt.Errorf("settings %s are damaged (%v): fix or delete the file", s.path(), err)
	}
	return st, nil
}

// Save writes settings atomically (temp file + rename), mode 0600.
func (s *SettingsStore) Save(st Settings) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Sort a copy, not the caller's slice (and write [] rather than null).
	st.Gateways = append(make([]GatewaySettings, 0, len(st.Gateways)), st.Gateways...)
	sort.SliceStable(st.Gateways, func(i, j int) bool { return st.Gateways[i].Name < st.Gateways[j].Name })
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %v", s.dir, err)
	}
	tmp, err := os.CreateTemp(s.dir, "settings-*.json")
	if err != nil {
		return fmt.Errorf("cannot write settings in %s: %v", s.dir, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing settings failed: %v", err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.path()); err != nil {
		return fmt.Errorf("saving settings failed: %v", err)
	}
	return nil
}

func (a *App) timeout(string) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return time.Duration(a.settings.ApprovalTimeoutSeconds) * time.Second
}

// SetPauseNotifications silences or resumes notifications.
func (a *App) SetPauseNotifications(p bool) error {
	a.notify.setPaused(p)
	a.notice.setPaused(p)
	a.desk.setPaused(p)
	err := a.updateSettings(func(s *Settings) { s.PauseNotifications = p })
	if !p {
		a.notify.resume(a.svc.Inbox().Pending()) // what waits, held back while paused
	}
	a.batch.Poke()
	a.trayPump.poke()
	return err
}

// setDoNotDisturb records the desktop's do not disturb: Herald then
// sends only what waits for the user (the server holds it), and the tray
// and the window say so.
func (a *App) setDoNotDisturb(on bool) {
	a.mu.Lock()
	changed := a.dnd != on
	a.dnd = on
	a.mu.Unlock()
	a.desk.setDoNotDisturb(on)
	if changed {
		a.log.Info("the desktop's do not disturb changed", "on", on)
		a.batch.Poke()
		a.trayPump.poke()
	}
}

// SetNotifyRunFinished turns the notification for every finished turn
// on or off (off by default).
func (a *App) SetNotifyRunFinished(on bool) error {
	a.notify.setRuns(on)
	err := a.updateSettings(func(s *Settings) { s.NotifyRunFinished = on })
	a.batch.Poke()
	return err
}

// SetQuitWithoutTray chooses what closing the window does on a desktop
// without a tray: quit Herald (on), or keep it running in the background
// (off; the app menu opens the window again).
func (a *App) SetQuitWithoutTray(on bool) error {
	err := a.updateSettings(func(s *Settings) { s.QuitWithoutTray = on })
	a.batch.Poke()
	return err
}

// DismissTrayNotice closes the window's note on how to get a tray, for
// good on this desktop (see Settings.TrayNoticeDismissed).
func (a *App) DismissTrayNotice() error {
	err := a.updateSettings(func(s *Settings) { s.TrayNoticeDismissed = true })
	a.batch.Poke()
	return err
}

// SetAutostart turns start-at-login on or off; the snapshot then reports
// what the OS says.
func (a *App) SetAutostart(on bool) error {
	err := a.d.Autostart.Set(on)
	a.batch.Poke()
	return err
}

func (a *App) updateSettings(fn func(*Settings)) error {
	a.mu.Lock()
	fn(&a.settings)
	st := a.settings
	a.mu.Unlock()
	return a.d.Settings.Save(st)
}
