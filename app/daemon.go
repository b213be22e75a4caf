package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/clock"
	native "github.com/herald-desktop/herald/desktop"
	"github.com/herald-desktop/herald/service"
)

// The split process model (Linux). The always-on Herald runs the App with
// a headless Platform: notifications over D-Bus, the tray, the service and
// the control socket, and no web view. The window is a child process
// (Window, in window.go) started on demand; it calls the App's bound
// methods through CallWindow and follows its events through
// SubscribeWindow, both over the control socket, and exits when closed.

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
	// Clock ages events that wait for a window (default: real).
	Clock clock.Clock

	hub windowHub
}

// Emit sends an event to the window process, if one follows.
func (p *HeadlessPlatform) Emit(name string, data any) { p.hub.emit(p.now(), name, data) }

func (p *HeadlessPlatform) now() time.Time {
	if p.Clock == nil {
		return time.Now()
	}
	return p.Clock.Now()
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
		p.hub.emit(p.now(), EventShow, nil)
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
	urgency := map[Urgency]string{UrgencyLow: "low", UrgencyCritical: "critical"}[n.Urgency]
	return p.Notes.Notify(native.Notification{ID: n.ID, Title: n.Title, Body: n.Body, Actions: actions, Urgent: len(n.Actions) > 0, Urgency: urgency})
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
	p.hub.emit(p.now(), EventQuit, nil)
	if p.OnQuit != nil {
		p.OnQuit()
	}
}

// windowHub fans events out to window processes. Events sent while no
// window follows (an approval to open, a raise) wait for the next one, for
// hubMaxAge; snapshots do not, the window fetches its own when it opens.
type windowHub struct {
	mu     sync.Mutex
	subs   map[chan service.WindowEvent]struct{}
	queued []queuedEvent
}

type queuedEvent struct {
	at time.Time
	ev service.WindowEvent
}

const (
	hubBuffer = 64
	hubQueue  = 16
	// hubMaxAge: a window that opens later than this after the click that
	// asked for it does not act on it (the window failed to start).
	hubMaxAge = 30 * time.Second
)

func (h *windowHub) emit(now time.Time, name string, data any) {
	var raw json.RawMessage
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return
		}
		raw = b
	}
	ev := service.WindowEvent{Name: name, Data: raw}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 {
		if name != EventSnapshot && name != EventQuit && len(h.queued) < hubQueue {
			h.queued = append(h.queued, queuedEvent{at: now, ev: ev})
		}
		return
	}
	for ch := range h.subs {
		select {
		case ch <- ev:
		default: // a stuck window misses this one; snapshots carry everything
		}
	}
}

func (h *windowHub) subscribe(now time.Time) (<-chan service.WindowEvent, func()) {
	ch := make(chan service.WindowEvent, hubBuffer)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[chan service.WindowEvent]struct{}{}
	}
	h.subs[ch] = struct{}{}
	for _, q := range h.queued {
		if now.Sub(q.at) <= hubMaxAge {
			ch <- q.ev
		}
	}
	h.queued = nil
	h.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs, ch)
			h.mu.Unlock()
		})
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
	a.svc.SetWindowHost(windowHost{a: a, p: p})
	a.Attach(p)
	if p.NotesErr != nil {
		a.warn(p.NotesErr.Error()) // logged and shown in the window
	}
	a.startTray()
	err := a.Start()
	a.push()
	return err
}

func (h windowHost) CallWindow(ctx context.Context, method string, args []json.RawMessage) (json.RawMessage, error) {
	return h.a.callBound(method, args)
}

func (h windowHost) SubscribeWindow() (<-chan service.WindowEvent, func()) {
	return h.p.hub.subscribe(h.p.now())
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
