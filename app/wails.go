package app

import (
	"context"
	goruntime "runtime"

	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// wailsPlatform forwards to Wails' runtime with the context Wails gave us.
type wailsPlatform struct{ ctx context.Context }

const approvalCategory = "herald-approval"

// newWailsPlatform also sets up notifications; an error says why they are
// off (the platform still works for the window and the tray).
func newWailsPlatform(ctx context.Context) (*wailsPlatform, error) {
	p := &wailsPlatform{ctx: ctx}
	if err := runtime.InitializeNotifications(ctx); err != nil {
		return p, notificationsOff(goruntime.GOOS, "", err)
	}
	err := runtime.RegisterNotificationCategory(ctx, runtime.NotificationCategory{
		ID: approvalCategory,
		Actions: []runtime.NotificationAction{
			{ID: "once", Title: "Approve once"},
			{ID: "deny", Title: "Deny", Destructive: true},
		},
	})
	if err != nil {
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

func (w *wailsPlatform) Notify(n Notification) error {
	opts := runtime.NotificationOptions{ID: n.ID, Title: n.Title, Body: n.Body, Data: map[string]any{"id": n.ID}}
	if len(n.Actions) == 0 {
		return runtime.SendNotification(w.ctx, opts)
	}
	opts.CategoryID = approvalCategory
	return runtime.SendNotificationWithActions(w.ctx, opts)
}

func (w *wailsPlatform) Withdraw(id string) error { return runtime.RemoveNotification(w.ctx, id) }

func (w *wailsPlatform) OnNotificationAction(fn func(id, action string)) {
	runtime.OnNotificationResponse(w.ctx, func(r runtime.NotificationResult) {
		if r.Error != nil {
			return
		}
		fn(r.Response.ID, r.Response.ActionIdentifier)
	})
}
