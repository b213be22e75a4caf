package gateway

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestDeliveryIsDecidedFromWhatTheGatewayShows: every dialect is read
// from gateway.ready and method probes, never a version string: only the
// gateway that answers approval.pending / request.answer is taken for
// fan-out; the others (0.21.1 included, which looks like 0.20.6 from
// outside) for one client at a time.
func TestDeliveryIsDecidedFromWhatTheGatewayShows(t *testing.T) {
	t.Parallel()
	want := map[hermestest.Dialect]source.Delivery{
		hermestest.Legacy: source.DeliveryOneClient, hermestest.Replay: source.DeliveryOneClient, hermestest.FanOut: source.DeliveryOneClient,
		hermestest.Modern: source.DeliveryOneClient, hermestest.Requests: source.DeliveryFanOut,
	}
	for _, d := range hermestest.Dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d})
			defer srv.Close()
			h := start(t, srv, func(c *Config) { c.DiscoveryInterval = -1 })
			st := h.rec.waitState(t, source.StateConnected)
			f := st.Features
			if f.Delivery != want[d] || h.client.FanOut() != (want[d] == source.DeliveryFanOut) {
				t.Fatalf("delivery %q (%s), want %q", f.Delivery, f.DeliveryEvidence, want[d])
			}
			if f.DeliveryText == "" || strings.Contains(f.DeliveryText, "0.") {
				t.Fatalf("delivery text %q must name the behaviour, not a version", f.DeliveryText)
			}
			if f.ApprovalPending != (d == hermestest.Requests) || f.RequestAnswer != (d == hermestest.Requests) {
				t.Fatalf("probes: %+v", f)
			}
			if d == hermestest.Requests && (f.Protocol != 1 || !strings.Contains(f.Advertised, "event_replay")) {
				t.Fatalf("ready's capabilities not read: %+v", f)
			}
		})
	}
}

// TestRequestAnswerSaysExpired: on a gateway with request.answer Herald
// answers with it, and an answer that lost to another client's is
// wire.ErrRequestSettled, never a success.
func TestRequestAnswerSaysExpired(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Requests})
	defer srv.Close()
	h := start(t, srv, func(c *Config) { c.DiscoveryInterval = -1 })
	h.rec.waitState(t, source.StateConnected)
	ref, err := h.client.CreateSession(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	id1, done1, _ := srv.RequestApproval(ref.ID, hermestest.ApprovalSpec{Command: "rm -rf /a"})
	id2, _, _ := srv.RequestApproval(ref.ID, hermestest.ApprovalSpec{Command: "rm -rf /b"})
	h.rec.waitFor(t, "both requests", func(evs []wire.Event, _ []source.Status) bool {
		n := 0
		for _, ev := range evs {
			if ev.Kind == wire.ApprovalServerRequest {
				n++
			}
		}
		return n == 2
	})
	if err := h.client.RespondServerRequest(ctxT(t), id1, "deny"); err != nil {
		t.Fatal(err)
	}
	if c := <-done1; c != "deny" {
		t.Fatalf("agent got %q", c)
	}
	if n, _ := srv.ResolveElsewhere(ref.ID, id2, "once"); n != 1 {
		t.Fatal("the other client's answer did not land")
	}
	err = h.client.RespondServerRequest(ctxT(t), id2, "deny")
	if !errors.Is(err, wire.ErrRequestSettled) {
		t.Fatalf("late answer: %v, want ErrRequestSettled", err)
	}
	if !slices.Contains(srv.Methods(), "request.answer") {
		t.Fatal("request.answer not used")
	}
}

// TestFanOutNeverErrorsAServerRequestItDoesNotServe: on a fan-out
// gateway an error reply would settle the request for every client, so
// Herald leaves one it only shows (or does not serve) unanswered.
func TestFanOutNeverErrorsAServerRequestItDoesNotServe(t *testing.T) {
	t.Parallel()
	for _, d := range []hermestest.Dialect{hermestest.Modern, hermestest.Requests} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d})
			defer srv.Close()
			h := start(t, srv, func(c *Config) { c.DiscoveryInterval = -1 })
			h.rec.waitState(t, source.StateConnected)
			ref, _ := h.client.CreateSession(ctxT(t), nil)
			id, err := srv.SendServerRequest(ref.ID, "preview.open", nil)
			if err != nil {
				t.Fatal(err)
			}
			h.rec.waitKind(t, wire.ServerRequestUnknown, 1)
			// A ping round trip orders after the request's handling.
			if err := h.client.Call(ctxT(t), "session.active_list", map[string]any{}, nil); err != nil {
				t.Fatal(err)
			}
			_, answered := srv.Response(id)
			if answered != (d == hermestest.Modern) {
				t.Fatalf("answered %v: single-client gateways get -32601, fan-out ones nothing", answered)
			}
		})
	}
}

// TestSilentDetachIsReattachedAndReplayed: a fan-out gateway that drops
// Herald as a slow client without a word (0.21.1) is noticed at the next
// listing and re-attached with replay; one that closes 1011 is redialed.
func TestSilentDetachIsReattachedAndReplayed(t *testing.T) {
	t.Parallel()
	for _, silent := range []bool{false, true} {
		t.Run(map[bool]string{false: "1011", true: "silent"}[silent], func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Requests, SilentOverflow: silent})
			defer srv.Close()
			h := start(t, srv, func(c *Config) { c.DiscoveryInterval = -1 })
			h.rec.waitState(t, source.StateConnected)
			ref, err := h.client.CreateSession(ctxT(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.client.Call(ctxT(t), "prompt.submit", map[string]any{"session_id": ref.ID, "text": "hello"}, nil); err != nil {
				t.Fatal(err)
			}
			h.rec.waitKind(t, "message.complete", 1)
			if _, err := h.client.ListSessions(ctxT(t)); err != nil { // the row Herald saw
				t.Fatal(err)
			}
			mark := h.rec.mark()
			srv.Overflow()
			if !silent {
				h.rec.waitReconnected(t, mark)
			}
			// Missed while detached, then listed: the row moved on.
			if err := srv.Prompt(ref.ID, "missed"); err != nil {
				t.Fatal(err)
			}
			waitServer(t, srv, "the missed turn", func() bool { return !srv.Sessions()[0].Running })
			if silent {
				if _, err := h.client.ListSessions(ctxT(t)); err != nil {
					t.Fatal(err)
				}
			}
			h.rec.waitKind(t, "message.complete", 2)
			if h.client.Elsewhere(ref.ID) {
				t.Fatal("a fan-out gateway's detach was taken for another client's steal")
			}
		})
	}
}
