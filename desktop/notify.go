package desktop

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/herald-desktop/herald/approval/surface"
)

const (
	notifyName  = "org.freedesktop.Notifications"
	notifyPath  = "/org/freedesktop/Notifications"
	notifyIface = "org.freedesktop.Notifications"
)

// Notification is one desktop notification.
type Notification struct {
	// ID is Herald's own id (an approval key); Notify with the same ID
	// replaces the notification.
	ID    string
	Title string
	Body  string
	// Actions are (id, label) pairs shown as buttons.
	Actions [][2]string
	// Urgent notifications (approvals) stay until answered or dismissed.
	Urgent bool
	// Urgency, for a notification that is not Urgent: "low", "critical",
	// or "" for the server's default (Hermes' own notices by level).
	Urgency string
	// Sticky notifications stay until withdrawn or dismissed, at their
	// Urgency (an approval Herald can only deny).
	Sticky bool
	// Timeout, when not Urgent or Sticky, is how long the server shows
	// it (0: the server's default).
	Timeout time.Duration
	// Waits marks one that waits for the user (approvals, prompts):
	// category x-herald.request; the others are x-herald.info.
	Waits bool
}

// noActionsNote is added to a notification with buttons on a server that
// shows none (its capabilities lack "actions").
const noActionsNote = "Open Herald to answer it (this desktop's notifications have no buttons)."

// urgencyHint is the freedesktop "urgency" hint for x (0 low, 2
// critical), if it has one.
func urgencyHint(x Notification) (byte, bool) {
	switch {
	case x.Urgent, x.Urgency == "critical":
		return 2, true
	case x.Urgency == "low":
		return 0, true
	}
	return 0, false
}

// notifyArgs are the Notify call's body, actions, hints and expiry for x,
// on a server that reads markup in bodies or not, and shows action
// buttons or not (then the body says how to answer).
func notifyArgs(x Notification, markup, hasActions bool) (body string, actions []string, hints map[string]dbus.Variant, timeout int32) {
	actions = []string{"default", "Open"}
	for _, a := range x.Actions {
		actions = append(actions, a[0], surface.Line(a[1]))
	}
	text := x.Body
	if len(x.Actions) > 0 && !hasActions {
		text = strings.TrimSpace(text + "\n" + noActionsNote)
	}
	body = surface.Terminal(text)
	if markup {
		body = surface.Pango(text)
	}
	// The icon: Herald's themed icon (hicolor, installed with the app
	// menu entry), as the desktop-entry hint names the entry. The
	// category says whether it waits for the user.
	hints = map[string]dbus.Variant{
		"x-notification-id": dbus.MakeVariant(x.ID),
		"desktop-entry":     dbus.MakeVariant("herald"),
		"category":          dbus.MakeVariant(map[bool]string{true: "x-herald.request", false: "x-herald.info"}[x.Waits || x.Urgent]),
	}
	if u, ok := urgencyHint(x); ok {
		hints["urgency"] = dbus.MakeVariant(u)
	}
	return body, actions, hints, expireTimeout(x)
}

// expireTimeout is the Notify call's expire_timeout for x: 0 (never)
// for one that waits, x.Timeout in milliseconds, or -1 (the server's
// default).
func expireTimeout(x Notification) int32 {
	switch {
	case x.Urgent, x.Sticky:
		return 0 // never expires: it waits for the user
	case x.Timeout > 0:
		return int32(min(x.Timeout.Milliseconds(), math.MaxInt32))
	}
	return -1
}

// DBusNotifier shows notifications through the desktop's notification
// server over the session bus, and reports clicks and action buttons:
// ActionInvoked with "default" for a click on the body.
type DBusNotifier struct {
	conn    *dbus.Conn
	markup  bool // the server reads <b> & co. in bodies: escape them
	actions bool // the server shows action buttons
	sig     chan *dbus.Signal
	done    chan struct{}
	stopped sync.WaitGroup

	mu       sync.Mutex
	byKey    map[string]uint32
	byID     map[uint32]string
	onAction func(id, action string)
	onDND    func(on bool)
	// spawn runs a handler off the signal loop (tests run it inline).
	spawn func(func())
}

// NewDBusNotifier connects to the session bus. It fails when there is no
// bus or no notification server, saying so.
func NewDBusNotifier() (*DBusNotifier, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("no D-Bus session bus for notifications (%v): notifications are off, the tray and the window still work", err)
	}
	n, err := newDBusNotifier(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return n, nil
}

func newDBusNotifier(conn *dbus.Conn) (*DBusNotifier, error) {
	obj := conn.Object(notifyName, notifyPath)
	var caps []string
	if err := obj.Call(notifyIface+".GetCapabilities", 0).Store(&caps); err != nil {
		return nil, fmt.Errorf("no desktop notification server (%v): notifications are off, the tray and the window still work", err)
	}
	n := &DBusNotifier{
		conn:  conn,
		sig:   make(chan *dbus.Signal, 64),
		done:  make(chan struct{}),
		byKey: map[string]uint32{},
		byID:  map[uint32]string{},
	}
	for _, c := range caps {
		switch c {
		case "body-markup":
			n.markup = true
		case "actions":
			n.actions = true
		}
	}
	for _, member := range []string{"ActionInvoked", "NotificationClosed"} {
		if err := conn.AddMatchSignal(dbus.WithMatchObjectPath(notifyPath), dbus.WithMatchInterface(notifyIface), dbus.WithMatchMember(member)); err != nil {
			return nil, fmt.Errorf("cannot follow notification clicks: %v", err)
		}
	}
	// The server's do not disturb, where it has one (dunst's paused,
	// KDE's Inhibited): best effort, a server without it says nothing.
	_ = conn.AddMatchSignal(dbus.WithMatchObjectPath(notifyPath), dbus.WithMatchInterface(propsIface), dbus.WithMatchMember("PropertiesChanged"))
	conn.Signal(n.sig)
	n.stopped.Add(1)
	go n.loop()
	return n, nil
}

// OnAction sets the handler for clicks ("default") and action buttons. It
// runs on its own goroutine.
func (n *DBusNotifier) OnAction(fn func(id, action string)) {
	n.mu.Lock()
	n.onAction = fn
	n.mu.Unlock()
}

// Notify shows n, replacing the one with the same ID.
func (n *DBusNotifier) Notify(x Notification) error {
	body, actions, hints, timeout := notifyArgs(x, n.markup, n.actions)
	// Hold the lock across the call: an ActionInvoked for the new id
	// waits until the id is filed under its key.
	n.mu.Lock()
	defer n.mu.Unlock()
	var id uint32
	err := n.conn.Object(notifyName, notifyPath).Call(notifyIface+".Notify", 0,
		"Herald", n.byKey[x.ID], appIcon, surface.Line(x.Title), body, actions, hints, timeout).Store(&id)
	if err != nil {
		return fmt.Errorf("the desktop did not show the notification: %v", err)
	}
	if old, ok := n.byKey[x.ID]; ok && old != id {
		delete(n.byID, old)
	}
	n.byKey[x.ID] = id
	n.byID[id] = x.ID
	return nil
}

// Withdraw closes the notification with this ID, if it is up.
func (n *DBusNotifier) Withdraw(key string) error {
	n.mu.Lock()
	id, ok := n.byKey[key]
	delete(n.byKey, key)
	delete(n.byID, id)
	n.mu.Unlock()
	if !ok {
		return nil
	}
	return n.conn.Object(notifyName, notifyPath).Call(notifyIface+".CloseNotification", 0, id).Err
}

// Close stops following clicks and closes the bus connection.
func (n *DBusNotifier) Close() error {
	select {
	case <-n.done:
		return nil
	default:
	}
	close(n.done)
	n.conn.RemoveSignal(n.sig)
	n.stopped.Wait()
	return n.conn.Close()
}

func (n *DBusNotifier) loop() {
	defer n.stopped.Done()
	for {
		select {
		case <-n.done:
			return
		case s, ok := <-n.sig:
			if !ok {
				return
			}
			n.handle(s)
		}
	}
}

func (n *DBusNotifier) handle(s *dbus.Signal) {
	if s == nil || s.Path != notifyPath || len(s.Body) < 2 {
		return
	}
	if s.Name == propsIface+".PropertiesChanged" {
		n.mu.Lock()
		fn := n.onDND
		n.mu.Unlock()
		if on, ok := dndChange(s); ok && fn != nil {
			fn(on)
		}
		return
	}
	id, ok := s.Body[0].(uint32)
	if !ok {
		return
	}
	n.mu.Lock()
	key, known := n.byID[id]
	fn := n.onAction
	switch s.Name {
	case notifyIface + ".NotificationClosed":
		if known {
			delete(n.byID, id)
			delete(n.byKey, key)
		}
		n.mu.Unlock()
		return
	case notifyIface + ".ActionInvoked":
	default:
		n.mu.Unlock()
		return
	}
	n.mu.Unlock()
	action, _ := s.Body[1].(string)
	if !known || fn == nil || action == "" {
		return // another app's notification, or one already withdrawn
	}
	if n.spawn != nil {
		n.spawn(func() { fn(key, action) })
		return
	}
	go fn(key, action)
}

// The properties that say a notification server holds notifications
// back: dunst's "paused" (dunstctl set-paused), KDE Plasma's
// "Inhibited" (do not disturb).
const (
	propsIface    = "org.freedesktop.DBus.Properties"
	dunstIface    = "org.dunstproject.cmd0"
	dunstPaused   = "paused"
	kdeInhibited  = "Inhibited"
	dndIfaceOfKDE = notifyIface
)

// WatchDoNotDisturb calls fn with whether the notification server holds
// notifications back, at once and whenever that changes. It reports false
// (and never calls fn) when the server says nothing about it.
func (n *DBusNotifier) WatchDoNotDisturb(fn func(on bool)) bool {
	obj := n.conn.Object(notifyName, notifyPath)
	var on bool
	known := false
	for _, q := range [][2]string{{dunstIface, dunstPaused}, {dndIfaceOfKDE, kdeInhibited}} {
		v, err := obj.GetProperty(q[0] + "." + q[1])
		if b, ok := v.Value().(bool); err == nil && ok {
			on, known = b, true
			break
		}
	}
	if !known {
		return false
	}
	n.mu.Lock()
	n.onDND = fn
	n.mu.Unlock()
	fn(on)
	return true
}

// dndChange reads a PropertiesChanged signal of the notification server:
// whether it now holds notifications back, if the signal says.
func dndChange(s *dbus.Signal) (on, ok bool) {
	if len(s.Body) < 2 {
		return false, false
	}
	iface, _ := s.Body[0].(string)
	changed, _ := s.Body[1].(map[string]dbus.Variant)
	name := map[string]string{dunstIface: dunstPaused, dndIfaceOfKDE: kdeInhibited}[iface]
	v, has := changed[name]
	if name == "" || !has {
		return false, false
	}
	on, ok = v.Value().(bool)
	return on, ok
}

// ErrNoWindow means the window program could not be found or started.
var ErrNoWindow = errors.New("the window program (herald-window) was not found next to herald: reinstall Herald, or set HERALD_WINDOW_BINARY")

// appIcon is the themed icon name of Herald's icon (build/linux/icons).
const appIcon = "herald"
