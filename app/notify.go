package app

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
	"github.com/herald-desktop/herald/service"
)

// notifier turns inbox changes into desktop notifications: one per
// approval (deduplicated), withdrawn once the request ends; and throttled
// run-finished notifications.
type notifier struct {
	clk clock.Clock
	log *slog.Logger

	platformGate
	shown   map[string]bool      // approval keys with a notification up
	lastRun map[string]time.Time // session -> last run notification
	// runs: a notification for each finished turn (off by default: the
	// window and the tray show runs; a notification is for what needs
	// the user).
	runs bool
}

// runThrottle is the minimum gap between run notifications of a session.
const runThrottle = 30 * time.Second

func newNotifier(clk clock.Clock, log *slog.Logger) *notifier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &notifier{clk: clk, log: log, shown: map[string]bool{}, lastRun: map[string]time.Time{}}
}

// notify shows n, logging a failure (the request stays in the tray and
// the window).
func (n *notifier) notify(p Platform, no Notification) {
	if err := p.Notify(no); err != nil {
		n.log.Warn("a desktop notification could not be shown", "id", no.ID, "err", err)
	}
}

// platformGate is where a notifying surface shows things and whether it
// is paused; mu also guards the surface's own state.
type platformGate struct {
	mu       sync.Mutex
	platform Platform
	paused   bool
}

func (g *platformGate) attach(p Platform) {
	g.mu.Lock()
	g.platform = p
	g.mu.Unlock()
}

func (g *platformGate) setPaused(p bool) {
	g.mu.Lock()
	g.paused = p
	g.mu.Unlock()
}

func (n *notifier) setRuns(on bool) {
	n.mu.Lock()
	n.runs = on
	n.mu.Unlock()
}

// approval handles one inbox change.
func (n *notifier) approval(c approval.Change) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.platform
	if p == nil {
		return
	}
	r := c.Request
	switch {
	case c.Kind == approval.ChangeRefused:
		n.flood(p, r)
	case r.State == approval.StatePending && !n.shown[r.Key]:
		if n.paused {
			return
		}
		n.shown[r.Key] = true
		n.notify(p, approvalNotification(r, n.clk.Now()))
	case r.State != approval.StatePending && n.shown[r.Key]:
		// Answered (from any surface: the answer is on its way), or ended.
		delete(n.shown, r.Key)
		if err := p.Withdraw(r.Key); err != nil {
			n.log.Warn("a desktop notification could not be withdrawn", "id", r.Key, "err", err)
		}
	}
}

// event raises run-finished notifications, throttled per session.
func (n *notifier) event(ev wire.Event) {
	cp, ok := ev.Data.(*wire.CompletePayload)
	if !ok || ev.Replayed {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.platform == nil || n.paused || !n.runs {
		return
	}
	k := ev.Gateway + "/" + ev.Session
	now := n.clk.Now()
	if last, ok := n.lastRun[k]; ok && now.Sub(last) < runThrottle {
		return
	}
	n.lastRun[k] = now
	title := "Run finished"
	switch cp.Status {
	case "error", "failed":
		title = "Run failed"
	case "interrupted":
		title = "Run interrupted"
	}
	// One readable line: the answer's first line, not its whole text
	// with every newline and marker in it.
	n.notify(n.platform, Notification{ID: "run:" + k, Title: title + " on " + approval.VisibleLine(ev.Gateway), Body: runText(firstLine(cp.Text))})
}

// floodThrottle is the minimum gap between flood notifications of a
// gateway.
const floodThrottle = 10 * time.Minute

// flood says, at most every floodThrottle per gateway, that a gateway
// sends more approvals than Herald takes: the window may be closed, and
// refused requests are never shown one by one.
func (n *notifier) flood(p Platform, r approval.Request) {
	k := "flood:" + r.Gateway
	now := n.clk.Now()
	if last, ok := n.lastRun[k]; n.paused || ok && now.Sub(last) < floodThrottle {
		return
	}
	n.lastRun[k] = now
	gw, _ := approval.Truncate(approval.VisibleLine(r.Gateway), notifyTitleMax)
	body, _ := approval.Truncate(approval.VisibleLine(r.Outcome.Error), 300)
	n.notify(p, Notification{ID: k, Title: "Gateway " + gw + " is flooding Herald", Body: body, Urgency: UrgencyCritical})
}

// firstLine is the first line of s with text on it.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// consume feeds the service's notifications to the surfaces, in order,
// until the app closes: events and approvals to the notifications,
// sessions other clients drive to their offers, and every change to the
// window's batched view.
func (a *App) consume(sub *service.Subscription) {
	defer close(a.consumed)
	for {
		n, err := sub.Next(a.ctx)
		if err != nil {
			return
		}
		if n.Lagged > 0 {
			// The window is refreshed from the whole view below; only
			// the notifications of what was lost are missing.
			a.log.Warn("the window fell behind Herald's events; some notifications were not shown", "lost", n.Lagged)
			a.batch.Poke()
		}
		switch {
		case n.Event != nil:
			a.onEvent(*n.Event)
		case n.Approval != nil:
			a.notify.approval(*n.Approval)
		case n.Notice != nil:
			a.forgetGone(*n.Notice)
			a.notify.session(*n.Notice)
		case n.Changed:
			a.batch.Poke()
		}
	}
}

func (a *App) onNotificationAction(id, action string) {
	if a.promptAction(id, action) {
		return
	}
	switch action {
	case approval.ChoiceOnce, approval.ChoiceDeny:
		if r, ok := a.svc.Inbox().Get(id); ok && action == approval.ChoiceOnce && !oneClick(r, notifyCommandMax) {
			// The notification could not show all of it: show it first.
			a.openApproval(id)
			return
		}
		ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
		defer cancel()
		if err := a.svc.Answer(ctx, id, action, "notification", false); err != nil {
			a.warn(err.Error())
		}
	case ActionFollow:
		if gw, live, ok := parseSessionID(id); ok {
			a.TrayFollow(gw, live)
		}
	case ActionOpen, ActionDefault:
		if _, _, ok := parseSessionID(id); ok {
			if p := a.plat(); p != nil {
				p.ShowWindow() // the Sessions panel says the rest
			}
			return
		}
		a.openApproval(id)
	default:
		// ActionClickedOrDismissed (Wails cannot tell a click on the body
		// from a dismissal) or anything unknown: dismissing must never
		// raise the window.
	}
}

func (a *App) openApproval(key string) {
	if p := a.plat(); p != nil {
		p.ShowWindow()
		p.Emit(EventOpenApproval, key)
	}
}
