package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/service"
)

// The tray is Herald's run monitor: its icon says, by shape, the one state
// that matters most now (brand.TrayStates), its tooltip and the top of
// its menu say what waits for the user and what each run does now. It is
// derived from the window's snapshot, so both always agree.

// trayRunsMax bounds the runs the tray lists one by one; the rest are
// counted.
const trayRunsMax = 5

// trayModel derives the tray from a snapshot. The state, most urgent
// first: something waits for the user and can be answered here; no
// gateway connected; Herald cannot see something (a session elsewhere, an
// approval it can only deny, an answer whose outcome is unknown); a
// gateway down; a run in progress; idle.
func trayModel(s Snapshot) TrayModel {
	m := TrayModel{NotificationsPause: s.NotificationsPaused, DoNotDisturb: s.DoNotDisturb}
	connected := 0
	for _, g := range s.Gateways {
		if g.State == "connected" {
			connected++
		}
	}
	var names []string
	for _, g := range s.Live {
		for _, l := range g.Sessions {
			running := l.Status == "working" || l.Status == "waiting" || l.Status == "starting" || l.Status == "running"
			if !running || (l.Followed && !l.Elsewhere) {
				continue
			}
			what := "running, its events do not reach Herald"
			if l.Status == "waiting" {
				what = "waiting, its events do not reach Herald"
			}
			label := trayCutLabel(g.Gateway + " · " + l.Name + ": " + what)
			m.Unseen = append(m.Unseen, TraySession{Gateway: g.Gateway, ID: l.ID, Label: label})
			names = append(names, g.Gateway+" · "+l.Name)
		}
	}
	waiting, blind := 0, len(m.Unseen)
	for _, r := range s.Approvals {
		var t TrayApproval
		if r.Kind.IsPrompt() {
			t = trayPrompt(r)
		} else {
			t = trayApprovalIn(r.Request, r.Display)
		}
		switch r.State {
		case approval.StateSentUnknown:
			t.State, t.CanOnce, t.Choices = TrayItemUnknown, false, [trayChoices]string{}
			t.Label = "Outcome unknown: " + t.Label // the label is bounded already
			blind++
		case approval.StateAnswering:
			t.State, t.CanOnce, t.Choices = TrayItemAnswering, false, [trayChoices]string{}
		case approval.StatePending:
			if answerable(r.Request) {
				waiting++
			} else {
				blind++ // deny only: Herald cannot show what it would allow
			}
		}
		m.Pending = append(m.Pending, t)
	}
	m.Waiting = waiting
	running := 0
	for _, ss := range s.Sessions {
		if ss.Running {
			running++
			if len(m.Runs) < trayRunsMax {
				m.Runs = append(m.Runs, trayRunAt(ss, s.Approvals, s.Now))
			}
		}
	}
	m.MoreRuns = running - len(m.Runs)
	switch {
	case waiting > 0:
		m.State = TrayPending
	case connected == 0:
		m.State = TrayDisconnected
	case blind > 0:
		// Never green while a session Herald cannot see may ask.
		m.State = TrayBlind
	case connected < len(s.Gateways):
		m.State = TrayDegraded
	case running > 0:
		m.State = TrayRunning
	default:
		m.State = TrayConnected
	}
	m.Tooltip = trayTooltip(m, s, connected, running, names)
	return m
}

// trayTooltip says the state in one line: what waits, what runs and
// does what, what Herald cannot see, the gateways.
func trayTooltip(m TrayModel, s Snapshot, connected, running int, unseen []string) string {
	var parts []string
	if m.Waiting > 0 {
		parts = append(parts, plural(m.Waiting, "request waits", "requests wait")+" for you")
	}
	for _, r := range m.Runs {
		parts = append(parts, r.Label)
	}
	if m.MoreRuns > 0 {
		parts = append(parts, plural(m.MoreRuns, "more run", "more runs"))
	}
	if running == 0 && m.Waiting == 0 {
		parts = append(parts, "nothing running")
	}
	for _, p := range m.Pending {
		if p.State == TrayItemUnknown {
			parts = append(parts, p.Label)
		}
	}
	if len(m.Unseen) > 0 {
		parts = append(parts, fmt.Sprintf("%s where Herald cannot see them (another client may have them, or none), so their approvals cannot reach Herald: %s",
			plural(len(m.Unseen), "session runs", "sessions run"), strings.Join(unseen, ", ")))
	}
	switch {
	case len(s.Gateways) == 0:
		parts = append(parts, "no gateway set up")
	case connected == len(s.Gateways):
		parts = append(parts, fmt.Sprintf("%d of %s connected", connected, plural(len(s.Gateways), "gateway", "gateways")))
	default:
		parts = append(parts, fmt.Sprintf("%d of %s connected, %d down", connected, plural(len(s.Gateways), "gateway", "gateways"), len(s.Gateways)-connected))
	}
	switch {
	case m.NotificationsPause:
		parts = append(parts, "notifications paused")
	case m.DoNotDisturb:
		parts = append(parts, "do not disturb is on: only approvals and questions are sent")
	}
	return "Herald: " + strings.Join(parts, "; ")
}

// trayRunAt is one running session of a snapshot as the tray lists it:
// "gateway · name: what it does now, for how long", the name being the
// one every surface gives it (ss.Name, see displaySessions).
func trayRunAt(ss service.SessionView, waits []ApprovalView, now time.Time) TrayRun {
	doing := runDoing(ss, waits)
	label := ss.Gateway + " · " + ss.Name + ": " + doing
	if d := runFor(ss.Since, now); d != "" {
		label += ", " + d
	}
	label, cut := approval.Truncate(approval.VisibleLine(label), trayRunLabelMax)
	if cut {
		label += "…"
	}
	return TrayRun{Gateway: ss.Gateway, ID: ss.ID, Label: label, Name: ss.Name, Doing: doing, Since: ss.Since}
}

// runDoing is what a run does now, in words: a request of its session
// that waits says so (its tool shows the command, which does not run
// yet), else its tool, else thinking or writing.
func runDoing(ss service.SessionView, waits []ApprovalView) string {
	for _, w := range waits {
		if w.Gateway != ss.Gateway || (w.Session != ss.ID && (w.StoredSession == "" || w.StoredSession != ss.StoredID)) {
			continue
		}
		switch {
		case w.State == approval.StateSentUnknown:
			return "answer sent, outcome unknown"
		case w.State == approval.StateAnswering:
			return "sending your answer"
		case w.Kind == approval.KindClarify:
			return "waiting for your answer"
		case w.Kind == approval.KindSudo:
			return "waiting for your password"
		case w.Kind == approval.KindSecret:
			return "waiting for a secret"
		}
		return "waiting for your approval"
	}
	if ss.Tool != "" {
		name, ctx, _ := strings.Cut(ss.Tool, ": ")
		if name == "terminal" {
			if ctx = strings.TrimPrefix(ctx, "Running "); ctx != "" {
				return "running a command: " + ctx
			}
			return "running a command"
		}
		return "using " + name
	}
	if ss.LastText != "" {
		return "writing"
	}
	return "thinking"
}

// runFor says for how long a run has run, coarse (the tray refreshes
// every trayTick while runs are listed): "under a minute", "3 min",
// "1 h 5 min".
func runFor(since, now time.Time) string {
	if since.IsZero() || now.Before(since) {
		return ""
	}
	d := now.Sub(since)
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	}
	return fmt.Sprintf("%d h %d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
}
