//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// The real desktop stack of TestDesktopMonitor: xfce4-panel (its systray
// plugin is the StatusNotifierWatcher, the tray host), dunst (the
// notification server, its context menu driven through a dmenu stand-in)
// and a D-Bus monitor that records every notification on the bus.

// panelConfig is an xfce4-panel with one panel holding the systray plugin
// at a 22 px icon size, top of the screen.
const panelConfig = `<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfce4-panel" version="1.0">
  <property name="configver" type="int" value="2"/>
  <property name="panels" type="array">
    <value type="int" value="1"/>
    <property name="panel-1" type="empty">
      <property name="position" type="string" value="p=6;x=0;y=0"/>
      <property name="length" type="uint" value="100"/>
      <property name="position-locked" type="bool" value="true"/>
      <property name="size" type="uint" value="26"/>
      <property name="icon-size" type="uint" value="22"/>
      <property name="plugin-ids" type="array">
        <value type="int" value="1"/>
      </property>
    </property>
  </property>
  <property name="plugins" type="empty">
    <property name="plugin-1" type="string" value="systray">
      <property name="square-icons" type="bool" value="false"/>
      <property name="icon-size" type="int" value="22"/>
    </property>
  </property>
</channel>
`

// xfconfd is where Debian puts the xfconf daemon (the panel reads its
// configuration through it; the test's bus starts nothing by itself).
const xfconfd = "/usr/lib/x86_64-linux-gnu/xfce4/xfconf/xfconfd"

// startPanel starts xfconfd and xfce4-panel and waits for the tray host.
func (e *env) startPanel() {
	e.t.Helper()
	dir := filepath.Join(e.dir("xdg-config"), "xfce4", "xfconf", "xfce-perchannel-xml")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "xfce4-panel.xml"), []byte(panelConfig), 0o600); err != nil {
		e.t.Fatal(err)
	}
	bin := xfconfd
	if _, err := os.Stat(bin); err != nil {
		if matches, _ := filepath.Glob("/usr/lib/*/xfce4/xfconf/xfconfd"); len(matches) > 0 {
			bin = matches[0]
		}
	}
	e.start("xfconfd", bin, startOpts{env: e.childEnv()})
	if err := poll(20*time.Second, 50*time.Millisecond, func() (bool, error) { return e.hasOwner("org.xfce.Xfconf"), nil }); err != nil {
		e.t.Fatalf("xfconfd did not appear on the bus: %v", err)
	}
	// No window manager here: the panel would wait for one.
	p := e.start("xfce4-panel", "xfce4-panel", startOpts{args: []string{"--disable-wm-check"}, env: e.childEnv("NO_AT_BRIDGE=1")})
	if err := poll(60*time.Second, 50*time.Millisecond, func() (bool, error) {
		if p.exited() {
			return false, fmt.Errorf("xfce4-panel exited: %v\n%s", p.err, p.tail(2000))
		}
		return e.hasOwner(watcherName), nil
	}); err != nil {
		e.t.Fatalf("xfce4-panel's systray did not become the tray host: %v", err)
	}
}

// panelItems lists the items the panel's watcher holds ("service/path").
func (e *env) panelItems() []string {
	v, err := e.bus.Object(watcherName, watcherPath).GetProperty(watcherIface + ".RegisteredStatusNotifierItems")
	if err != nil {
		return nil
	}
	items, _ := v.Value().([]string)
	return items
}

// waitPanelItem waits for the panel to hold an item and returns it as a
// registration (bus name and object path).
func (e *env) waitPanelItem(timeout time.Duration) (registration, error) {
	var items []string
	err := poll(timeout, 50*time.Millisecond, func() (bool, error) {
		items = e.panelItems()
		return len(items) > 0, nil
	})
	if err != nil {
		return registration{}, fmt.Errorf("the panel registered no tray item: %v", err)
	}
	dest, path, ok := strings.Cut(items[0], "/")
	if !ok {
		return registration{Sender: items[0]}, nil
	}
	return registration{Sender: dest, Arg: "/" + path}, nil
}

// dunstConfig: one popup per notification at the top right, under the
// panel, no limit on how many, a long history, and the context menu
// through the test's dmenu stand-in.
const dunstConfig = `[global]
    monitor = 0
    follow = none
    width = 420
    height = 200
    origin = top-right
    offset = 8x34
    notification_limit = 0
    font = DejaVu Sans 9
    format = "<b>%%s</b>\n%%b"
    markup = full
    history_length = 500
    idle_threshold = 0
    show_indicators = no
    dmenu = %s
[urgency_low]
    timeout = 10
[urgency_normal]
    timeout = 10
[urgency_critical]
    timeout = 0
`

// chooser is dunst's dmenu: it logs the menu dunst offers and picks the
// first line holding every word in the pick file.
const chooser = `#!/bin/sh
menu=$(cat)
printf '%%s\n---\n' "$menu" >> %[1]s/menus.log
want=$(cat %[1]s/pick 2>/dev/null)
printf '%%s\n' "$menu" | while IFS= read -r line; do
  ok=1
  for w in $want; do case "$line" in *"$w"*) ;; *) ok=0;; esac; done
  if [ "$ok" = 1 ]; then printf '%%s\n' "$line"; exit 0; fi
done
`

// dunst is the notification server and how the test drives its menu.
type dunst struct {
	e   *env
	dir string
	p   *proc
}

func (e *env) startDunst() *dunst {
	e.t.Helper()
	dir := e.dir("dunst")
	choose := filepath.Join(dir, "choose")
	if err := os.WriteFile(choose, []byte(fmt.Sprintf(chooser, dir)), 0o700); err != nil {
		e.t.Fatal(err)
	}
	conf := filepath.Join(dir, "dunstrc")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(dunstConfig, choose)), 0o600); err != nil {
		e.t.Fatal(err)
	}
	p := e.start("dunst", "dunst", startOpts{args: []string{"-config", conf}, env: e.childEnv()})
	if err := poll(30*time.Second, 50*time.Millisecond, func() (bool, error) {
		if p.exited() {
			return false, fmt.Errorf("dunst exited: %v\n%s", p.err, p.tail(2000))
		}
		return e.hasOwner(notifyName), nil
	}); err != nil {
		e.t.Fatalf("dunst did not take org.freedesktop.Notifications: %v", err)
	}
	return &dunst{e: e, dir: dir, p: p}
}

// ctl runs dunstctl on the test's bus.
func (d *dunst) ctl(args ...string) (string, error) {
	return d.e.run(15*time.Second, "dunstctl", args...)
}

// choose opens dunst's context menu and picks the action whose line
// holds every word in words; it reports the menu dunst offered.
func (d *dunst) choose(words ...string) (string, error) {
	if err := os.WriteFile(filepath.Join(d.dir, "pick"), []byte(strings.Join(words, " ")), 0o600); err != nil {
		return "", err
	}
	before, _ := os.ReadFile(filepath.Join(d.dir, "menus.log"))
	if _, err := d.ctl("context"); err != nil {
		return "", err
	}
	var menu string
	err := poll(10*time.Second, 50*time.Millisecond, func() (bool, error) {
		b, _ := os.ReadFile(filepath.Join(d.dir, "menus.log"))
		menu = strings.TrimPrefix(string(b), string(before))
		return strings.Contains(menu, "---"), nil
	})
	return menu, err
}

// history is dunst's history (dunstctl history), saved as an artifact.
func (d *dunst) history(path string) []map[string]any {
	out, err := d.ctl("history")
	if err != nil {
		d.e.t.Logf("dunstctl history: %v", err)
		return nil
	}
	os.WriteFile(path, []byte(out), 0o644)
	var h struct {
		Data [][]map[string]any `json:"data"`
	}
	if json.Unmarshal([]byte(out), &h) != nil || len(h.Data) == 0 {
		return nil
	}
	return h.Data[0]
}

// ---- the notification recorder ----

// noteEvent is one notification call or signal seen on the bus.
type noteEvent struct {
	At       time.Time `json:"at"`
	What     string    `json:"what"` // notify, shown, closed, close
	ID       uint32    `json:"id,omitempty"`
	Replaces uint32    `json:"replaces,omitempty"`
	Key      string    `json:"key,omitempty"` // Herald's x-notification-id
	Summary  string    `json:"summary,omitempty"`
	Body     string    `json:"body,omitempty"`
	Urgency  int       `json:"urgency"` // -1: no hint
	Category string    `json:"category,omitempty"`
	Timeout  int32     `json:"timeout,omitempty"`
	Actions  []string  `json:"actions,omitempty"`
	Reason   uint32    `json:"reason,omitempty"`
}

// recorder is a D-Bus monitor (BecomeMonitor) of the notification
// traffic on the test's bus: every Notify and CloseNotification call,
// the ids the server returned and every NotificationClosed.
type recorder struct {
	conn *dbus.Conn
	mu   sync.Mutex
	evs  []noteEvent
	// calls: Notify calls waiting for their return, by sender and serial.
	calls map[string]noteEvent
}

func (e *env) startRecorder() *recorder {
	e.t.Helper()
	conn, err := dbus.Connect(e.busAddr)
	if err != nil {
		e.t.Fatal(err)
	}
	rules := []string{
		"type='method_call',interface='org.freedesktop.Notifications'",
		"type='method_return'",
		"type='signal',interface='org.freedesktop.Notifications'",
	}
	if err := conn.BusObject().Call("org.freedesktop.DBus.Monitoring.BecomeMonitor", 0, rules, uint32(0)).Err; err != nil {
		e.t.Fatalf("becoming a D-Bus monitor: %v", err)
	}
	r := &recorder{conn: conn, calls: map[string]noteEvent{}}
	ch := make(chan *dbus.Message, 1024)
	conn.Eavesdrop(ch)
	go func() {
		for m := range ch {
			r.take(m)
		}
	}()
	e.t.Cleanup(func() { conn.Close() })
	return r
}

func (r *recorder) take(m *dbus.Message) {
	now := time.Now()
	hdr := func(f dbus.HeaderField) string {
		v, ok := m.Headers[f]
		if !ok {
			return ""
		}
		return fmt.Sprint(v.Value())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch m.Type {
	case dbus.TypeMethodCall:
		if hdr(dbus.FieldInterface) != notifyIface {
			return
		}
		switch hdr(dbus.FieldMember) {
		case "Notify":
			if len(m.Body) < 8 {
				return
			}
			ev := noteEvent{At: now, What: "notify", Urgency: -1}
			ev.Replaces, _ = m.Body[1].(uint32)
			ev.Summary, _ = m.Body[3].(string)
			ev.Body, _ = m.Body[4].(string)
			ev.Actions, _ = m.Body[5].([]string)
			hints, _ := m.Body[6].(map[string]dbus.Variant)
			if v, ok := hints["urgency"]; ok {
				if b, ok := v.Value().(byte); ok {
					ev.Urgency = int(b)
				}
			}
			ev.Key, _ = hints["x-notification-id"].Value().(string)
			ev.Category, _ = hints["category"].Value().(string)
			ev.Timeout, _ = m.Body[7].(int32)
			r.evs = append(r.evs, ev)
			r.calls[hdr(dbus.FieldSender)+"/"+fmt.Sprint(m.Serial())] = ev
		case "CloseNotification":
			if len(m.Body) == 1 {
				id, _ := m.Body[0].(uint32)
				r.evs = append(r.evs, noteEvent{At: now, What: "close", ID: id, Urgency: -1})
			}
		}
	case dbus.TypeMethodReply:
		k := hdr(dbus.FieldDestination) + "/" + hdr(dbus.FieldReplySerial)
		call, ok := r.calls[k]
		if !ok || len(m.Body) != 1 {
			return
		}
		delete(r.calls, k)
		call.What, call.At = "shown", now
		call.ID, _ = m.Body[0].(uint32)
		r.evs = append(r.evs, call)
	case dbus.TypeSignal:
		if hdr(dbus.FieldMember) == "NotificationClosed" && len(m.Body) == 2 {
			id, _ := m.Body[0].(uint32)
			reason, _ := m.Body[1].(uint32)
			r.evs = append(r.evs, noteEvent{At: now, What: "closed", ID: id, Reason: reason, Urgency: -1})
		}
	}
}

// events is a copy of what was recorded.
func (r *recorder) events() []noteEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]noteEvent(nil), r.evs...)
}

// save writes the record as JSON lines.
func (r *recorder) save(path string) {
	var b strings.Builder
	for _, ev := range r.events() {
		j, _ := json.Marshal(ev)
		b.Write(j)
		b.WriteByte('\n')
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
}

// screenState replays the record: at every step, what is on screen by
// server id. It calls each(at, up) after every change.
func screenState(evs []noteEvent, each func(at time.Time, up map[uint32]noteEvent)) {
	up := map[uint32]noteEvent{}
	for _, ev := range evs {
		switch ev.What {
		case "shown":
			up[ev.ID] = ev
		case "closed", "close":
			delete(up, ev.ID)
		default:
			continue
		}
		each(ev.At, up)
	}
}

// infoGateway is the gateway of an informational notification (its
// slot's key "herald-info:GW"), or "" for any other.
func infoGateway(ev noteEvent) string {
	gw, _ := strings.CutPrefix(ev.Key, "herald-info:")
	if gw == ev.Key {
		return ""
	}
	return gw
}

// describeScreen lists what is up, for failure messages.
func describeScreen(up map[uint32]noteEvent) string {
	var lines []string
	for id, ev := range up {
		lines = append(lines, fmt.Sprintf("#%d %s u%d %s %q", id, ev.Key, ev.Urgency, ev.Category, ev.Summary))
	}
	sort.Strings(lines)
	return strings.Join(lines, "; ")
}

// stackTools are what TestDesktopMonitor needs beyond TestDesktop's.
var stackTools = []struct{ bin, pkg string }{
	{"dunst", "dunst"},
	{"dunstctl", "dunst"},
	{"xfce4-panel", "xfce4-panel"},
}

func missingStackTools() []string {
	var missing []string
	for _, tool := range stackTools {
		if _, err := exec.LookPath(tool.bin); err != nil {
			missing = append(missing, fmt.Sprintf("%s (Debian package %s)", tool.bin, tool.pkg))
		}
	}
	return missing
}
