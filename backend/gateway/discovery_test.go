package gateway

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// discoveries records what OnDiscovery reports.
type discoveries struct {
	mu   sync.Mutex
	list []source.Discovery
	rec  *recorder
}

func (d *discoveries) on(x source.Discovery) {
	d.mu.Lock()
	d.list = append(d.list, x)
	d.mu.Unlock()
	d.rec.poke()
}

func (d *discoveries) n() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.list)
}

func (d *discoveries) last() source.Discovery {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.list[len(d.list)-1]
}

// startDisc runs a client that records its discoveries.
func startDisc(t *testing.T, srv *hermestest.Server) (*harness, *discoveries) {
	t.Helper()
	d := &discoveries{}
	h := start(t, srv, func(c *Config) { c.OnDiscovery = d.on; c.DiscoveryInterval = fastDiscovery })
	d.rec = h.rec
	h.rec.waitState(t, source.StateConnected)
	h.rec.waitFor(t, "the first listing", func([]wire.Event, []source.Status) bool { return d.n() > 0 })
	return h, d
}

// fastDiscovery is the listing interval in these tests (the service's).
const fastDiscovery = 5 * time.Second

// tick advances the fake clock to the next listing and waits for it.
func (h *harness) tick(t *testing.T, d *discoveries) source.Discovery {
	t.Helper()
	n := d.n()
	h.clk.BlockUntil(1)
	h.clk.Advance(fastDiscovery)
	h.rec.waitFor(t, "a session listing", func([]wire.Event, []source.Status) bool { return d.n() > n })
	return d.last()
}

func rowOf(d source.Discovery, id string) (source.LiveSession, bool) {
	for _, l := range d.Sessions {
		if l.ID == id {
			return l, true
		}
	}
	return source.LiveSession{}, false
}

// TestDiscoveryListsAtConnectAndOnTheClock: the live sessions are listed
// at once after connecting and again every DiscoveryInterval, so a
// session another client starts later is found; titles, status and
// preview come through.
func TestDiscoveryListsAtConnectAndOnTheClock(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: dialect})
			defer srv.Close()
			peer := srv.NewPeer()
			early, _, _ := peer.Create()
			h, d := startDisc(t, srv)
			h.rec.waitFor(t, "the first listing", func([]wire.Event, []source.Status) bool { return d.n() > 0 })
			if _, ok := rowOf(d.last(), early); !ok {
				t.Fatalf("first listing %+v lacks %s", d.last(), early)
			}
			later, _, _ := peer.Create()
			srv.SetTitle(later, "Fix the build")
			if err := peer.Submit(later, "hold"); err != nil {
				t.Fatal(err)
			}
			waitServer(t, srv, "holding", func() bool { return slices.Contains(peer.Events(later), "message.delta") })
			got := h.tick(t, d)
			row, ok := rowOf(got, later)
			if !ok || row.Title != "Fix the build" || row.Status != source.LiveWorking || row.Preview != "holding" || row.Followed || !row.Running() {
				t.Fatalf("later session row %+v (found %v)", row, ok)
			}
			if n := count(srv.Methods(), "session.active_list"); n != 2 {
				t.Fatalf("%d listings, want 2 (connect + one tick)", n)
			}
			srv.Release(later)
		})
	}
}

// TestElsewhereWhenAnotherClientTakesTheSession: Herald follows a
// session; another client submits to it, so its events go there only. The
// next listing shows the session moved on without an event reaching
// Herald: it is reported elsewhere, a reconnect does not silently take it
// back, and TakeBack does.
func TestElsewhereWhenAnotherClientTakesTheSession(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: dialect})
			defer srv.Close()
			h, d := startDisc(t, srv)
			ref := h.session(t)
			peer := srv.NewPeer()
			h.tick(t, d) // baseline row for the followed session

			// Herald's own turns never read as lost.
			if err := srv.Prompt(ref.ID, "burst 3"); err != nil {
				t.Fatal(err)
			}
			h.rec.waitKind(t, wire.MessageComplete, 2)
			if row, _ := rowOf(h.tick(t, d), ref.ID); row.Elsewhere || !row.Followed {
				t.Fatalf("own turn read as elsewhere: %+v", row)
			}

			if err := peer.Submit(ref.ID, "burst 2"); err != nil {
				t.Fatal(err)
			}
			waitServer(t, srv, "peer turn done", func() bool { return slices.Contains(peer.Events(ref.ID), "message.complete") })
			row, _ := rowOf(h.tick(t, d), ref.ID)
			if !row.Elsewhere || !h.client.Elsewhere(ref.ID) {
				t.Fatalf("row %+v: another client took the session and Herald did not notice", row)
			}
			if ev := h.rec.waitKind(t, source.EventElsewhere, 1); len(ev) != 1 || ev[0].Session != ref.ID || ev[0].StoredSession != ref.StoredID {
				t.Fatalf("elsewhere events %+v", ev)
			}

			// A reconnect does not take it back behind the user's back.
			resumes := count(srv.Methods(), "session.resume")
			m := h.rec.mark()
			dials := srv.Dials()
			h.client.ReconnectNow()
			h.rec.waitReconnected(t, m)
			if srv.Dials() != dials+1 {
				t.Fatalf("ReconnectNow while connected: %d dials, want %d", srv.Dials(), dials+1)
			}
			if count(srv.Methods(), "session.resume") != resumes || peer.Consumer(ref.ID) != "peer" {
				t.Fatal("a reconnect took the session back from the other client")
			}

			if _, err := h.client.TakeBack(ctxT(t), ref.ID); err != nil {
				t.Fatal(err)
			}
			if peer.Consumer(ref.ID) != "other" || h.client.Elsewhere(ref.ID) {
				t.Fatal("take back did not move the session's events to Herald")
			}
			n := len(kinds(h, wire.MessageComplete))
			srv.Prompt(ref.ID, "after take back")
			h.rec.waitKind(t, wire.MessageComplete, n+1)
		})
	}
}

// TestReconnectNowRedialsWhenConnected: the user's Reconnect really
// redials a live connection and re-attaches the followed sessions.
func TestReconnectNowRedialsWhenConnected(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	defer srv.Close()
	h := start(t, srv, nil)
	h.rec.waitState(t, source.StateConnected)
	ref := h.session(t)
	for i := 1; i <= 3; i++ {
		m := h.rec.mark()
		h.client.ReconnectNow()
		h.rec.waitReconnected(t, m)
		if got := srv.Dials(); got != 1+i {
			t.Fatalf("after %d reconnects: %d dials, want %d", i, got, 1+i)
		}
	}
	waitServer(t, srv, "session re-attached", func() bool {
		for _, s := range srv.Sessions() {
			if s.ID == ref.ID && s.Attached {
				return true
			}
		}
		return false
	})
}

// TestUnseenApprovalAfterQuietAttach: on 0.18.2 an approval sent to
// another client before Herald resumed the session is not sent again.
// When the session then stays silent, Herald raises a request that says
// so; answering it resolves the waiting approval (FIFO). Newer gateways
// list the open request instead, so no such guess is made there.
func TestUnseenApprovalAfterQuietAttach(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: dialect})
			defer srv.Close()
			h := start(t, srv, func(c *Config) { c.DiscoveryInterval = -1 })
			h.rec.waitState(t, source.StateConnected)
			peer := srv.NewPeer()
			live, stored, _ := peer.Create()
			if err := peer.Submit(live, "approve-me: rm -rf /srv/cache"); err != nil {
				t.Fatal(err)
			}
			waitServer(t, srv, "approval waits", func() bool {
				for _, s := range srv.Sessions() {
					if s.ID == live && len(s.Pending) == 1 {
						return true
					}
				}
				return false
			})
			attachedAt := h.clk.Now()
			beats := h.client.beats.Load()
			if _, err := h.client.AttachSession(ctxT(t), stored); err != nil {
				t.Fatal(err)
			}
			if dialect == hermestest.Modern {
				got := h.rec.waitKind(t, wire.ApprovalServerRequest, 1)
				if a, _ := got[0].Approval(); a.Command != "rm -rf /srv/cache" {
					t.Fatalf("open request %+v", a)
				}
				return
			}
			// The heartbeat re-arms for the quiet check, then it is due.
			h.rec.waitFor(t, "heartbeat re-armed", func([]wire.Event, []source.Status) bool { return h.client.beats.Load() > beats })
			h.clk.Advance(QuietAfter)
			got := h.rec.waitKind(t, wire.ApprovalRequest, 1)
			if quiet := got[0].ReceivedAt.Sub(attachedAt); quiet < QuietAfter {
				t.Fatalf("raised after %s of silence, before QuietAfter", quiet)
			}
			a, _ := got[0].Approval()
			if got[0].Session != live || a.Command != "" || !slices.Equal(a.Choices, []string{"deny"}) {
				t.Fatalf("unseen request %+v %+v", got[0], a)
			}
			n, err := h.client.RespondApproval(ctxT(t), live, "deny", "")
			if err != nil || n != 1 {
				t.Fatalf("answer resolved %d (%v), want the waiting approval", n, err)
			}
			h.rec.waitKind(t, wire.ToolComplete, 1)
		})
	}
}

// TestOwnedElsewhereOnSubmit: a newer gateway that refuses a prompt on a
// session another client owns (4090) marks the session followed
// elsewhere, and take back makes Herald its owner again.
func TestOwnedElsewhereOnSubmit(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, ExclusiveSubmit: true})
	defer srv.Close()
	h := start(t, srv, func(c *Config) { c.DiscoveryInterval = -1 })
	h.rec.waitState(t, source.StateConnected)
	ref := h.session(t)
	peer := srv.NewPeer()
	if err := peer.Resume(ref.StoredID); err != nil {
		t.Fatal(err)
	}
	err := h.client.Call(ctxT(t), "prompt.submit", map[string]any{"session_id": ref.ID, "text": "hello"}, nil)
	if !IsOwnedElsewhere(err) {
		t.Fatalf("submit on a session another client owns: %v, want 4090", err)
	}
	if !h.client.Elsewhere(ref.ID) {
		t.Fatal("4090 did not mark the session followed elsewhere")
	}
	h.rec.waitKind(t, source.EventElsewhere, 1)
	if _, err := h.client.TakeBack(ctxT(t), ref.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.client.Call(ctxT(t), "prompt.submit", map[string]any{"session_id": ref.ID, "text": "again"}, nil); err != nil {
		t.Fatalf("submit after take back: %v", err)
	}
}

// TestListingDuringResumeIsHeralds: a listing read while Herald's
// session.resume of a session is in flight (the gateway may list after
// the resume, and its answer may be read before the resume's) shows the
// session as Herald's, never as one driven by another client: the
// service would offer it and the desktop say "a session waits on you in
// another client" about a session Herald follows.
func TestListingDuringResumeIsHeralds(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: dialect})
			defer srv.Close()
			live, stored, err := srv.NewPeer().Create()
			if err != nil {
				t.Fatal(err)
			}
			h, d := startDisc(t, srv)
			done := h.client.resumeStarted(stored)
			if row, ok := rowOf(h.tick(t, d), live); !ok || !row.Followed {
				t.Fatalf("row %+v (listed %v) while Herald resumes it, want followed", row, ok)
			}
			done()
			if row, ok := rowOf(h.tick(t, d), live); !ok || row.Followed {
				t.Fatalf("row %+v (listed %v) after a resume that never tracked it, want not followed", row, ok)
			}
		})
	}
}

// TestDiscoveryFindsANewSessionWithinOneInterval: with the default
// interval a session another client starts after Herald connected is
// listed within DiscoveryInterval (2 s) of its start.
func TestDiscoveryFindsANewSessionWithinOneInterval(t *testing.T) {
	t.Parallel()
	for _, dialect := range hermestest.Dialects {
		t.Run(dialect.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: dialect})
			defer srv.Close()
			d := &discoveries{}
			h := start(t, srv, func(c *Config) { c.OnDiscovery = d.on })
			d.rec = h.rec
			h.rec.waitState(t, source.StateConnected)
			h.rec.waitFor(t, "the first listing", func([]wire.Event, []source.Status) bool { return d.n() > 0 && !h.client.listing() })
			h.clk.BlockUntil(1)
			// Half an interval later another client starts a session.
			h.clk.Advance(DiscoveryInterval / 2)
			peer := srv.NewPeer()
			live, _, _ := peer.Create()
			if err := peer.Submit(live, "hold"); err != nil {
				t.Fatal(err)
			}
			if _, ok := rowOf(d.last(), live); ok {
				t.Fatal("listed before any listing ran")
			}
			h.clk.Advance(DiscoveryInterval / 2)
			h.rec.waitFor(t, "a listing that shows the new session", func([]wire.Event, []source.Status) bool {
				_, ok := rowOf(d.last(), live)
				return ok
			})
			srv.Release(live)
		})
	}
}

// TestDiscoveryNamesUntitledSessionsByFirstPrompt: a listed session
// without a title gets its first prompt from session.history (its name,
// approval.Naming), asked once per session, not for a titled one, and its
// start from the row's started_at.
func TestDiscoveryNamesUntitledSessionsByFirstPrompt(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: dialect})
			defer srv.Close()
			peer := srv.NewPeer()
			untitled, _, _ := peer.Create()
			titled, _, _ := peer.Create()
			srv.SetTitle(titled, "Fix the build")
			for _, id := range []string{untitled, titled} {
				if err := peer.Submit(id, "hold"); err != nil {
					t.Fatal(err)
				}
			}
			h, d := startDisc(t, srv)
			h.rec.waitFor(t, "the first listing", func([]wire.Event, []source.Status) bool { return d.n() > 0 })
			got := h.tick(t, d)
			row, ok := rowOf(got, untitled)
			if !ok || row.FirstPrompt != "hold" || row.StartedAt.IsZero() {
				t.Fatalf("untitled row %+v (found %v), want first prompt \"hold\" and its start", row, ok)
			}
			if row, _ := rowOf(got, titled); row.FirstPrompt != "" {
				t.Errorf("a titled session was asked for its first prompt: %+v", row)
			}
			h.tick(t, d)
			if n := count(srv.Methods(), "session.history"); n != 1 {
				t.Errorf("session.history called %d times, want once (the untitled session, once)", n)
			}
			srv.Release(untitled)
			srv.Release(titled)
		})
	}
}
