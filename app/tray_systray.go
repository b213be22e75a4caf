package app

import (
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
	// shown is the menu as built: its entries' identities and the items
	// made for them, so that a change of words alone (a run's "for how
	// long", what it does now) retitles them in place: the menu the user
	// has open stays, and an item they are about to click keeps its id.
	shown []shownEntry
}

// trayEntry is one menu entry as the model asks for it.
type trayEntry struct {
	// id says which entry it is (what it acts on): the same id in the
	// same place is the same entry, retitled.
	id       string
	parent   int // index of its parent entry, -1 at the first level
	label    string
	tooltip  string
	disabled bool
	checkbox bool
	checked  bool
	sep      bool
	act      func()
}

type shownEntry struct {
	trayEntry
	item *systray.MenuItem
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

// Update redraws only what changed: the icon and tooltip, the words of
// entries in place, and the menu rebuilt only when its entries are not
// the same ones in the same places. Every label goes through
// surface.DBusMenu (one line, "_" doubled so dbusmenu does not eat it as
// a mnemonic).
func (t *systrayTray) Update(m TrayModel) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last != nil && sameTray(*t.last, m) {
		return
	}
	prev := t.last
	t.last = &m
	if prev == nil || prev.State != m.State {
		systray.SetIcon(trayIcon(m.State))
	}
	if prev == nil || prev.Tooltip != m.Tooltip {
		systray.SetTooltip(surface.Line(m.Tooltip))
	}
	plan := trayPlan(m, t.act)
	if sameShape(t.shown, plan) {
		for i, e := range plan {
			t.shown[i].retitle(e)
		}
		return
	}
	t.rebuild(plan)
}

// retitle changes a shown entry's words and state to e's.
func (s *shownEntry) retitle(e trayEntry) {
	if s.item == nil {
		return
	}
	if s.label != e.label {
		s.item.SetTitle(e.label)
	}
	if s.tooltip != e.tooltip {
		s.item.SetTooltip(e.tooltip)
	}
	switch {
	case s.disabled != e.disabled && e.disabled:
		s.item.Disable()
	case s.disabled != e.disabled:
		s.item.Enable()
	}
	switch {
	case s.checked != e.checked && e.checked:
		s.item.Check()
	case s.checked != e.checked:
		s.item.Uncheck()
	}
	act := s.act
	s.trayEntry = e
	s.act = act // the clicks go to the action the item was made with
}

// sameShape: the plan has the same entries, in the same places, as the
// menu shown.
func sameShape(shown []shownEntry, plan []trayEntry) bool {
	if len(shown) != len(plan) {
		return false
	}
	for i := range plan {
		if shown[i].id != plan[i].id || shown[i].parent != plan[i].parent || shown[i].sep != plan[i].sep || shown[i].checkbox != plan[i].checkbox {
			return false
		}
	}
	return true
}

// rebuild makes the menu anew from plan.
func (t *systrayTray) rebuild(plan []trayEntry) {
	close(t.gen)
	t.gen = make(chan struct{})
	gen := t.gen
	systray.ResetMenu()
	t.shown = make([]shownEntry, len(plan))
	for i, e := range plan {
		t.shown[i].trayEntry = e
		if e.sep {
			systray.AddSeparator()
			continue
		}
		var item *systray.MenuItem
		switch {
		case e.parent >= 0 && t.shown[e.parent].item != nil:
			item = t.shown[e.parent].item.AddSubMenuItem(e.label, e.tooltip)
		case e.checkbox:
			item = systray.AddMenuItemCheckbox(e.label, e.tooltip, e.checked)
		default:
			item = systray.AddMenuItem(e.label, e.tooltip)
		}
		if e.disabled {
			item.Disable()
		}
		t.shown[i].item = item
		if e.act != nil {
			go forwardClicks(item.ClickedCh, gen, e.act)
		}
	}
}

// forwardClicks calls act for each click on an item until the menu is
// rebuilt (gen closed). fyne.io/systray closes an item's ClickedCh when
// the menu is reset: a closed channel is no click, and a rebuild that
// has begun wins over a click not yet taken. (Reading a closed channel as
// a click answered requests again on every rebuild.)
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

// trayPlan is the menu for m: what waits for the user first, newest last;
// then what Herald cannot see; then each run with Stop and Open at the
// first level; then Herald's own entries.
func trayPlan(m TrayModel, act TrayActions) []trayEntry {
	var plan []trayEntry
	add := func(e trayEntry) int {
		e.label = surface.DBusMenu(e.label)
		plan = append(plan, e)
		return len(plan) - 1
	}
	top := func(e trayEntry) int { e.parent = -1; return add(e) }
	switch {
	case m.Waiting == 0 && len(m.Pending) == 0 && len(m.Unseen) > 0:
		top(trayEntry{id: "none", label: "No approvals Herald can see", disabled: true})
	case m.Waiting == 0 && len(m.Pending) == 0:
		top(trayEntry{id: "none", label: "No approvals pending", disabled: true})
	}
	for _, p := range m.Pending {
		p := p
		switch p.State {
		case TrayItemUnknown:
			i := top(trayEntry{id: "unknown:" + p.Key, label: p.Label, tooltip: "Herald sent an answer and does not know whether it took effect; it says so once the gateway tells"})
			add(trayEntry{id: "open", parent: i, label: "Open…", act: func() { act.TrayOpen(p.Key) }})
			continue
		case TrayItemAnswering:
			top(trayEntry{id: "answering:" + p.Key, label: p.Label + " — sending your answer…", disabled: true})
			continue
		}
		i := top(trayEntry{id: "pending:" + p.Key, label: p.Label, tooltip: "Pending approval"})
		if p.Note != "" {
			add(trayEntry{id: "note", parent: i, label: p.Note, disabled: true})
		}
		switch p.Kind {
		case "clarify":
			for n, c := range p.Choices {
				if c != "" {
					c := c
					add(trayEntry{id: "choice:" + string(rune('0'+n)), parent: i, label: "Answer: " + trayCut(approval.VisibleLine(c)), act: func() { act.TrayAnswer(p.Key, c) }})
				}
			}
		case "sudo", "secret":
			// Typed only in the window or a terminal.
		default:
			if p.CanOnce {
				add(trayEntry{id: "once", parent: i, label: source.ChoiceLabel(source.ChoiceOnce), act: func() { act.TrayAnswer(p.Key, source.ChoiceOnce) }})
			}
			add(trayEntry{id: "deny", parent: i, label: source.ChoiceLabel(source.ChoiceDeny), act: func() { act.TrayAnswer(p.Key, source.ChoiceDeny) }})
		}
		add(trayEntry{id: "open", parent: i, label: "Open…", act: func() { act.TrayOpen(p.Key) }})
	}
	for _, u := range m.Unseen {
		u := u
		i := top(trayEntry{id: "unseen:" + u.Gateway + "/" + u.ID, label: u.Label, tooltip: "Herald does not receive this session's approvals"})
		add(trayEntry{id: "follow", parent: i, label: "Follow", tooltip: "Receive its events and approvals here", act: func() { act.TrayFollow(u.Gateway, u.ID) }})
	}
	if len(m.Runs) > 0 {
		top(trayEntry{id: "sep-runs", sep: true})
		for _, r := range m.Runs {
			r := r
			top(trayEntry{id: "run:" + r.Gateway + "/" + r.ID, label: r.Label, tooltip: "Running now", disabled: true})
			top(trayEntry{id: "stop:" + r.Gateway + "/" + r.ID, label: trayIndent + "Stop", tooltip: "Interrupt this run; the result shows once the gateway confirms", act: func() { act.TrayStop(r.Gateway, r.ID) }})
			top(trayEntry{id: "open:" + r.Gateway + "/" + r.ID, label: trayIndent + "Open", tooltip: "Show it in Herald's window", act: func() { act.TrayOpenRun(r.Gateway, r.ID) }})
		}
		if m.MoreRuns > 0 {
			top(trayEntry{id: "more-runs", label: plural(m.MoreRuns, "more run: open Herald", "more runs: open Herald"), act: act.TrayShow})
		}
	}
	top(trayEntry{id: "sep-herald", sep: true})
	top(trayEntry{id: "reconnect", label: "Reconnect", tooltip: "Reconnect every gateway now", act: act.TrayReconnect})
	top(trayEntry{id: "pause", label: "Pause notifications", checkbox: true, checked: m.NotificationsPause, act: act.TrayTogglePause})
	top(trayEntry{id: "show", label: "Open Herald", act: act.TrayShow})
	top(trayEntry{id: "quit", label: "Quit", act: act.TrayQuit})
	return plan
}

// trayIndent sets a run's Stop and Open under its line.
const trayIndent = "    "

func sameTray(a, b TrayModel) bool {
	if a.State != b.State || a.Tooltip != b.Tooltip || a.NotificationsPause != b.NotificationsPause || a.Waiting != b.Waiting || a.MoreRuns != b.MoreRuns || a.DoNotDisturb != b.DoNotDisturb || len(a.Pending) != len(b.Pending) || len(a.Runs) != len(b.Runs) || len(a.Unseen) != len(b.Unseen) {
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
	for i := range a.Unseen {
		if a.Unseen[i] != b.Unseen[i] {
			return false
		}
	}
	return true
}
