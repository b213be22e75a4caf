package app

import (
	"github.com/herald-desktop/herald/approval"
)

// The tray's actions: what its menu items do (tray_systray.go draws it).

// TrayAnswer answers from the tray menu.
func (a *App) TrayAnswer(key, choice string) {
	if r, ok := a.svc.Inbox().Get(key); ok && choice == approval.ChoiceOnce && !oneClick(r, trayLabelMax) {
		a.openApproval(key) // the tray could not show all of it
		return
	}
	a.answerFrom(key, choice, "tray")
}

// TrayOpen opens an approval's sheet.
func (a *App) TrayOpen(key string) { a.openApproval(key) }

// TrayReconnect reconnects every gateway now.
func (a *App) TrayReconnect() {
	for _, src := range a.svc.Sources() {
		src.ReconnectNow()
	}
}

// TrayTogglePause flips "pause notifications".
func (a *App) TrayTogglePause() {
	a.mu.Lock()
	p := !a.settings.PauseNotifications
	a.mu.Unlock()
	a.SetPauseNotifications(p)
}

// TrayShow raises the window.
func (a *App) TrayShow() {
	if p := a.plat(); p != nil {
		p.ShowWindow()
	}
}

// TrayQuit quits Herald.
func (a *App) TrayQuit() {
	if p := a.plat(); p != nil {
		p.Quit()
	}
}

// TrayHostChanged records whether the desktop has a tray host (a
// StatusNotifierWatcher); without one the window says how to get a tray
// and what closing it does. Called at start and whenever a host appears
// or goes (the tray icon registers with a new host by itself).
//
// A tray host seen ends the user's dismissal of the note: if it goes
// again (an extension disabled, a panel crashed), the note returns.
func (a *App) TrayHostChanged(present bool) {
	a.mu.Lock()
	changed := a.trayMissing == present
	a.trayMissing = !present
	undismiss := present && a.settings.TrayNoticeDismissed
	a.mu.Unlock()
	if undismiss {
		if err := a.updateSettings(func(s *Settings) { s.TrayNoticeDismissed = false }); err != nil {
			a.warn(err.Error())
		}
	}
	if changed {
		a.batch.Poke()
	}
}

// TrayAbsentQuits reports whether closing the window should quit Herald:
// there is no tray to keep it in, and the user chose to quit then.
func (a *App) TrayAbsentQuits() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.trayMissing && a.settings.QuitWithoutTray
}
