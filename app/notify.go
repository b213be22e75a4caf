package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
	"github.com/herald-desktop/herald/service"
)

// notifier turns inbox changes into desktop notifications: one per
// approval or prompt (deduplicated), withdrawn once the request ends;
// past approvalNotesMax of a gateway at once, one summary instead; and
// throttled run-finished notifications. The desk applies the policy.
type notifier struct {
	clk clock.Clock
	log *slog.Logger

	platformGate
	shown   map[string]string    // approval keys with a notification up -> gateway
	lastRun map[string]time.Time // session -> last run notification
	// summed: gateways whose approvals show as one summary.
	summed map[string]bool
	// runs: a notification for each finished turn (off by default: the
	// window and the tray show runs; a notification is for what needs
	// the user).
	runs bool
}

// runThrottle is the minimum gap between run notifications of a session.
const runThrottle = 30 * time.Second

// approvalNotesMax is how many approvals of one gateway show one by one;
// past it one summary replaces them (the window lists them).
const approvalNotesMax = 3

func newNotifier(clk clock.Clock, log *slog.Logger) *notifier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &notifier{clk: clk, log: log, shown: map[string]string{}, lastRun: map[string]time.Time{}, summed: map[string]bool{}}
}

// notify shows n, logging a failure (the request stays in the tray and
// the window).
func (n *notifier) notify(p noteSink, no Notification) {
	if err := p.Notify(no); err != nil {
		n.log.Warn("a desktop notification could not be shown", "id", no.ID, "err", err)
	}
}

func (n *notifier) withdraw(p noteSink, id string) {
	if err := p.Withdraw(id); err != nil {
		n.log.Warn("a desktop notification could not be withdrawn", "id", id, "err", err)
	}
}

// noteSink is where notifications go: the desk (which applies the
// policy) in the app, a platform in tests.
type noteSink interface {
	Notify(Notification) error
	Withdraw(id string) error
}

// platformGate is where a notifying surface shows things and whether it
// is paused; mu also guards the surface's own state.
type platformGate struct {
	mu       sync.Mutex
	platform noteSink
	paused   bool
}

func (g *platformGate) attach(p noteSink) {
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
	_, shown := n.shown[r.Key]
	switch {
	case c.Kind == approval.ChangeRefused:
		n.flood(p, r)
	case r.State == approval.StatePending && !shown:
		if n.paused {
			return // counted in the tray; shown when the pause ends
		}
		n.showLocked(p, r)
	case r.State != approval.StatePending && shown:
		// Answered (from any surface: the answer is on its way), or ended.
		delete(n.shown, r.Key)
		if !n.summed[r.Gateway] {
			n.withdraw(p, r.Key)
			return
		}
		if left := n.countLocked(r.Gateway); left > 0 {
			n.notify(p, approvalsSummary(r.Gateway, left))
			return
		}
		delete(n.summed, r.Gateway)
		n.withdraw(p, approvalsSummaryID(r.Gateway))
	}
}

// showLocked shows a new pending request: on its own, or in its
// gateway's summary once there are more than approvalNotesMax (the
// notifications up so far then go, the summary replaces them).
func (n *notifier) showLocked(p noteSink, r approval.Request) {
	n.shown[r.Key] = r.Gateway
	count := n.countLocked(r.Gateway)
	if !n.summed[r.Gateway] && count <= approvalNotesMax {
		n.notify(p, approvalNotification(r, n.clk.Now()))
		return
	}
	if !n.summed[r.Gateway] {
		n.summed[r.Gateway] = true
		for k, gw := range n.shown {
			if gw == r.Gateway && k != r.Key {
				n.withdraw(p, k)
			}
		}
	}
	n.notify(p, approvalsSummary(r.Gateway, count))
}

func (n *notifier) countLocked(gw string) int {
	c := 0
	for _, g := range n.shown {
		if g == gw {
			c++
		}
	}
	return c
}

// resume shows the requests still pending that a pause held back.
func (n *notifier) resume(pending []approval.Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.platform
	if p == nil || n.paused {
		return
	}
	for _, r := range pending {
		if _, shown := n.shown[r.Key]; !shown && r.State == approval.StatePending {
			n.showLocked(p, r)
		}
	}
}

// approvalsSummaryID names a gateway's summary of approvals.
func approvalsSummaryID(gw string) string { return "herald-approvals:" + gw }

// approvalsSummary is the one notification for a gateway's approvals
// past approvalNotesMax.
func approvalsSummary(gw string, count int) Notification {
	g := clipLine(gw, notifyTitleMax)
	title := plural(count, "approval waits on ", "approvals wait on ") + g
	return Notification{ID: approvalsSummaryID(gw), Kind: NoteApprovals, Gateway: gw, Title: title,
		Body: "Open Herald to see and answer them: the window lists each with its command.", Actions: [][2]string{{ActionOpen, "Open Herald"}}}
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
	n.notify(n.platform, Notification{ID: "run:" + k, Kind: NoteRunFinished, Gateway: ev.Gateway, Title: title + " on " + approval.VisibleLine(ev.Gateway), Body: runText(firstLine(cp.Text))})
}

// floodThrottle is the minimum gap between flood notifications of a
// gateway.
const floodThrottle = 10 * time.Minute

// flood says, at most every floodThrottle per gateway, that a gateway
// sends more approvals than Herald takes: the window may be closed, and
// refused requests are never shown one by one.
func (n *notifier) flood(p noteSink, r approval.Request) {
	k := "flood:" + r.Gateway
	now := n.clk.Now()
	if last, ok := n.lastRun[k]; n.paused || ok && now.Sub(last) < floodThrottle {
		return
	}
	n.lastRun[k] = now
	gw, _ := approval.Truncate(approval.VisibleLine(r.Gateway), notifyTitleMax)
	body, _ := approval.Truncate(approval.VisibleLine(r.Outcome.Error), 300)
	n.notify(p, Notification{ID: k, Kind: NoteFlood, Gateway: r.Gateway, Title: "Gateway " + gw + " is flooding Herald", Body: body})
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
			a.settleWarnings(n.Approval.Request)
		case n.Notice != nil:
			a.forgetGone(*n.Notice)
			a.notify.session(*n.Notice)
		case n.Changed:
			a.batch.Poke()
		}
		if n.Event == nil {
			// An event's change follows it (Changed): one poke each.
			a.trayPump.poke()
		}
	}
}

func (a *App) onNotificationAction(id, action string) {
	id = a.desk.resolve(id) // a gateway's informational slot: the item it shows
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
		a.answerFrom(id, action, "notification")
	case ActionFollow:
		if gw, live, ok := parseSessionID(id); ok {
			a.TrayFollow(gw, live)
		}
	case ActionOpen, ActionDefault:
		if _, _, ok := parseSessionID(id); ok || strings.HasPrefix(id, heraldNotePrefix) {
			if p := a.plat(); p != nil {
				p.ShowWindow() // the Sessions panel or the list says the rest
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

// heraldNotePrefix starts the ids of Herald's own notifications that
// name no request (a gateway's slot, a summary of its approvals).
const heraldNotePrefix = "herald-"

// answerFrom answers a request from a notification or the tray, which
// have no place for the outcome: a short notification then says what the
// gateway confirmed, or what failed and what to do.
func (a *App) answerFrom(key, choice, surface string) {
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	err := a.svc.Answer(ctx, key, choice, surface, false)
	r, _ := a.svc.Inbox().Get(key)
	a.desk.Notify(answerNote(r, key, choice, err))
	if err != nil {
		a.warnFor(key, err.Error())
	}
}

// answerNote says how an answer given in a notification or the tray went.
func answerNote(r approval.Request, key, choice string, err error) Notification {
	gw := clipLine(r.Gateway, notifyTitleMax)
	what := clipLine(approval.Redact(r.Command), 60)
	if r.Kind.IsPrompt() {
		what = clipLine(r.Question, 60)
	}
	if len(what) == 60 {
		what += "…"
	}
	n := Notification{ID: "herald-answered:" + service.ShortKey(key), Gateway: r.Gateway, Kind: NoteAnswered}
	switch {
	case err == nil:
		n.Title = choicePast(r, choice) + ": " + what
		n.Body = "Confirmed by " + gw + "."
	case errors.As(err, new(*approval.UnknownOutcomeError)):
		n.Kind = NoteFailed
		n.Title = "Outcome unknown: " + choicePast(r, choice) + " sent for " + what
		n.Body = approval.VisibleLine(err.Error())
	default:
		n.Kind = NoteFailed
		n.Title = "Not sent: " + choicePast(r, choice) + " for " + what
		n.Body = approval.VisibleLine(err.Error())
	}
	if n.Body, _ = approval.Truncate(n.Body, 300); n.Title == "" {
		n.Title = "Answer"
	}
	return n
}

// choicePast says what an answer did, as a confirmation's title: the
// choice table's words (source.ChoiceInfo.Done), or the answer quoted for
// a question.
func choicePast(r approval.Request, choice string) string {
	if r.Kind.IsPrompt() {
		return "Answered “" + clipLine(choice, 40) + "”"
	}
	if c, ok := source.ChoiceOf(choice); ok && c.Done != "" {
		return c.Done
	}
	return "Answered " + clipLine(choice, 40)
}

func (a *App) openApproval(key string) {
	if p := a.plat(); p != nil {
		p.ShowWindow()
		p.Emit(EventOpenApproval, key)
	}
}
