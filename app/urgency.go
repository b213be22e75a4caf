package app

import (
	"sync"

	"github.com/godbus/dbus/v5"
	"github.com/herald-desktop/herald/approval/surface"
)

// Wails' notification API (v2.15) has no urgency, so a notification
// without buttons whose urgency is not normal (Hermes' error and info
// notices) is sent straight to the freedesktop notification server with
// the "urgency" hint. Where there is no such server (macOS, Windows, no
// session bus) send reports false and Wails shows it as usual.

// notifyBus is the freedesktop notification service
// (org.freedesktop.Notifications).
type notifyBus interface {
	Notify(replaces uint32, title, body string, hints map[string]dbus.Variant) (uint32, error)
	Close(id uint32) error
}

// maxUrgentIDs bounds the ids remembered for withdrawal.
const maxUrgentIDs = 64

// urgentSender remembers which Herald notification is which server id.
type urgentSender struct {
	mu     sync.Mutex
	bus    notifyBus
	dial   func() (notifyBus, error) // nil: the session bus
	failed bool
	ids    map[string]uint32
	order  []string
}

// freedesktopUrgency is the spec's byte: 0 low, 1 normal, 2 critical.
func freedesktopUrgency(u Urgency) byte {
	switch u {
	case UrgencyLow:
		return 0
	case UrgencyCritical:
		return 2
	}
	return 1
}

func (u *urgentSender) connect() notifyBus {
	if u.bus != nil || u.failed {
		return u.bus
	}
	dial := u.dial
	if dial == nil {
		dial = dialSessionNotify
	}
	b, err := dial()
	if err != nil {
		u.failed = true // no server: Wails shows it, without urgency
		return nil
	}
	u.bus = b
	return b
}

// send shows n with its urgency; false means "not sent, use Wails".
func (u *urgentSender) send(n Notification) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	b := u.connect()
	if b == nil {
		return false
	}
	if u.ids == nil {
		u.ids = map[string]uint32{}
	}
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(freedesktopUrgency(n.Urgency))}
	id, err := b.Notify(u.ids[n.ID], surface.Line(n.Title), surface.Pango(n.Body), hints)
	if err != nil {
		return false
	}
	if _, known := u.ids[n.ID]; !known {
		u.order = append(u.order, n.ID)
	}
	u.ids[n.ID] = id
	for len(u.order) > maxUrgentIDs {
		delete(u.ids, u.order[0])
		u.order = u.order[1:]
	}
	return true
}

// withdraw closes a notification send showed; false if it showed none.
func (u *urgentSender) withdraw(id string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	sid, ok := u.ids[id]
	if !ok || u.bus == nil {
		return false
	}
	delete(u.ids, id)
	for i, k := range u.order {
		if k == id {
			u.order = append(u.order[:i], u.order[i+1:]...)
			break
		}
	}
	u.bus.Close(sid)
	return true
}

// sessionNotify is the notification service on the session bus.
type sessionNotify struct {
	conn *dbus.Conn
	obj  dbus.BusObject
}

func dialSessionNotify() (notifyBus, error) {
	conn, err := dbus.SessionBusPrivate()
	if err != nil {
		return nil, err
	}
	if err := conn.Auth(nil); err != nil {
		conn.Close()
		return nil, err
	}
	if err := conn.Hello(); err != nil {
		conn.Close()
		return nil, err
	}
	return &sessionNotify{conn: conn, obj: conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")}, nil
}

func (s *sessionNotify) Notify(replaces uint32, title, body string, hints map[string]dbus.Variant) (uint32, error) {
	var id uint32
	err := s.obj.Call("org.freedesktop.Notifications.Notify", 0, "Herald", replaces, "", title, body, []string{}, hints, int32(-1)).Store(&id)
	return id, err
}

func (s *sessionNotify) Close(id uint32) error {
	return s.obj.Call("org.freedesktop.Notifications.CloseNotification", 0, id).Err
}
