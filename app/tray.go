package app

import (
	"time"

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

// trayGap is the least time between two tray updates in a burst of
// changes; the first change of a burst shows at once.
const trayGap = 10 * time.Millisecond

// trayTick refreshes the tray while runs are listed, so "for how long"
// stays true.
const trayTick = 30 * time.Second

// updateTray derives the tray from the current state and shows it.
func (a *App) updateTray() {
	a.mu.Lock()
	t := a.tray
	a.mu.Unlock()
	if t == nil {
		return
	}
	m := trayModel(a.traySnapshot())
	t.Update(m)
	a.tickTray(len(m.Runs) > 0)
}

// tickTray arms one refresh trayTick from now while runs are listed.
func (a *App) tickTray(runs bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !runs || a.trayTicking {
		return
	}
	a.trayTicking = true
	t := a.d.Clock.NewTimer(trayTick)
	go func() {
		select {
		case <-t.C():
		case <-a.ctx.Done():
			t.Stop()
			return
		}
		a.mu.Lock()
		a.trayTicking = false
		a.mu.Unlock()
		a.trayPump.poke()
	}()
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
