package app

import (
	"fmt"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// notifier turns inbox changes into desktop notifications: one per
// approval (deduplicated), withdrawn once the request ends; and throttled
// run-finished notifications.
type notifier struct {
	clk clock.Clock

	mu       sync.Mutex
	platform Platform
	shown    map[string]bool      // approval keys with a notification up
	lastRun  map[string]time.Time // session -> last run notification
	paused   bool
}

// runThrottle is the minimum gap between run notifications of a session.
const runThrottle = 30 * time.Second

func newNotifier(clk clock.Clock) *notifier {
	return &notifier{clk: clk, shown: map[string]bool{}, lastRun: map[string]time.Time{}}
}

func (n *notifier) attach(p Platform) {
	n.mu.Lock()
	n.platform = p
	n.mu.Unlock()
}

func (n *notifier) setPaused(p bool) {
	n.mu.Lock()
	n.paused = p
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
	case r.State == approval.StatePending && !n.shown[r.Key]:
		if n.paused {
			return
		}
		n.shown[r.Key] = true
		body := r.MaskedCommand()
		if r.Description != "" {
			body += "\n" + r.Description
		}
		var actions [][2]string
		if r.Offers(approval.ChoiceOnce) {
			actions = append(actions, [2]string{"once", "Approve once"})
		}
		actions = append(actions, [2]string{"deny", "Deny"})
		p.Notify(Notification{
			ID:      r.Key,
			Title:   fmt.Sprintf("Approve command on %s?", r.Gateway),
			Body:    body,
			Actions: actions,
		})
	case !r.State.Live() && n.shown[r.Key]:
		delete(n.shown, r.Key)
		p.Withdraw(r.Key)
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
	if n.platform == nil || n.paused {
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
	text := cp.Text
	if len(text) > 160 {
		text = text[:160] + "…"
	}
	n.platform.Notify(Notification{ID: "run:" + k, Title: title + " on " + ev.Gateway, Body: approval.Redact(text)})
}
