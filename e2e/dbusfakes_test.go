//go:build linux

package e2e

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// ---- org.freedesktop.Notifications ----

const (
	notifyName  = "org.freedesktop.Notifications"
	notifyPath  = dbus.ObjectPath("/org/freedesktop/Notifications")
	notifyIface = "org.freedesktop.Notifications"
)

// note is one notification the app sent.
type note struct {
	ID      uint32
	App     string
	Icon    string // app_icon: a themed icon name or a file URI
	Summary string
	Body    string
	Actions []string // key, label, key, label, ...
	Key     string   // the app's notification id (hint x-notification-id)
	Open    bool
	// ClosedBy is "app" (CloseNotification) or "action" (the server
	// closed it after an action was invoked, as servers do unless the
	// notification is resident).
	ClosedBy string
	// AppCloses counts CloseNotification calls from the app.
	AppCloses int
}

// ActionKeys are the action identifiers offered.
func (n note) ActionKeys() []string {
	var ks []string
	for i := 0; i+1 < len(n.Actions); i += 2 {
		ks = append(ks, n.Actions[i])
	}
	return ks
}

// HasAction reports whether an action key is offered.
func (n note) HasAction(k string) bool {
	for _, a := range n.ActionKeys() {
		if a == k {
			return true
		}
	}
	return false
}

// notifyServer is a fake notification daemon that records everything.
type notifyServer struct {
	conn *dbus.Conn

	mu      sync.Mutex
	next    uint32
	notes   map[uint32]*note
	order   []uint32
	changed chan struct{}
}

// notifyDBus holds only the methods exported on the bus.
type notifyDBus struct{ s *notifyServer }

func (h notifyDBus) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	s := h.s
	s.mu.Lock()
	id := replaces
	if _, ok := s.notes[id]; !ok || id == 0 {
		s.next++
		id = s.next
		s.order = append(s.order, id)
	}
	key, _ := hints["x-notification-id"].Value().(string)
	s.notes[id] = &note{ID: id, App: app, Icon: icon, Summary: summary, Body: body, Actions: append([]string(nil), actions...), Key: key}
	s.mu.Unlock()
	// The notification is "on screen" (Open, visible to waitFor) once
	// this handler returned, right before godbus sends the reply: a
	// person cannot click a notification before Notify returned, and an
	// ActionInvoked that overtakes the reply is dropped by the app.
	defer func() {
		s.mu.Lock()
		s.notes[id].Open = true
		s.bumpLocked()
		s.mu.Unlock()
	}()
	return id, nil
}

func (h notifyDBus) CloseNotification(id uint32) *dbus.Error {
	s := h.s
	s.mu.Lock()
	n, ok := s.notes[id]
	wasOpen := ok && n.Open
	if ok {
		n.AppCloses++
		if n.Open {
			n.Open, n.ClosedBy = false, "app"
		}
	}
	s.bumpLocked()
	s.mu.Unlock()
	if wasOpen {
		// Reason 3: closed by a call to CloseNotification.
		s.conn.Emit(notifyPath, notifyIface+".NotificationClosed", id, uint32(3))
	}
	return nil
}

func (h notifyDBus) GetCapabilities() ([]string, *dbus.Error) {
	return []string{"actions", "body", "body-markup"}, nil
}

func (h notifyDBus) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "herald-e2e", "herald", "1.0", "1.2", nil
}

// newNotifyServer claims org.freedesktop.Notifications on conn.
func newNotifyServer(conn *dbus.Conn) (*notifyServer, error) {
	s := &notifyServer{conn: conn, notes: map[uint32]*note{}, changed: make(chan struct{})}
	if err := conn.Export(notifyDBus{s}, notifyPath, notifyIface); err != nil {
		return nil, err
	}
	if err := requestName(conn, notifyName); err != nil {
		return nil, err
	}
	return s, nil
}

func requestName(conn *dbus.Conn, name string) error {
	r, err := conn.RequestName(name, dbus.NameFlagDoNotQueue)
	if err != nil {
		return fmt.Errorf("requesting %s: %v", name, err)
	}
	if r != dbus.RequestNameReplyPrimaryOwner {
		return fmt.Errorf("%s is already owned on the test bus", name)
	}
	return nil
}

func (s *notifyServer) bumpLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// snapshot returns every notification in arrival order.
func (s *notifyServer) snapshot() []note {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []note
	for _, id := range s.order {
		out = append(out, *s.notes[id])
	}
	return out
}

// waitFor blocks until some notification satisfies pred, or timeout.
func (s *notifyServer) waitFor(timeout time.Duration, what string, pred func(note) bool) (note, error) {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		ch := s.changed
		for _, id := range s.order {
			if n := *s.notes[id]; pred(n) {
				s.mu.Unlock()
				return n, nil
			}
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			return note{}, fmt.Errorf("no notification %s within %s; got: %s", what, timeout, s.describe())
		}
	}
}

func (s *notifyServer) describe() string {
	var b strings.Builder
	for _, n := range s.snapshot() {
		fmt.Fprintf(&b, "\n  #%d key=%q open=%v closedBy=%q appCloses=%d summary=%q body=%q actions=%q", n.ID, n.Key, n.Open, n.ClosedBy, n.AppCloses, n.Summary, n.Body, n.Actions)
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// invoke presses an action button: it emits ActionInvoked. (Call
// closeAfterAction once the app took it, as servers close non-resident
// notifications after an action.)
func (s *notifyServer) invoke(id uint32, action string) error {
	s.mu.Lock()
	n, ok := s.notes[id]
	open := ok && n.Open
	s.mu.Unlock()
	if !open {
		return fmt.Errorf("notification %d is not open", id)
	}
	return s.conn.Emit(notifyPath, notifyIface+".ActionInvoked", id, action)
}

// closeAfterAction closes a notification whose action was invoked:
// NotificationClosed with reason 2, which is what GNOME Shell and dunst
// send after an action.
func (s *notifyServer) closeAfterAction(id uint32) error {
	s.mu.Lock()
	n, ok := s.notes[id]
	if !ok || !n.Open {
		s.mu.Unlock()
		return fmt.Errorf("notification %d is not open", id)
	}
	n.Open, n.ClosedBy = false, "action"
	s.bumpLocked()
	s.mu.Unlock()
	return s.conn.Emit(notifyPath, notifyIface+".NotificationClosed", id, uint32(2))
}

// ---- org.kde.StatusNotifierWatcher ----

const (
	watcherName  = "org.kde.StatusNotifierWatcher"
	watcherPath  = dbus.ObjectPath("/StatusNotifierWatcher")
	watcherIface = "org.kde.StatusNotifierWatcher"
)

// registration is one RegisterStatusNotifierItem call.
type registration struct {
	Sender string // unique bus name of the app's connection
	Arg    string // what it passed: an object path or a bus name
}

// watcher is a minimal StatusNotifierWatcher that records items.
type watcher struct {
	conn *dbus.Conn
	mu   sync.Mutex
	regs []registration
	ch   chan struct{}
}

type watcherDBus struct{ w *watcher }

func (h watcherDBus) RegisterStatusNotifierItem(sender dbus.Sender, service string) *dbus.Error {
	w := h.w
	w.mu.Lock()
	w.regs = append(w.regs, registration{Sender: string(sender), Arg: service})
	close(w.ch)
	w.ch = make(chan struct{})
	w.mu.Unlock()
	w.conn.Emit(watcherPath, watcherIface+".StatusNotifierItemRegistered", string(sender)+service)
	return nil
}

func (h watcherDBus) RegisterStatusNotifierHost(service string) *dbus.Error { return nil }

func newWatcher(conn *dbus.Conn) (*watcher, error) {
	w := &watcher{conn: conn, ch: make(chan struct{})}
	if err := conn.Export(watcherDBus{w}, watcherPath, watcherIface); err != nil {
		return nil, err
	}
	if err := requestName(conn, watcherName); err != nil {
		return nil, err
	}
	return w, nil
}

// waitItem returns the first registration, waiting up to timeout.
func (w *watcher) waitItem(timeout time.Duration) (registration, error) {
	deadline := time.After(timeout)
	for {
		w.mu.Lock()
		ch := w.ch
		if len(w.regs) > 0 {
			r := w.regs[0]
			w.mu.Unlock()
			return r, nil
		}
		w.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			return registration{}, fmt.Errorf("no StatusNotifierItem registered within %s", timeout)
		}
	}
}

// ---- the tray item and its com.canonical.dbusmenu menu ----

// trayClient drives a registered StatusNotifierItem like a panel would.
type trayClient struct {
	conn     *dbus.Conn
	dest     string
	item     dbus.ObjectPath
	menuPath dbus.ObjectPath
}

func newTrayClient(conn *dbus.Conn, r registration) (*trayClient, error) {
	tc := &trayClient{conn: conn, dest: r.Sender, item: "/StatusNotifierItem"}
	if strings.HasPrefix(r.Arg, "/") {
		tc.item = dbus.ObjectPath(r.Arg)
	} else if r.Arg != "" {
		tc.dest = r.Arg
	}
	v, err := conn.Object(tc.dest, tc.item).GetProperty("org.kde.StatusNotifierItem.Menu")
	if err != nil {
		return nil, fmt.Errorf("reading the item's Menu property: %v", err)
	}
	p, ok := v.Value().(dbus.ObjectPath)
	if !ok {
		return nil, fmt.Errorf("the item's Menu property is %T", v.Value())
	}
	tc.menuPath = p
	return tc, nil
}

// itemProp reads a StatusNotifierItem property (Title, ToolTip, ...).
func (tc *trayClient) itemProp(name string) (dbus.Variant, error) {
	return tc.conn.Object(tc.dest, tc.item).GetProperty("org.kde.StatusNotifierItem." + name)
}

// menuNode is one dbusmenu entry.
type menuNode struct {
	ID       int32
	Label    string
	Enabled  bool
	Visible  bool
	Children []menuNode
}

// find returns the first node (depth first) matching pred.
func (m menuNode) find(pred func(menuNode) bool) (menuNode, bool) {
	if pred(m) {
		return m, true
	}
	for _, c := range m.Children {
		if n, ok := c.find(pred); ok {
			return n, true
		}
	}
	return menuNode{}, false
}

// String renders the menu as an indented outline, for failure messages.
func (m menuNode) String() string {
	var b strings.Builder
	var walk func(n menuNode, depth int)
	walk = func(n menuNode, depth int) {
		if depth > 0 {
			flags := ""
			if !n.Enabled {
				flags = " (disabled)"
			}
			fmt.Fprintf(&b, "%s[%d] %q%s\n", strings.Repeat("  ", depth-1), n.ID, n.Label, flags)
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(m, 0)
	return b.String()
}

// layout calls GetLayout(0, -1, []) and decodes the whole tree.
func (tc *trayClient) layout() (menuNode, error) {
	var rev uint32
	var raw []any
	call := tc.conn.Object(tc.dest, tc.menuPath).Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{})
	if call.Err != nil {
		return menuNode{}, call.Err
	}
	if len(call.Body) != 2 {
		return menuNode{}, fmt.Errorf("GetLayout returned %d values", len(call.Body))
	}
	rev, _ = call.Body[0].(uint32)
	_ = rev
	raw, ok := call.Body[1].([]any)
	if !ok {
		return menuNode{}, fmt.Errorf("GetLayout layout is %T", call.Body[1])
	}
	return decodeMenu(raw)
}

func decodeMenu(raw []any) (menuNode, error) {
	if len(raw) != 3 {
		return menuNode{}, fmt.Errorf("menu node has %d fields", len(raw))
	}
	var n menuNode
	n.ID, _ = raw[0].(int32)
	props, _ := raw[1].(map[string]dbus.Variant)
	n.Label, _ = props["label"].Value().(string)
	n.Enabled, n.Visible = true, true
	if v, ok := props["enabled"]; ok {
		n.Enabled, _ = v.Value().(bool)
	}
	if v, ok := props["visible"]; ok {
		n.Visible, _ = v.Value().(bool)
	}
	kids, _ := raw[2].([]dbus.Variant)
	for _, k := range kids {
		kr, ok := k.Value().([]any)
		if !ok {
			return menuNode{}, fmt.Errorf("menu child is %T", k.Value())
		}
		c, err := decodeMenu(kr)
		if err != nil {
			return menuNode{}, err
		}
		n.Children = append(n.Children, c)
	}
	return n, nil
}

// click sends the "clicked" event a panel sends when an entry is chosen.
func (tc *trayClient) click(id int32) error {
	return tc.conn.Object(tc.dest, tc.menuPath).Call("com.canonical.dbusmenu.Event", 0,
		id, "clicked", dbus.MakeVariant(""), uint32(time.Now().Unix())).Err
}

// findEntry polls the layout until pred finds an entry. (fyne's systray
// serves a shallow tree on the first GetLayout after each reset, so one
// look is not enough.)
func (tc *trayClient) findEntry(timeout time.Duration, what string, pred func(parent, n menuNode) bool) (menuNode, error) {
	var last menuNode
	var lastErr error
	err := poll(timeout, 100*time.Millisecond, func() (bool, error) {
		m, err := tc.layout()
		if err != nil {
			lastErr = err
			return false, nil
		}
		last = m
		return findWithParent(m, pred) != nil, nil
	})
	if err != nil {
		return menuNode{}, fmt.Errorf("tray menu has no %s (%v, last error %v); menu:\n%s", what, err, lastErr, last)
	}
	return *findWithParent(last, pred), nil
}

func findWithParent(m menuNode, pred func(parent, n menuNode) bool) *menuNode {
	for _, c := range m.Children {
		if pred(m, c) {
			c := c
			return &c
		}
		if n := findWithParent(c, pred); n != nil {
			return n
		}
	}
	return nil
}

// labels lists the top-level labels, for logs.
func (m menuNode) labels() []string {
	var out []string
	for _, c := range m.Children {
		out = append(out, c.Label)
	}
	sort.Strings(out)
	return out
}
