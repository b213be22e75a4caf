package desktop

import (
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

func TestWakeReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sig  *dbus.Signal
		want WakeReason
		ok   bool
	}{
		{"resumed", &dbus.Signal{Name: login1Iface + ".PrepareForSleep", Body: []any{false}}, Resumed, true},
		{"going to sleep", &dbus.Signal{Name: login1Iface + ".PrepareForSleep", Body: []any{true}}, "", false},
		{"network up", &dbus.Signal{Name: nmIface + ".StateChanged", Body: []any{uint32(70)}}, NetworkChanged, true},
		{"network connecting", &dbus.Signal{Name: nmIface + ".StateChanged", Body: []any{uint32(40)}}, "", false},
		{"wrong type", &dbus.Signal{Name: nmIface + ".StateChanged", Body: []any{"70"}}, "", false},
		{"no body", &dbus.Signal{Name: login1Iface + ".PrepareForSleep"}, "", false},
		{"other signal", &dbus.Signal{Name: "org.example.Foo", Body: []any{false}}, "", false},
		{"nil", nil, "", false},
	}
	for _, tc := range tests {
		got, ok := wakeReason(tc.sig)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestNotifierSignals: clicks and buttons reach the handler under
// Herald's own id; other apps' notifications and closed ones do not.
func TestNotifierSignals(t *testing.T) {
	t.Parallel()
	n := &DBusNotifier{byKey: map[string]uint32{"k1": 7}, byID: map[uint32]string{7: "k1"}, spawn: func(f func()) { f() }}
	got := make(chan string, 4)
	n.OnAction(func(id, action string) { got <- id + "/" + action })
	sig := func(member string, body ...any) *dbus.Signal {
		return &dbus.Signal{Path: notifyPath, Name: notifyIface + "." + member, Body: body}
	}
	n.handle(sig("ActionInvoked", uint32(99), "once")) // not Herald's
	n.handle(sig("ActionInvoked", uint32(7), "once"))
	if g := <-got; g != "k1/once" {
		t.Fatalf("action reached the app as %q", g)
	}
	n.handle(sig("NotificationClosed", uint32(7), uint32(2)))
	n.handle(sig("ActionInvoked", uint32(7), "deny")) // after it closed
	n.handle(&dbus.Signal{Path: "/elsewhere", Name: notifyIface + ".ActionInvoked", Body: []any{uint32(7), "deny"}})
	select {
	case g := <-got:
		t.Fatalf("a stale action reached the app: %q", g)
	default:
	}
	if len(n.byKey) != 0 || len(n.byID) != 0 {
		t.Fatalf("closed notification still filed: %v %v", n.byKey, n.byID)
	}
}

func TestUrgencyHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    Notification
		want byte
		ok   bool
	}{
		{Notification{Urgent: true}, 2, true},
		{Notification{Urgency: "critical"}, 2, true},
		{Notification{Urgency: "low"}, 0, true},
		{Notification{}, 0, false},
		{Notification{Urgency: "bogus"}, 0, false},
	} {
		if got, ok := urgencyHint(tc.n); got != tc.want || ok != tc.ok {
			t.Errorf("urgencyHint(%+v) = %d, %v", tc.n, got, ok)
		}
	}
}

func TestTrayHostChange(t *testing.T) {
	t.Parallel()
	sig := func(name string, body ...any) *dbus.Signal { return &dbus.Signal{Name: name, Body: body} }
	for _, tc := range []struct {
		s             *dbus.Signal
		present, isOK bool
	}{
		{sig("org.freedesktop.DBus.NameOwnerChanged", trayWatcher, "", ":1.42"), true, true},
		{sig("org.freedesktop.DBus.NameOwnerChanged", trayWatcher, ":1.42", ""), false, true},
		{sig("org.freedesktop.DBus.NameOwnerChanged", "org.example.Other", "", ":1.7"), false, false},
		{sig("org.freedesktop.DBus.NameAcquired", trayWatcher), false, false},
		{sig("org.freedesktop.DBus.NameOwnerChanged", trayWatcher, "", 42), false, false},
	} {
		if p, ok := trayHostChange(tc.s); p != tc.present || ok != tc.isOK {
			t.Errorf("%v %v: (%v, %v), want (%v, %v)", tc.s.Name, tc.s.Body, p, ok, tc.present, tc.isOK)
		}
	}
}

// TestNotifyArgs: what the server is asked: a request that waits never
// expires and is critical (or sticky at its urgency), an informational
// one expires when Herald says; the category tells them apart; on a
// server without buttons the body says how to answer.
func TestNotifyArgs(t *testing.T) {
	t.Parallel()
	approval := Notification{ID: "k", Title: "Approve?", Body: "rm -rf <b>", Actions: [][2]string{{"once", "Approve once"}, {"deny", "Deny"}}, Urgent: true, Waits: true}
	body, actions, hints, timeout := notifyArgs(approval, true, true)
	if timeout != 0 || hints["urgency"].Value() != byte(2) || hints["category"].Value() != "x-herald.request" || body != "rm -rf &lt;b&gt;" || len(actions) != 6 {
		t.Fatalf("approval: %q %v %v %d", body, actions, hints, timeout)
	}
	if body, _, _, _ := notifyArgs(approval, false, false); body != "rm -rf <b>\n"+noActionsNote {
		t.Fatalf("no buttons: body %q", body)
	}
	denyOnly := Notification{ID: "k2", Actions: [][2]string{{"deny", "Deny"}}, Sticky: true, Waits: true}
	if _, _, hints, timeout := notifyArgs(denyOnly, true, true); timeout != 0 || hints["urgency"].Value() != nil && hints["urgency"].Value() != byte(1) || hints["category"].Value() != "x-herald.request" {
		t.Fatalf("deny only: %v %d", hints, timeout)
	}
	info := Notification{ID: "herald-info:lab", Title: "3 sessions", Actions: [][2]string{{"follow", "Follow"}}, Timeout: 10 * time.Second}
	if body, _, hints, timeout := notifyArgs(info, true, true); timeout != 10000 || hints["category"].Value() != "x-herald.info" || strings.Contains(body, noActionsNote) {
		t.Fatalf("info: %q %v %d", body, hints, timeout)
	}
	if _, _, _, timeout := notifyArgs(Notification{ID: "x"}, true, true); timeout != -1 {
		t.Fatalf("default timeout %d", timeout)
	}
}

// TestDoNotDisturbChange reads dunst's and KDE's property changes.
func TestDoNotDisturbChange(t *testing.T) {
	t.Parallel()
	sig := func(iface string, props map[string]dbus.Variant) *dbus.Signal {
		return &dbus.Signal{Path: notifyPath, Name: propsIface + ".PropertiesChanged", Body: []any{iface, props, []string{}}}
	}
	for _, tc := range []struct {
		name   string
		s      *dbus.Signal
		on, ok bool
	}{
		{"dunst paused", sig(dunstIface, map[string]dbus.Variant{"paused": dbus.MakeVariant(true)}), true, true},
		{"dunst resumed", sig(dunstIface, map[string]dbus.Variant{"paused": dbus.MakeVariant(false)}), false, true},
		{"kde inhibited", sig(notifyIface, map[string]dbus.Variant{"Inhibited": dbus.MakeVariant(true)}), true, true},
		{"another property", sig(dunstIface, map[string]dbus.Variant{"displayedLength": dbus.MakeVariant(uint32(2))}), false, false},
		{"another interface", sig("org.example", map[string]dbus.Variant{"paused": dbus.MakeVariant(true)}), false, false},
		{"wrong type", sig(dunstIface, map[string]dbus.Variant{"paused": dbus.MakeVariant("yes")}), false, false},
	} {
		if on, ok := dndChange(tc.s); on != tc.on || ok != tc.ok {
			t.Errorf("%s: %v %v, want %v %v", tc.name, on, ok, tc.on, tc.ok)
		}
	}
	n := &DBusNotifier{byKey: map[string]uint32{}, byID: map[uint32]string{}}
	got := make(chan bool, 1)
	n.onDND = func(on bool) { got <- on }
	n.handle(sig(dunstIface, map[string]dbus.Variant{"paused": dbus.MakeVariant(true)}))
	if !<-got {
		t.Fatal("the handler did not hear the pause")
	}
}
