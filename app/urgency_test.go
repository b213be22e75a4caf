package app

import (
	"errors"
	"fmt"
	"testing"

	native "github.com/herald-desktop/herald/desktop"
)

// fakeBus records what reaches the desktop's notification client.
type fakeBus struct {
	calls   []native.Notification
	closed  []string
	failing bool
}

func (f *fakeBus) Notify(n native.Notification) error {
	if f.failing {
		return errors.New("server gone")
	}
	f.calls = append(f.calls, n)
	return nil
}

func (f *fakeBus) Withdraw(id string) error { f.closed = append(f.closed, id); return nil }

func TestUrgentSenderSetsTheUrgencyHint(t *testing.T) {
	t.Parallel()
	bus := &fakeBus{}
	u := &urgentSender{dial: func() (notifyBus, error) { return bus, nil }}
	for _, tc := range []struct {
		u    Urgency
		want string
	}{{UrgencyLow, "low"}, {UrgencyNormal, ""}, {UrgencyCritical, "critical"}} {
		if !u.send(Notification{ID: fmt.Sprint(tc.u), Title: "t", Body: "<b>x</b> & y", Urgency: tc.u}) {
			t.Fatal("not sent")
		}
		c := bus.calls[len(bus.calls)-1]
		if c.Urgency != tc.want || c.Body != "<b>x</b> & y" || c.Urgent {
			t.Errorf("urgency %v: sent %+v", tc.u, c)
		}
	}
	// The same Herald id is sent again (the client replaces it in
	// place); withdraw closes it by that id.
	u.send(Notification{ID: "a", Urgency: UrgencyCritical})
	u.send(Notification{ID: "a", Urgency: UrgencyCritical})
	if last := bus.calls[len(bus.calls)-1]; last.ID != "a" {
		t.Fatalf("sent %+v", last)
	}
	if !u.withdraw("a") || len(bus.closed) != 1 || bus.closed[0] != "a" {
		t.Fatalf("withdraw: closed %v", bus.closed)
	}
	if u.withdraw("a") || u.withdraw("never-sent") {
		t.Fatal("withdrew what it did not show")
	}
	// Remembered ids are bounded.
	for i := range 3 * maxUrgentIDs {
		u.send(Notification{ID: fmt.Sprint("n", i), Urgency: UrgencyLow})
	}
	if len(u.shown) > maxUrgentIDs || len(u.order) != len(u.shown) {
		t.Fatalf("%d ids remembered", len(u.shown))
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
