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
// control socket. The page installs window.go.app.WindowAPI over it
// (frontend/src/lib/forward.ts), so it runs unchanged in either process
// model.
type Window struct {
	control string
	log     *slog.Logger

	mu  sync.Mutex
	ctx context.Context
	// follow starts following Herald's events once, however often the
	// page loads (OnDomReady fires on every load).
	follow sync.Once
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
	switch method {
	case "HideWindow":
		w.saveGeometry(base)
		runtime.Quit(base)
		return nil, nil
	case "SaveWindowState":
		return nil, w.saveGeometry(base)
	case "QuitApp":
		w.saveGeometry(base)
	}
	return w.forward(base, method, args)
}

func (w *Window) forward(base context.Context, method string, args []json.RawMessage) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(base, windowCallTimeout)
	defer cancel()
	return service.WindowCall(ctx, w.control, method, args)
}

// saveGeometry measures the window here, where it is, and has Herald
// remember it (RememberWindow).
func (w *Window) saveGeometry(ctx context.Context) error {
	g, ok := (&wailsPlatform{ctx: ctx}).WindowGeometry()
	if !ok {
		return nil
	}
	arg, err := json.Marshal(g)
	if err != nil {
		return err
	}
	_, err = w.forward(ctx, "RememberWindow", []json.RawMessage{arg})
	return err
}

// WindowBeforeClose is the window process's OnBeforeClose hook: remember
// the window, then let it close (and the process end).
func WindowBeforeClose(w *Window, ctx context.Context) bool {
	w.saveGeometry(ctx)
	return false
}

// placeWindow puts the window where it was last, if that is on screen
// (the settings file is read here: the window process has no App).
func placeWindow(ctx context.Context, st Settings) {
	g := st.Window
	if g == nil {
		return
	}
	wp := &wailsPlatform{ctx: ctx}
	sw, sh := wp.ScreenSize()
	if !placeable(*g, sw, sh) && !g.Maximised {
		return
	}
	wp.PlaceWindow(*g)
}

// WindowStartup is the window process's OnStartup hook: st is the
// settings file as the window process read it, for the window's place.
func WindowStartup(w *Window, ctx context.Context, st Settings) {
	w.mu.Lock()
	w.ctx = ctx
	w.mu.Unlock()
	placeWindow(ctx, st)
}

// WindowDomReady is the window process's OnDomReady hook: the page listens
// now, so follow Herald's events and hand them to it. When Herald goes
// away, the window closes.
func WindowDomReady(w *Window, ctx context.Context) {
	w.follow.Do(func() { go w.followEvents(ctx) })
}

// windowQueue is the window's queue in Herald: snapshots not yet read
// merge into the latest, so a stuck window holds little.
const windowQueue = 64

// followEvents follows the window's events on Herald's event stream
// (service.WatchWindow) until Herald goes away.
func (w *Window) followEvents(ctx context.Context) {
	err := w.watchEvents(ctx)
	w.log.Warn("the window lost Herald; closing", "err", err)
	runtime.Quit(ctx)
}

func (w *Window) watchEvents(ctx context.Context) error {
	stream, err := service.WatchControl(ctx, w.control, service.WatchWindow, windowQueue)
	if err != nil {
		return err
	}
	defer stream.Close()
	for {
		n, err := stream.Next(ctx)
		if err != nil {
			return err
		}
		if n.Lagged > 0 {
			// The next snapshot redraws the whole window.
			w.log.Info("the window fell behind Herald's events", "lost", n.Lagged)
		}
		ev := n.Window
		if ev == nil {
			continue
		}
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
	}
}
