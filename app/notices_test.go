package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/wire"
)

func noticeEv(gw, kind, payload string) wire.Event {
	ev := wire.Event{Gateway: gw, Session: "s1", Kind: kind, Payload: json.RawMessage(payload)}
	ev.DecodeData()
	return ev
}

func show(gw, key, level, kind, text string, ttl any) wire.Event {
	p := map[string]any{"text": text, "level": level, "kind": kind, "ttl_ms": ttl, "key": key, "id": key}
	if key == "" {
		p["key"], p["id"] = nil, nil
	}
	b, _ := json.Marshal(p)
	return noticeEv(gw, wire.NotificationShow, string(b))
}

func clearEv(gw, key string) wire.Event {
	return noticeEv(gw, wire.NotificationClear, fmt.Sprintf(`{"key":%q}`, key))
}

// noticeRig is the notices tracker on a fake clock with a fake platform.
func noticeRig(t *testing.T) (*notices, *fakePlatform, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Unix(1000, 0))
	n := newNotices(clk)
	p := newFakePlatform()
	n.attach(p)
	t.Cleanup(n.close)
	return n, p, clk
}

func (f *fakePlatform) counts() (notified, withdrawn int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.notified), len(f.withdrawn)
}

func (f *fakePlatform) lastNotified() Notification {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.notified[len(f.notified)-1]
}

func TestNoticeLevelsBecomeUrgencies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		level, title string
		urgency      Urgency
	}{
		// A notice waits for no answer: never critical (notePolicy).
		{"error", "Hermes error on lab", UrgencyNormal},
		{"warn", "Hermes warning on lab", UrgencyNormal},
		{"info", "Hermes on lab", UrgencyLow},
		{"success", "Hermes on lab", UrgencyLow},
		{"\x1b[31mweird", "Hermes on lab", UrgencyLow},
	} {
		n, p, _ := noticeRig(t)
		n.event(show("lab", "k", tc.level, "sticky", "✕ Credit access paused · run /topup to top up", nil))
		got := p.lastNotified()
		if got.Urgency != tc.urgency || got.Title != tc.title || got.Body != "✕ Credit access paused · run /topup to top up" || len(got.Actions) != 0 {
			t.Errorf("level %q: %+v", tc.level, got)
		}
	}
}

// TestNoticeDedupeAndClear: a notice with the same key replaces the old
// one; notification.clear withdraws it; keys are per gateway.
func TestNoticeDedupeAndClear(t *testing.T) {
	t.Parallel()
	n, p, _ := noticeRig(t)
	n.event(show("lab", "credits.usage", "info", "sticky", "used $5 of $10", nil))
	first := p.lastNotified()
	n.event(show("lab", "credits.usage", "warn", "sticky", "used $7.50 of $10", nil))
	second := p.lastNotified()
	notified, withdrawn := p.counts()
	if notified != 2 || withdrawn != 1 || p.withdrawn[0] != first.ID || second.ID == first.ID || n.count() != 1 {
		t.Fatalf("replace: notified %d withdrawn %v (first %s) up %d", notified, p.withdrawn, first.ID, n.count())
	}
	// The same key on another gateway is another notice.
	n.event(show("prod", "credits.usage", "warn", "sticky", "used $9 of $10", nil))
	if n.count() != 2 {
		t.Fatalf("%d up, want one per gateway", n.count())
	}
	n.event(clearEv("lab", "credits.usage"))
	if _, w := p.counts(); w != 2 || p.withdrawn[1] != second.ID || n.count() != 1 {
		t.Fatalf("clear: withdrawn %v, %d up", p.withdrawn, n.count())
	}
	// Clearing what is not up does nothing.
	n.event(clearEv("lab", "credits.usage"))
	n.event(clearEv("lab", "nope"))
	n.event(noticeEv("lab", wire.NotificationClear, `{}`))
	if notified, w := p.counts(); notified != 3 || w != 2 {
		t.Fatalf("stray clears changed things: %d %d", notified, w)
	}
	// Notices without key or id are one-offs: never merged.
	n.event(show("lab", "", "info", "sticky", "a", nil))
	n.event(show("lab", "", "info", "sticky", "b", nil))
	if n.count() != 3 {
		t.Fatalf("%d up after two one-offs, want 3", n.count())
	}
}

// TestNoticeTTL: a ttl notice goes when ttl_ms is up (fake clock); a
// sticky notice's ttl_ms is ignored, as Hermes does; a replaced notice's
// timer never withdraws its successor.
func TestNoticeTTL(t *testing.T) {
	t.Parallel()
	n, p, clk := noticeRig(t)
	n.event(show("lab", "credits.restored", "success", "ttl", "✓ Credit access restored", 8000))
	n.event(show("lab", "sticky", "warn", "sticky", "stays", 1000))
	id := p.lastNotified().ID
	clk.BlockUntil(1)
	clk.Advance(7999 * time.Millisecond)
	if _, w := p.counts(); w != 0 {
		t.Fatalf("withdrawn %v before its ttl", p.withdrawn)
	}
	clk.Advance(time.Millisecond)
	p.waitFor(t, "ttl withdrawal", func(f *fakePlatform) bool { return len(f.withdrawn) == 1 })
	if p.withdrawn[0] == id || n.count() != 1 {
		t.Fatalf("withdrawn %v (sticky is %s), %d up", p.withdrawn, id, n.count())
	}
	clk.Advance(time.Hour)
	if _, w := p.counts(); w != 1 {
		t.Fatalf("the sticky notice went: %v", p.withdrawn)
	}

	// Replace a ttl notice by a sticky one under the same key: the old
	// timer is stopped and cannot withdraw the new notice.
	n.event(show("lab", "k", "info", "ttl", "short", 2000))
	clk.BlockUntil(1)
	n.event(show("lab", "k", "info", "sticky", "now sticky", nil))
	if clk.Waiters() != 0 {
		t.Fatalf("%d timers armed after the replace, want 0", clk.Waiters())
	}
	clk.Advance(time.Hour)
	if n.count() != 2 {
		t.Fatalf("%d up, the replaced ttl removed its successor", n.count())
	}
	// ttl without ttl_ms lives the default; absurd values are clamped.
	n.event(show("lab", "d", "info", "ttl", "default", nil))
	n.event(show("lab", "e", "info", "ttl", "huge", 1e300))
	n.event(show("lab", "f", "info", "ttl", "tiny", 1))
	clk.BlockUntil(3)
	clk.Advance(minNoticeTTL)
	p.waitFor(t, "tiny ttl clamped to a second", func(f *fakePlatform) bool { return len(f.withdrawn) == 3 })
	clk.Advance(defaultNoticeTTL)
	p.waitFor(t, "default ttl", func(f *fakePlatform) bool { return len(f.withdrawn) == 4 })
	clk.Advance(maxNoticeTTL)
	p.waitFor(t, "huge ttl clamped", func(f *fakePlatform) bool { return len(f.withdrawn) == 5 })
}

// TestNoticePause: nothing new is shown while paused; a repeat key still
// withdraws the stale notice.
func TestNoticePause(t *testing.T) {
	t.Parallel()
	n, p, clk := noticeRig(t)
	n.event(show("lab", "k", "warn", "sticky", "before", nil))
	n.setPaused(true)
	n.event(show("lab", "other", "error", "ttl", "while paused", 1000))
	n.event(show("lab", "k", "warn", "sticky", "update while paused", nil))
	notified, withdrawn := p.counts()
	if notified != 1 || withdrawn != 1 || n.count() != 0 || clk.Waiters() != 0 {
		t.Fatalf("paused: notified %d withdrawn %d up %d timers %d", notified, withdrawn, n.count(), clk.Waiters())
	}
	n.setPaused(false)
	n.event(show("lab", "k", "warn", "sticky", "after", nil))
	if notified, _ := p.counts(); notified != 2 {
		t.Fatalf("resumed: notified %d", notified)
	}
}

// TestNoticeBounds: hostile text is bounded and shown, not interpreted;
// the number of notices up is bounded.
func TestNoticeBounds(t *testing.T) {
	t.Parallel()
	n, p, _ := noticeRig(t)
	n.event(show("lab", "x", "info", "sticky", "\x1b]8;;http://evil\x07click\u202e"+strings.Repeat("y", 1000), nil))
	got := p.lastNotified()
	if strings.ContainsAny(got.Body, "\x1b\x07\u202e") || !strings.Contains(got.Body, "␛") || len(got.Body) > noticeTextMax*2 || !strings.HasSuffix(got.Body, "…") {
		t.Fatalf("body %q", got.Body)
	}
	n.event(show("lab", strings.Repeat("k", 10000), "info", "sticky", "long key", nil))
	n.event(clearEv("lab", strings.Repeat("k", 10000)))
	if n.count() != 1 {
		t.Fatalf("a long key was not cleared by the same key: %d up", n.count())
	}
	for i := range 3 * maxNotices {
		n.event(show("lab", fmt.Sprintf("k%d", i), "info", "sticky", "flood", nil))
	}
	notified, withdrawn := p.counts()
	if n.count() != maxNotices || notified-withdrawn != maxNotices {
		t.Fatalf("%d up (%d shown, %d withdrawn), want at most %d", n.count(), notified, withdrawn, maxNotices)
	}
}

// TestHermesNoticesOnTheDesktop runs the app against the fake gateway:
// notification.show becomes a native notification, a repeat key replaces
// it, notification.clear withdraws it, and pause holds new ones back.
func TestHermesNoticesOnTheDesktop(t *testing.T) {
	a, p, srv, live := desktop(t)
	if err := srv.ShowNotice(live, hermestest.Notice{Text: "⚠ You've used $7.50 of your $10 cap", Level: "warn", Kind: "sticky", Key: "credits.usage", ID: "credits.usage"}); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "the notice shown", func(f *fakePlatform) bool { return len(f.notified) == 1 })
	first := p.lastNotified()
	if first.Title != "Hermes warning on lab" || first.Body != "⚠ You've used $7.50 of your $10 cap" || first.Urgency != UrgencyNormal {
		t.Fatalf("notification %+v", first)
	}
	srv.ShowNotice(live, hermestest.Notice{Text: "⚠ You've used $9 of your $10 cap", Level: "warn", Kind: "sticky", Key: "credits.usage", ID: "credits.usage"})
	p.waitFor(t, "replaced", func(f *fakePlatform) bool {
		return len(f.notified) == 2 && len(f.withdrawn) == 1 && f.withdrawn[0] == first.ID
	})
	second := p.lastNotified()
	srv.ClearNotice(live, "credits.usage")
	p.waitFor(t, "cleared", func(f *fakePlatform) bool { return len(f.withdrawn) == 2 && f.withdrawn[1] == second.ID })
	if err := a.SetPauseNotifications(true); err != nil {
		t.Fatal(err)
	}
	srv.ShowNotice(live, hermestest.Notice{Text: "✕ Credit access paused", Level: "error", Kind: "sticky", Key: "credits.depleted"})
	// A later event in the same session proves the notice was handled.
	srv.Emit(live, "status.update", map[string]any{"kind": "status", "text": "marker"})
	p.waitFor(t, "the marker", func(f *fakePlatform) bool {
		for _, s := range f.last.Sessions {
			if s.Status == "marker" {
				return true
			}
		}
		return false
	})
	if notified, _ := p.counts(); notified != 2 {
		t.Fatalf("a notice was shown while paused (%d notifications)", notified)
	}
}

// TestReplayedNotices: after a reconnect the gateway replays what Herald
// missed; a replayed ttl notice is not shown again, a replayed sticky one
// and a replayed clear apply.
func TestReplayedNotices(t *testing.T) {
	t.Parallel()
	n, p, _ := noticeRig(t)
	replayed := func(ev wire.Event) wire.Event { ev.Replayed = true; return ev }
	n.event(replayed(show("lab", "credits.restored", "success", "ttl", "✓ restored", 8000)))
	if notified, _ := p.counts(); notified != 0 {
		t.Fatal("a replayed ttl notice was shown")
	}
	n.event(replayed(show("lab", "credits.depleted", "error", "sticky", "✕ paused", nil)))
	n.event(replayed(clearEv("lab", "credits.depleted")))
	if notified, withdrawn := p.counts(); notified != 1 || withdrawn != 1 || n.count() != 0 {
		t.Fatalf("replayed sticky + clear: %d shown, %d withdrawn, %d up", notified, withdrawn, n.count())
	}
}

// TestHeadlessNoticeUrgency: on Linux the always-on process shows
// notifications over D-Bus itself; a notice's urgency goes with it.
func TestHeadlessNoticeUrgency(t *testing.T) {
	t.Parallel()
	notes := &fakeNotes{}
	n := newNotices(clock.NewFake(time.Unix(0, 0)))
	n.attach(&HeadlessPlatform{Notes: notes})
	defer n.close()
	n.event(show("lab", "a", "error", "sticky", "x", nil))
	n.event(show("lab", "b", "info", "sticky", "y", nil))
	n.event(show("lab", "c", "warn", "sticky", "z", nil))
	if len(notes.shown) != 3 || notes.shown[0].Urgency != "" || notes.shown[1].Urgency != "low" || notes.shown[2].Urgency != "" || notes.shown[0].Urgent {
		t.Fatalf("shown %+v", notes.shown)
	}
}
