package desktop

import (
	"testing"

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
