package app

import (
	"context"
	goruntime "runtime"
	"strings"
	"sync"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// wailsPlatform forwards to Wails' runtime with the context Wails gave us.
type wailsPlatform struct {
	ctx context.Context

	mu         sync.Mutex
	categories map[string]bool // notification categories registered, by id

	urgent urgentSender // notifications with an urgency Wails cannot set
}

// newWailsPlatform also sets up notifications; an error says why they are
// off (the platform still works for the window and the tray).
func newWailsPlatform(ctx context.Context) (*wailsPlatform, error) {
	p := &wailsPlatform{ctx: ctx, categories: map[string]bool{}}
	if err := runtime.InitializeNotifications(ctx); err != nil {
		return p, notificationsOff(goruntime.GOOS, "", err)
	}
	// The usual buttons, registered now so a failure is reported at start.
	if _, err := p.category([][2]string{{ActionOpen, "Open…"}, choiceButton(approval.ChoiceOnce), choiceButton(approval.ChoiceDeny)}); err != nil {
		return p, notificationsOff(goruntime.GOOS, "buttons", err)
	}
	return p, nil
}

func (w *wailsPlatform) Emit(name string, data any) { runtime.EventsEmit(w.ctx, name, data) }
func (w *wailsPlatform) ShowWindow() {
	runtime.WindowShow(w.ctx)
	runtime.WindowUnminimise(w.ctx)
}
func (w *wailsPlatform) Quit() { runtime.Quit(w.ctx) }

// Notify sends n. The body is escaped for servers that read markup (the
// freedesktop spec's body-markup); Wails shows a category's buttons, so
// each set of actions gets its own category.
func (w *wailsPlatform) Notify(n Notification) error {
	if len(n.Actions) == 0 && (n.Urgency != UrgencyNormal || n.Expire > 0) && w.urgent.send(n) {
		return nil
	}
	opts := runtime.NotificationOptions{ID: n.ID, Title: surface.Line(n.Title), Body: surface.Pango(n.Body), Data: map[string]any{"id": n.ID}}
	if len(n.Actions) == 0 {
		return runtime.SendNotification(w.ctx, opts)
	}
	id, err := w.category(n.Actions)
	if err != nil {
		return err
	}
	opts.CategoryID = id
	return runtime.SendNotificationWithActions(w.ctx, opts)
}

// category registers (once) the notification category for these actions.
func (w *wailsPlatform) category(actions [][2]string) (string, error) {
	ids := make([]string, len(actions))
	for i, a := range actions {
		ids[i] = a[0]
	}
	id := "herald-" + strings.Join(ids, "-")
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.categories[id] {
		return id, nil
	}
	c := runtime.NotificationCategory{ID: id}
	for _, a := range actions {
		c.Actions = append(c.Actions, runtime.NotificationAction{ID: a[0], Title: a[1], Destructive: a[0] == "deny"})
	}
	if err := runtime.RegisterNotificationCategory(w.ctx, c); err != nil {
		return "", err
	}
	w.categories[id] = true
	return id, nil
}

func (w *wailsPlatform) Withdraw(id string) error {
	if w.urgent.withdraw(id) {
		return nil
	}
	return runtime.RemoveNotification(w.ctx, id)
}

// wailsDefaultAction is what Wails reports for a click on the body and, on
// Linux, for a dismissal.
const wailsDefaultAction = "DEFAULT_ACTION"

func (w *wailsPlatform) OnNotificationAction(fn func(id, action string)) {
	runtime.OnNotificationResponse(w.ctx, func(r runtime.NotificationResult) {
		if r.Error != nil {
			return
		}
		action := r.Response.ActionIdentifier
		if action == wailsDefaultAction || action == "" {
			action = ActionClickedOrDismissed
		}
		fn(r.Response.ID, action)
	})
}

func (w *wailsPlatform) WindowGeometry() (WindowGeometry, bool) {
	if runtime.WindowIsMinimised(w.ctx) || runtime.WindowIsFullscreen(w.ctx) {
		return WindowGeometry{}, false
	}
	x, y := runtime.WindowGetPosition(w.ctx)
	width, height := runtime.WindowGetSize(w.ctx)
	return WindowGeometry{X: x, Y: y, Width: width, Height: height, Maximised: runtime.WindowIsMaximised(w.ctx)}, true
}

func (w *wailsPlatform) ScreenSize() (width, height int) {
	screens, err := runtime.ScreenGetAll(w.ctx)
	if err != nil {
		return 0, 0
	}
	for _, s := range screens {
		width += s.Size.Width
		height = max(height, s.Size.Height)
	}
	return width, height
}

func (w *wailsPlatform) PlaceWindow(g WindowGeometry) {
	runtime.WindowSetPosition(w.ctx, g.X, g.Y)
	if g.Maximised {
		runtime.WindowMaximise(w.ctx)
	}
}

func (w *wailsPlatform) HideWindow() { runtime.WindowHide(w.ctx) }
