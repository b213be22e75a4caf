package service

import (
	"slices"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestFanOutFollowsEverySessionWithoutAsking: on a gateway that sends
// each session's events to every attached client, Herald follows every
// live session whatever the policy, as one more client: no offer, no
// warning, and the other client keeps the session.
func TestFanOutFollowsEverySessionWithoutAsking(t *testing.T) {
	t.Parallel()
	r := newLiveRig(t, hermestest.Requests, FollowAsk)
	r.connect()
	live, _ := r.foreignSession()
	r.step()
	r.step() // the listing after the follow shows it
	if row, _ := r.row(live); !row.Followed || row.Offered {
		t.Fatalf("row %+v", row)
	}
	r.wait("the followed notice", func() bool { return len(r.noticesOf(NoticeFollowed)) == 1 })
	if n := r.noticesOf(NoticeOffer); len(n) != 0 {
		t.Fatalf("offered on a fan-out gateway: %+v", n)
	}
	for _, n := range append(r.noticesOf(NoticeFollowed), r.noticesOf(NoticeFound)...) {
		if strings.Contains(n.Text, "stops receiving") || strings.Contains(n.Text, "takes them away") || strings.Contains(n.Text, "0.1") {
			t.Fatalf("notice warns of a steal or names a version: %q", n.Text)
		}
	}
	if r.srv.Receivers(live) != 2 || r.peer.Consumer(live) != "peer" {
		t.Fatal("following took the session from the other client")
	}
	// Its approval reaches both clients; the other client answers first.
	id, done, _ := r.srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf /srv/cache"})
	r.wait("the approval in Herald", func() bool { p, ok := r.pendingFor(live); return ok && p.Command == "rm -rf /srv/cache" })
	if !slices.Contains(r.peer.Events(live), "approval") {
		t.Fatal("the other client did not get the approval")
	}
	if _, err := r.peer.Call("request.answer", map[string]any{"id": id, "result": map[string]any{"choice": "deny"}}); err != nil {
		t.Fatal(err)
	}
	<-done
	r.wait("withdrawn in Herald", func() bool { _, ok := r.pendingFor(live); return !ok })
	r.srv.Release(live)
}

// TestAskOffersWhenASessionAppearsAndWhenItStartsATurn: on a gateway that
// sends each session to one client, "ask" offers a session at the first
// listing that shows it, and again when it starts a turn.
func TestAskOffersWhenASessionAppearsAndWhenItStartsATurn(t *testing.T) {
	t.Parallel()
	for _, d := range []hermestest.Dialect{hermestest.Legacy, hermestest.Replay} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			r := newLiveRig(t, d, FollowAsk)
			r.connect()
			live, _, err := r.peer.Create()
			if err != nil {
				t.Fatal(err)
			}
			if err := r.peer.Submit(live, "hello"); err != nil { // a stored row, then idle
				t.Fatal(err)
			}
			r.wait("idle", func() bool { return slices.Contains(r.peer.Events(live), "message.complete") })
			r.step()
			r.wait("the first offer", func() bool { return len(r.noticesOf(NoticeOffer)) == 1 })
			r.step()
			if n := len(r.noticesOf(NoticeOffer)); n != 1 {
				t.Fatalf("%d offers for an unchanged idle session", n)
			}
			if err := r.peer.Submit(live, "hold"); err != nil {
				t.Fatal(err)
			}
			r.wait("the turn", func() bool { return slices.Contains(r.peer.Events(live), "message.delta") })
			r.step()
			r.wait("the second offer", func() bool { return len(r.noticesOf(NoticeOffer)) == 2 })
			o := r.noticesOf(NoticeOffer)[1]
			if !strings.Contains(o.Text, "one client at a time") || strings.Contains(o.Text, "0.1") {
				t.Fatalf("offer text %q", o.Text)
			}
			if r.peer.Consumer(live) != "peer" {
				t.Fatal("ask took the session")
			}
			r.srv.Release(live)
		})
	}
}
