package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/herald-desktop/herald/service"
	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// Window is what the window process binds (as window.go.app.Window): one
// method that forwards a call by name to the always-on Herald over the
// control socket. The page installs window.go.app.App over it
// (frontend/src/lib/forward.ts), so it runs unchanged in either process
// model.
type Window struct {
	control string
	log     *slog.Logger

	mu  sync.Mutex
	ctx context.Context
}

// windowCallTimeout bounds one forwarded call (an answer waits up to 30 s
// for the gateway, a gateway test 15 s).
const windowCallTimeout = 60 * time.Second

// NewWindow forwards to the Herald serving the control socket at control.
func NewWindow(control string, log *slog.Logger) *Window {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Window{control: control, log: log, ctx: context.Background()}
}

// Call runs one of the App's bound methods in the always-on Herald.
// HideWindow (Ctrl+W) is the window's own: hiding the window process's
// only window is closing it, and closing it ends the process.
func (w *Window) Call(method string, args []json.RawMessage) (json.RawMessage, error) {
	w.mu.Lock()
	base := w.ctx
	w.mu.Unlock()
	if method == "HideWindow" {
		runtime.Quit(base)
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(base, windowCallTimeout)
	defer cancel()
	return service.WindowCall(ctx, w.control, method, args)
}

// WindowStartup is the window process's OnStartup hook.
func WindowStartup(w *Window, ctx context.Context) {
	w.mu.Lock()
	w.ctx = ctx
	w.mu.Unlock()
}

// WindowDomReady is the window process's OnDomReady hook: the page listens
// now, so follow Herald's events and hand them to it. When Herald goes
// away, the window closes.
func WindowDomReady(w *Window, ctx context.Context) {
	go func() {
		err := service.WindowEvents(ctx, w.control, nil, func(ev service.WindowEvent) {
			switch ev.Name {
			case EventShow:
				runtime.WindowShow(ctx)
				runtime.WindowUnminimise(ctx)
			case EventQuit:
				runtime.Quit(ctx)
			default:
				var data any = ev.Data
				if len(ev.Data) == 0 {
					data = nil
				}
				runtime.EventsEmit(ctx, ev.Name, data)
			}
		})
		w.log.Warn("the window lost Herald; closing", "err", err)
		runtime.Quit(ctx)
	}()
}
