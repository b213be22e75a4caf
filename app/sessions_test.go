package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/testwait"
)

// TestSessionsPanelMethods: the window's Sessions panel follows a session
// another client drives (its events move to Herald), saves the gateway's
// follow policy, and sends the live list as an array.
func TestSessionsPanelMethods(t *testing.T) {
	a, _, srv, _ := desktop(t)
	peer := srv.NewPeer()
	live, stored, err := peer.Create()
	if err != nil {
		t.Fatal(err)
	}
	if err := peer.Submit(live, "hold"); err != nil {
		t.Fatal(err)
	}
	if err := a.FollowSession("lab", stored); err != nil {
		t.Fatal(err)
	}
	if peer.Consumer(live) != "other" {
		t.Fatal("following from the window did not move the session's events to Herald")
	}
	if err := a.TakeBack("lab", "no-such-session"); err == nil || !strings.Contains(err.Error(), "does not follow") {
		t.Fatalf("take back of an unknown session: %v", err)
	}
	if err := a.SetFollowPolicy("lab", "sometimes"); err == nil {
		t.Fatal("an unknown policy was accepted")
	}
	if err := a.SetFollowPolicy("nope", "auto"); err == nil {
		t.Fatal("a policy for an unknown gateway was accepted")
	}
	if err := a.SetFollowPolicy("lab", "auto"); err != nil {
		t.Fatal(err)
	}
	st, err := a.d.Settings.Load()
	if err != nil || len(st.Gateways) != 1 || st.Gateways[0].Follow != "auto" {
		t.Fatalf("saved settings %+v (%v)", st.Gateways, err)
	}
	// Editing the gateway keeps the policy (the form does not show it).
	form, err := a.GatewayForm("lab")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.EditGateway("lab", form.AddGatewayRequest); err != nil {
		t.Fatal(err)
	}
	if st, _ := a.d.Settings.Load(); st.Gateways[0].Follow != "auto" || a.svc.FollowPolicyOf("lab") != "auto" {
		t.Fatalf("after an edit: saved %q, running %q", st.Gateways[0].Follow, a.svc.FollowPolicyOf("lab"))
	}
	testwait.Until(t, guard, "the gateway's live list", srv.Changed, func() bool {
		s := a.Snapshot()
		return len(s.Live) == 1 && s.Live[0].Gateway == "lab" && s.Live[0].Policy == "auto"
	})
	b, _ := json.Marshal(a.Snapshot())
	if !strings.Contains(string(b), `"live":[`) {
		t.Fatalf("snapshot sends live as %s", b)
	}
	srv.Release(live)
}
