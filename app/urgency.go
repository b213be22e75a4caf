package app

import (
	"sync"

	native "github.com/herald-desktop/herald/desktop"
)

// Wails' notification API (v2.15) has no urgency, so a notification
// without buttons whose urgency is not normal (Hermes' error and info
// notices) is sent straight to the freedesktop notification server with
// the "urgency" hint, through the one D-Bus notification client
// (desktop.DBusNotifier). Where there is no such server (macOS, Windows,
// no session bus) send reports false and Wails shows it as usual.

// notifyBus is the desktop's notification client.
type notifyBus interface {
	Notify(native.Notification) error
	Withdraw(id string) error
}

// maxUrgentIDs bounds the ids remembered for withdrawal.
const maxUrgentIDs = 64

// urgentSender remembers which notifications it showed.
type urgentSender struct {
	mu     sync.Mutex
	bus    notifyBus
	dial   func() (notifyBus, error) // nil: the session bus
	failed bool
	shown  map[string]bool
	order  []string
}

// urgencyName is the desktop client's name for u ("" is normal).
func urgencyName(u Urgency) string {
	switch u {
	case UrgencyLow:
		return "low"
	case UrgencyCritical:
		return "critical"
	}
	return ""
}

func (u *urgentSender) connect() notifyBus {
	if u.bus != nil || u.failed {
		return u.bus
	}
	dial := u.dial
	if dial == nil {
		dial = func() (notifyBus, error) { return native.NewDBusNotifier() }
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
	if err := b.Notify(native.Notification{ID: n.ID, Title: n.Title, Body: n.Body, Urgency: urgencyName(n.Urgency), Timeout: n.Expire}); err != nil {
		return false
	}
	if u.shown == nil {
		u.shown = map[string]bool{}
	}
	if !u.shown[n.ID] {
		u.order = append(u.order, n.ID)
	}
	u.shown[n.ID] = true
	for len(u.order) > maxUrgentIDs {
		delete(u.shown, u.order[0])
		u.order = u.order[1:]
	}
	return true
}

// withdraw closes a notification send showed; false if it showed none.
func (u *urgentSender) withdraw(id string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.shown[id] || u.bus == nil {
		return false
	}
	delete(u.shown, id)
	for i, k := range u.order {
		if k == id {
			u.order = append(u.order[:i], u.order[i+1:]...)
			break
		}
	}
	u.bus.Withdraw(id)
	return true
}
