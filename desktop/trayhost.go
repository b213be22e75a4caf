package desktop

import (
	"context"
	"fmt"

	"github.com/godbus/dbus/v5"
)

// trayWatcher is the D-Bus name a tray host (StatusNotifierWatcher) owns:
// KDE, XFCE, Cinnamon and GNOME with the AppIndicator extension have one;
// stock GNOME does not, and a tray icon then shows nowhere.
const trayWatcher = "org.kde.StatusNotifierWatcher"

// WatchTrayHost calls fn with whether a tray host is on the session bus,
// at once and again whenever one appears or goes, until ctx ends. Without
// a session bus it returns an error (and there is no tray either).
func WatchTrayHost(ctx context.Context, fn func(present bool)) error {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return fmt.Errorf("no session bus (%v): Herald cannot show a tray icon", err)
	}
	return watchTrayHost(ctx, conn, fn)
}

func watchTrayHost(ctx context.Context, conn *dbus.Conn, fn func(bool)) error {
	if err := conn.AddMatchSignal(
		dbus.WithMatchObjectPath("/org/freedesktop/DBus"),
		dbus.WithMatchInterface("org.freedesktop.DBus"),
		dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, trayWatcher),
	); err != nil {
		conn.Close()
		return fmt.Errorf("cannot follow the tray host: %v", err)
	}
	ch := make(chan *dbus.Signal, 8)
	conn.Signal(ch)
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, trayWatcher).Store(&has); err != nil {
		conn.RemoveSignal(ch)
		conn.Close()
		return fmt.Errorf("cannot ask the session bus for a tray host: %v", err)
	}
	fn(has)
	go forwardSignals(ctx, conn, ch, func(s *dbus.Signal) {
		if present, ok := trayHostChange(s); ok {
			fn(present)
		}
	})
	return nil
}

// trayHostChange reads a NameOwnerChanged signal for the watcher's name:
// a new owner means a tray host appeared, none that it went.
func trayHostChange(s *dbus.Signal) (present, ok bool) {
	if s.Name != "org.freedesktop.DBus.NameOwnerChanged" || len(s.Body) != 3 {
		return false, false
	}
	name, _ := s.Body[0].(string)
	owner, isStr := s.Body[2].(string)
	if name != trayWatcher || !isStr {
		return false, false
	}
	return owner != "", true
}
