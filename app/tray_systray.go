package app

import (
	"slices"
	"sync"

	"fyne.io/systray"
	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/source"
)

// systrayTray is the tray over fyne.io/systray (StatusNotifierItem over
// D-Bus on Linux, no GTK). systray is process-global, so there is one.
type systrayTray struct {
	act  TrayActions
	end  func()
	mu   sync.Mutex
	last *TrayModel
	gen  chan struct{} // closed when the menu is rebuilt
}

// NewSystrayTray starts the tray icon; the menu follows Update.
func NewSystrayTray(act TrayActions) (Tray, error) {
	t := &systrayTray{act: act, gen: make(chan struct{})}
	ready := make(chan struct{})
	start, end := systray.RunWithExternalLoop(func() { close(ready) }, func() {})
	t.end = end
	start()
	<-ready
	systray.SetTitle("Herald")
	systray.SetIcon(trayIcon(TrayDisconnected))
	systray.SetOnTapped(act.TrayShow)
	return t, nil
}

func (t *systrayTray) Stop() { t.end() }

// Update redraws only when the model changed. Every label goes through
// surface.DBusMenu (one line, "_" doubled so dbusmenu does not eat it as a
// mnemonic).
func (t *systrayTray) Update(m TrayModel) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last != nil && sameTray(*t.last, m) {
		return
	}
	t.last = &m
	close(t.gen)
	t.gen = make(chan struct{})
	gen := t.gen

	systray.SetIcon(trayIcon(m.State))
	systray.SetTooltip(surface.Line(m.Tooltip))
	systray.ResetMenu()
	on := func(item *systray.MenuItem, fn func()) { go forwardClicks(item.ClickedCh, gen, fn) }
	// What waits for the user first, newest last; then what Herald
	// cannot see; then each run with Stop and Open at this level.
	switch {
	case m.Waiting == 0 && len(m.Pending) == 0 && len(m.Unseen) > 0:
		systray.AddMenuItem("No approvals Herald can see", "").Disable()
	case m.Waiting == 0 && len(m.Pending) == 0:
		systray.AddMenuItem("No approvals pending", "").Disable()
	}
	for _, p := range m.Pending {
		p := p
		switch p.State {
		case TrayItemUnknown:
			parent := systray.AddMenuItem(surface.DBusMenu(p.Label), "Herald sent an answer and does not know whether it took effect; it says so once the gateway tells")
			on(parent.AddSubMenuItem("Open…", ""), func() { t.act.TrayOpen(p.Key) })
			continue
		case TrayItemAnswering:
			systray.AddMenuItem(surface.DBusMenu(p.Label+" — sending your answer…"), "").Disable()
			continue
		}
		parent := systray.AddMenuItem(surface.DBusMenu(p.Label), "Pending approval")
		if p.Note != "" {
			parent.AddSubMenuItem(surface.DBusMenu(p.Note), "").Disable()
		}
		switch p.Kind {
		case "clarify":
			for _, c := range p.Choices {
				if c != "" {
					c := c
					on(parent.AddSubMenuItem(surface.DBusMenu("Answer: "+trayCut(approval.VisibleLine(c))), ""), func() { t.act.TrayAnswer(p.Key, c) })
				}
			}
		case "sudo", "secret":
			// Typed only in the window or a terminal.
		default:
			if p.CanOnce {
				on(parent.AddSubMenuItem(source.ChoiceLabel(source.ChoiceOnce), ""), func() { t.act.TrayAnswer(p.Key, source.ChoiceOnce) })
			}
			on(parent.AddSubMenuItem(source.ChoiceLabel(source.ChoiceDeny), ""), func() { t.act.TrayAnswer(p.Key, source.ChoiceDeny) })
		}
		on(parent.AddSubMenuItem("Open…", ""), func() { t.act.TrayOpen(p.Key) })
	}
	for _, u := range m.Unseen {
		u := u
		item := systray.AddMenuItem(surface.DBusMenu(u.Label), "Herald does not receive this session's approvals")
		on(item.AddSubMenuItem("Follow", "Receive its events and approvals here"), func() { t.act.TrayFollow(u.Gateway, u.ID) })
	}
	if len(m.Runs) > 0 {
		systray.AddSeparator()
		for _, r := range m.Runs {
			r := r
			systray.AddMenuItem(surface.DBusMenu(r.Label), "Running now").Disable()
			on(systray.AddMenuItem(trayIndent+"Stop", "Interrupt this run; the result shows once the gateway confirms"), func() { t.act.TrayStop(r.Gateway, r.ID) })
			on(systray.AddMenuItem(trayIndent+"Open", "Show it in Herald's window"), func() { t.act.TrayOpenRun(r.Gateway, r.ID) })
		}
		if m.MoreRuns > 0 {
			on(systray.AddMenuItem(plural(m.MoreRuns, "more run: open Herald", "more runs: open Herald"), ""), t.act.TrayShow)
		}
	}
	systray.AddSeparator()
	on(systray.AddMenuItem("Reconnect", "Reconnect every gateway now"), t.act.TrayReconnect)
	on(systray.AddMenuItemCheckbox("Pause notifications", "", m.NotificationsPause), t.act.TrayTogglePause)
	on(systray.AddMenuItem("Open Herald", ""), t.act.TrayShow)
	on(systray.AddMenuItem("Quit", ""), t.act.TrayQuit)
}

// forwardClicks calls act for each click on an item until the menu is
// rebuilt (gen closed). fyne.io/systray closes an item's ClickedCh when
// the menu is reset: a closed channel is no click, and a rebuild that
// has begun wins over a click not yet taken. (Reading a closed channel as
// a click, a goroutine not yet parked when the menu was reset chose at
// random between that and the rebuild: the old menu's Deny or Allow once
// was then sent without a click.)
func forwardClicks(clicked <-chan struct{}, gen <-chan struct{}, act func()) {
	for {
		select {
		case <-gen:
			return
		case _, ok := <-clicked:
			if !ok {
				return
			}
			select {
			case <-gen:
				return
			default:
			}
			act()
		}
	}
}

// trayIndent sets a run's Stop and Open under its line.
const trayIndent = "    "

func sameTray(a, b TrayModel) bool {
	if a.State != b.State || a.Tooltip != b.Tooltip || a.NotificationsPause != b.NotificationsPause || a.Waiting != b.Waiting || a.MoreRuns != b.MoreRuns || len(a.Pending) != len(b.Pending) || len(a.Runs) != len(b.Runs) || !slices.Equal(a.Unseen, b.Unseen) {
		return false
	}
	for i := range a.Pending {
		if a.Pending[i] != b.Pending[i] {
			return false
		}
	}
	for i := range a.Runs {
		if a.Runs[i] != b.Runs[i] {
			return false
		}
	}
	return true
}
