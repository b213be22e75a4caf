package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestWatchShowsAPIServerRunsNextToGateways: `herald watch` follows a
// WebSocket gateway and an API server at once; a run started on the API
// server asks for approval, `herald approve` answers it, the API server
// records the choice and the run completes.
func TestWatchShowsAPIServerRunsNextToGateways(t *testing.T) {
	for _, d := range []apiservertest.Dialect{apiservertest.SingleConsumer, apiservertest.LastEventID} {
		t.Run(map[apiservertest.Dialect]string{apiservertest.SingleConsumer: "0.18.2", apiservertest.LastEventID: "last-event-id"}[d], func(t *testing.T) {
			t.Parallel()
			api := apiservertest.NewServer(apiservertest.Options{Dialect: d})
			defer api.Close()
			gw := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
			defer gw.Close()
			_, stored := gw.CreateSession()
			dir := t.TempDir()
			ctl := filepath.Join(dir, "run", "ctl.sock") // the socket folder must be private (0700)
			w := startWatch(t, "--gateway", "ws="+gw.URL, "--token", gw.Token(), "--session", stored,
				"--api", "api="+api.URL, "--api-key", api.Key(), "--start", "approve-me: rm -rf ./api-build",
				"--control", ctl, "--db", "")
			seen := map[string]bool{}
			var arrived map[string]any
			w.waitLine(t, "both connected and the API approval", func(m map[string]any) bool {
				if m["type"] == "status" && field(m, "status", "state") == "connected" {
					seen[field(m, "status", "gateway").(string)] = true
				}
				if m["type"] == "approval" && m["change"] == "arrived" && field(m, "request", "gateway") == "api" {
					arrived = m
				}
				return seen["ws"] && seen["api"] && arrived != nil
			})
			if got := field(arrived, "request", "command"); got != "rm -rf ./api-build" {
				t.Fatalf("approval command %v", got)
			}
			if len(api.Approvals()) != 0 {
				t.Fatal("answered before the user acted")
			}
			out, e, code := run(t, "approve", "--control", ctl, arrived["id"].(string), "once")
			if code != 0 || !strings.Contains(out, "confirmed") {
				t.Fatalf("approve: exit %d %q %q", code, out, e)
			}
			as := api.Approvals()
			if len(as) != 1 || as[0].Choice != "once" {
				t.Fatalf("API server recorded %+v", as)
			}
			w.waitLine(t, "run completed", func(m map[string]any) bool {
				return m["type"] == "event" && field(m, "event", "gateway") == "api" && field(m, "event", "kind") == "run.completed"
			})
		})
	}
}
