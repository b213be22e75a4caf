package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestWatchFollowsSessionsFoundLater: `herald watch --follow auto` finds
// a session another client starts after Herald connected, says so,
// follows it, shows its approval and sends the answer typed with
// `herald approve`; when the other client takes the session back, watch
// says it is followed elsewhere now.
func TestWatchFollowsSessionsFoundLater(t *testing.T) {
	t.Parallel()
	// Turns take ~100 ms a step, longer than a listing interval (200 ms),
	// so the other client's turn spans a listing Herald hears nothing in.
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Token: "e2e-discovery", StepDelay: 100 * time.Millisecond})
	defer srv.Close()
	dir := t.TempDir()
	ctl := filepath.Join(dir, "run", "ctl.sock") // the socket folder must be private (0700)
	w := startWatchEnv(t, []string{"HERALD_DISCOVERY_INTERVAL=200ms"},
		"--gateway", "lab="+srv.URL, "--token", srv.Token(), "--follow", "auto", "--control", ctl, "--db", "")
	w.waitLine(t, "connected", func(m map[string]any) bool {
		return m["type"] == "status" && field(m, "status", "state") == "connected"
	})
	peer := srv.NewPeer()
	live, stored, err := peer.Create()
	if err != nil {
		t.Fatal(err)
	}
	if err := peer.Submit(live, "approve-me: rm -rf /srv/found-later"); err != nil {
		t.Fatal(err)
	}
	w.waitLine(t, "session found", func(m map[string]any) bool {
		return m["type"] == "session" && field(m, "notice", "kind") == "found" && field(m, "notice", "key") == stored
	})
	// The approval jumps ahead of other output: take both in any order.
	var a map[string]any
	followed := false
	w.waitLine(t, "session followed and its approval", func(m map[string]any) bool {
		if m["type"] == "session" && field(m, "notice", "kind") == "followed" && field(m, "notice", "session") == live {
			followed = true
		}
		if m["type"] == "approval" && m["change"] == "arrived" && field(m, "request", "command") == "rm -rf /srv/found-later" {
			a = m
		}
		return followed && a != nil
	})
	if _, e, code := run(t, "approve", "--control", ctl, a["id"].(string), "deny"); code != 0 {
		t.Fatalf("approve: exit %d: %s", code, e)
	}
	waitServer(t, srv, "the answer", func() bool {
		for _, an := range srv.Answers() {
			if an.Command == "rm -rf /srv/found-later" && an.Choice == "deny" {
				return true
			}
		}
		return false
	})
	waitServer(t, srv, "the turn ends at Herald", func() bool {
		for _, s := range srv.Sessions() {
			if s.ID == live && !s.Running {
				return true
			}
		}
		return false
	})
	w.waitLine(t, "Herald sees the turn end", func(m map[string]any) bool {
		return m["type"] == "event" && field(m, "event", "kind") == "message.complete" && field(m, "event", "session") == live
	})
	// The other client takes it back and drives it: watch says so.
	if err := peer.Submit(live, "burst 6"); err != nil {
		t.Fatal(err)
	}
	n := w.waitLine(t, "followed elsewhere", func(m map[string]any) bool {
		return m["type"] == "session" && field(m, "notice", "kind") == "elsewhere" && field(m, "notice", "session") == live
	})
	if text, _ := field(n, "notice", "text").(string); !strings.Contains(text, "followed elsewhere now") {
		t.Fatalf("notice %v", n)
	}
}
