package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestSecondWatchDialsNothing: a second `herald watch` on the same control
// socket stops with one line before it dials any gateway (a resume would
// take the running Herald's sessions on 0.18.2), and since the socket is
// served before the gateways are dialed, `herald pending` works as soon as
// the first watch shows a gateway connected.
func TestSecondWatchDialsNothing(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	defer srv.Close()
	_, stored := srv.CreateSession()
	ctl := filepath.Join(t.TempDir(), "run", "ctl.sock")
	w := startWatch(t, "--gateway", "lab="+srv.URL, "--token", srv.Token(), "--session", stored, "--control", ctl, "--db", "")
	w.waitLine(t, "connected", func(m map[string]any) bool {
		return m["type"] == "status" && field(m, "status", "state") == "connected"
	})
	if out, e, code := run(t, "pending", "--control", ctl); code != 0 {
		t.Fatalf("pending once connected: exit %d out %q err %q", code, out, e)
	}
	dials := srv.Dials()
	_, e, code := run(t, "watch", "--gateway", "lab="+srv.URL, "--token", srv.Token(), "--session", stored, "--control", ctl, "--db", "")
	if code != 1 || !strings.Contains(e, "another Herald is already running") || strings.Count(strings.TrimSpace(e), "\n") != 0 {
		t.Fatalf("second watch: exit %d stderr %q", code, e)
	}
	if srv.Dials() != dials {
		t.Fatalf("the second watch dialed the gateway (%d dials, was %d)", srv.Dials(), dials)
	}
}
