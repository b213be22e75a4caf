package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"log/slog"
	"reflect"

	"github.com/herald-desktop/herald/approval/surface"
	native "github.com/herald-desktop/herald/desktop"
	"github.com/herald-desktop/herald/service"
)

// The split process model (Linux). The always-on Herald runs the App with
// a headless Platform: notifications over D-Bus, the tray, the service and
// the control socket, and no web view. The window is a child process
// (Window, in winproc.go) started on demand; it calls the App's bound
// methods through CallWindow over the control socket, follows the events
// the App publishes for it (service.PublishWindow) on the service's one
// event stream there (service.WatchWindow), and exits when closed.

// Events the window process handles itself rather than passing to the page.
const (
	EventShow = "herald:show" // raise the window
	EventQuit = "herald:quit" // Herald quits: close the window
)

// Notifier shows desktop notifications without a window (native.DBusNotifier).
type Notifier interface {
	Notify(native.Notification) error
	Withdraw(id string) error
	OnAction(func(id, action string))
}

// dndWatcher is a notifier that can tell the desktop's do not disturb
// (native.DBusNotifier, for dunst and KDE).
type dndWatcher interface {
	WatchDoNotDisturb(fn func(on bool)) bool
}

// WindowLauncher starts the window process (native.Launcher).
type WindowLauncher interface {
	Running() bool
	Start() (bool, error)
}

// HeadlessPlatform is the Platform of the always-on process: events go to
// whichever window process follows them, ShowWindow starts one.
type HeadlessPlatform struct {
	// Notes shows notifications; nil runs without them.
	Notes Notifier
	// NotesErr says why there are no notifications (shown in the window).
	NotesErr error
	// Window starts the window process; nil runs without a window.
	Window WindowLauncher
	// OnQuit ends the process (tray Quit).
	OnQuit func()
	Log    *slog.Logger

	// svc carries events to window processes (set by StartHeadless).
	svc *service.Service
}

// Emit sends an event to the window processes that follow the window's
// events. A snapshot matters only as the latest, and a window that opens
// fetches its own; an approval to open or a raise waits for the next
// window if none follows now (service.WindowHoldAge).
func (p *HeadlessPlatform) Emit(name string, data any) {
	if p.svc == nil {
		return
	}
	var raw json.RawMessage
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return
		}
		raw = b
	}
	p.svc.PublishWindow(service.WindowEvent{Name: name, Data: raw,
		Latest: name == EventSnapshot, Hold: name != EventSnapshot && name != EventQuit})
}

// ShowWindow raises the window, starting its process if needed. If it
// cannot, the user is told in a notification (there is no window to say
// it in).
func (p *HeadlessPlatform) ShowWindow() {
	err := p.showWindow()
	if err == nil {
		return
	}
	if p.Log != nil {
		p.Log.Warn(err.Error())
	}
	if p.Notes != nil {
		p.Notes.Notify(native.Notification{ID: windowErrorID, Title: "Herald cannot open its window", Body: err.Error()})
	}
}

// windowErrorID is the notification saying the window cannot open.
const windowErrorID = "herald:window-error"

func (p *HeadlessPlatform) showWindow() error {
	if p.Window == nil {
		return errors.New("this Herald runs without a window")
	}
	started, err := p.Window.Start()
	if err != nil {
		return err
	}
	if !started {
		p.Emit(EventShow, nil)
	}
	return nil
}

// Notify shows a notification; approvals (with actions) stay up.
func (p *HeadlessPlatform) Notify(n Notification) error {
	if p.Notes == nil {
		return nil
	}
	// The D-Bus notifier offers "Open" itself (the default action: a click
	// on the body; a dismissal is reported apart), so ActionOpen goes.
	actions := make([][2]string, 0, len(n.Actions))
	for _, a := range n.Actions {
		if a[0] != ActionOpen {
			actions = append(actions, a)
		}
	}
	return p.Notes.Notify(nativeNote(n, actions))
}

// nativeNote is n for the D-Bus notifier: it waits (stays until answered)
// when its policy says it has no expiry and it has buttons; a
// notification no policy was applied to (NoteUnset) with buttons waits
// too, at critical urgency: the safe side.
func nativeNote(n Notification, actions [][2]string) native.Notification {
	x := native.Notification{ID: n.ID, Title: n.Title, Body: n.Body, Actions: actions, Urgency: urgencyName(n.Urgency), Timeout: n.Expire}
	waits := n.Expire == 0 && len(n.Actions) > 0
	switch {
	case waits && (n.Urgency == UrgencyCritical || n.Kind == NoteUnset):
		x.Urgent, x.Waits = true, true
	case waits:
		x.Sticky, x.Waits = true, true
	}
	return x
}

// Withdraw removes a notification.
func (p *HeadlessPlatform) Withdraw(id string) error {
	if p.Notes == nil {
		return nil
	}
	return p.Notes.Withdraw(id)
}

// OnNotificationAction registers the click and action-button handler.
func (p *HeadlessPlatform) OnNotificationAction(fn func(id, action string)) {
	if p.Notes != nil {
		p.Notes.OnAction(fn)
	}
}

// Quit ends Herald and closes the window.
func (p *HeadlessPlatform) Quit() {
	p.Emit(EventQuit, nil)
	if p.OnQuit != nil {
		p.OnQuit()
	}
}

// windowHost serves window processes over the control socket for an App
// running on a HeadlessPlatform.
type windowHost struct {
	a *App
	p *HeadlessPlatform
}

// StartHeadless runs the App without a web view: it installs p, starts the
// tray, serves window processes over the control socket and connects.
func (a *App) StartHeadless(p *HeadlessPlatform) error {
	p.svc = a.svc
	a.svc.SetWindowHost(windowHost{a: a, p: p})
	a.Attach(p)
	if p.NotesErr != nil {
		a.warn(p.NotesErr.Error()) // logged and shown in the window
	}
	if w, ok := p.Notes.(dndWatcher); ok {
		w.WatchDoNotDisturb(a.setDoNotDisturb)
	}
	a.startTray()
	err := a.Start()
	a.push()
	return err
}

func (h windowHost) CallWindow(ctx context.Context, method string, args []json.RawMessage) (json.RawMessage, error) {
	return h.a.callBound(method, args)
}

func (h windowHost) ShowWindow() error { return h.p.showWindow() }

var errorType = reflect.TypeFor[error]()

// callBound runs one of the window's methods (WindowAPI's, the set Wails
// binds in a single process) by name with JSON arguments.
func (a *App) callBound(method string, args []json.RawMessage) (json.RawMessage, error) {
	if !token.IsExported(method) {
		return nil, fmt.Errorf("the window cannot call %q", method)
	}
	m := reflect.ValueOf(a.WindowAPI()).MethodByName(method)
	if !m.IsValid() {
		return nil, fmt.Errorf("the window cannot call %q: it is not one of the window's methods (is the window program from another version?)", method)
	}
	t := m.Type()
	if t.IsVariadic() || t.NumIn() != len(args) {
		return nil, fmt.Errorf("%s takes %d arguments, the window sent %d", method, t.NumIn(), len(args))
	}
	in := make([]reflect.Value, len(args))
	for i, raw := range args {
		v := reflect.New(t.In(i))
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, v.Interface()); err != nil {
				return nil, fmt.Errorf("%s: argument %d does not decode: %v", method, i+1, err)
			}
		}
		in[i] = v.Elem()
	}
	var result any
	for _, o := range m.Call(in) {
		if o.Type() == errorType {
			if !o.IsNil() {
				// The window shows the error's text: whatever gateway
				// words it quotes go through the display sanitiser.
				return nil, surface.LineError(o.Interface().(error))
			}
			continue
		}
		result = o.Interface()
	}
	if result == nil {
		return nil, nil
	}
	return json.Marshal(result)
}
