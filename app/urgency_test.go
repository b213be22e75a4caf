package app

import (
	"errors"
	"fmt"
	"testing"

	"github.com/godbus/dbus/v5"
	"github.com/herald-desktop/herald/approval/surface"
)

// fakeBus records what reaches the notification server.
type fakeBus struct {
	next    uint32
	calls   []fakeCall
	closed  []uint32
	failing bool
}

type fakeCall struct {
	replaces    uint32
	title, body string
	urgency     byte
}

func (f *fakeBus) Notify(replaces uint32, title, body string, hints map[string]dbus.Variant) (uint32, error) {
	if f.failing {
		return 0, errors.New("server gone")
	}
	u, _ := hints["urgency"].Value().(byte)
	f.calls = append(f.calls, fakeCall{replaces, title, body, u})
	if replaces != 0 {
		return replaces, nil
	}
	f.next++
	return f.next, nil
}

func (f *fakeBus) Close(id uint32) error { f.closed = append(f.closed, id); return nil }

func TestUrgentSenderSetsTheUrgencyHint(t *testing.T) {
	t.Parallel()
	bus := &fakeBus{}
	u := &urgentSender{dial: func() (notifyBus, error) { return bus, nil }}
	for _, tc := range []struct {
		u    Urgency
		want byte
	}{{UrgencyLow, 0}, {UrgencyNormal, 1}, {UrgencyCritical, 2}} {
		if !u.send(Notification{ID: fmt.Sprint(tc.u), Title: "t", Body: "<b>x</b> & y", Urgency: tc.u}) {
			t.Fatal("not sent")
		}
		c := bus.calls[len(bus.calls)-1]
		if c.urgency != tc.want || c.body != surface.Pango("<b>x</b> & y") {
			t.Errorf("urgency %v: sent %+v", tc.u, c)
		}
	}
	// The same Herald id replaces in place; withdraw closes the server's id.
	u.send(Notification{ID: "a", Urgency: UrgencyCritical})
	u.send(Notification{ID: "a", Urgency: UrgencyCritical})
	last := bus.calls[len(bus.calls)-1]
	if last.replaces == 0 {
		t.Fatalf("second send did not replace: %+v", bus.calls)
	}
	if !u.withdraw("a") || len(bus.closed) != 1 || bus.closed[0] != last.replaces {
		t.Fatalf("withdraw: closed %v", bus.closed)
	}
	if u.withdraw("a") || u.withdraw("never-sent") {
		t.Fatal("withdrew what it did not show")
	}
	// Remembered ids are bounded.
	for i := range 3 * maxUrgentIDs {
		u.send(Notification{ID: fmt.Sprint("n", i), Urgency: UrgencyLow})
	}
	if len(u.ids) > maxUrgentIDs || len(u.order) != len(u.ids) {
		t.Fatalf("%d ids remembered", len(u.ids))
	}
	// A failing server hands the notification back to Wails.
	bus.failing = true
	if u.send(Notification{ID: "b", Urgency: UrgencyLow}) {
		t.Fatal("a failed send reported success")
	}
}

func TestUrgentSenderWithoutAServer(t *testing.T) {
	t.Parallel()
	dials := 0
	u := &urgentSender{dial: func() (notifyBus, error) { dials++; return nil, errors.New("no session bus") }}
	if u.send(Notification{ID: "a", Urgency: UrgencyCritical}) || u.send(Notification{ID: "b", Urgency: UrgencyCritical}) || dials != 1 {
		t.Fatalf("sent without a server, or dialled %d times", dials)
	}
	if u.withdraw("a") {
		t.Fatal("withdrew without a server")
	}
}
