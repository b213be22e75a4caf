package apiserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
)

// TestStreamDropEndsWithFinalStatus: on Hermes 0.18.2 a dropped run stream
// cannot be resumed, so Herald must not subscribe again (that would split
// the run's single event queue) but poll GET /v1/runs/{id} on its clock
// until the run is terminal, and report the run's real final status.
func TestStreamDropEndsWithFinalStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, input string
		drop        int
		stop        bool // stop the run after the drop
		kind        string
		check       func(*apiserver.RunOutcomePayload) bool
	}{
		{name: "completed", input: "slow 4", drop: 1, kind: apiserver.RunCompleted,
			check: func(p *apiserver.RunOutcomePayload) bool { return p.Output == "slow done after 4 steps" }},
		{name: "failed", input: "fail-soft", drop: 2, kind: apiserver.RunFailed,
			check: func(p *apiserver.RunOutcomePayload) bool { return strings.Contains(p.Error, "stub structured failure") }},
		{name: "cancelled", input: "slow 50", drop: 1, stop: true, kind: apiserver.RunCancelled,
			check: func(p *apiserver.RunOutcomePayload) bool { return p.Status == "cancelled" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The server's agent runs without pauses, except the run to be
			// stopped, which waits at its first step on a clock nobody
			// advances.
			srvClk := clock.NewFake(time.Unix(1_800_000_000, 0))
			h := start(t, apiservertest.SingleConsumer, setup{manual: true, server: func(o *apiservertest.Options) {
				o.Clock, o.Keepalive = srvClk, -1
				if tc.stop {
					o.StepDelay = time.Second
				}
			}})
			h.srv.SetFaults(apiservertest.Faults{DropStreamAfter: tc.drop})
			run := h.startRun(tc.input)
			// The client goes straight to polling: no resubscribe, no
			// reconnect wait.
			h.rec.waitRun(t, run, "polling", func(ri apiserver.RunInfo) bool { return ri.Mode == apiserver.ModePolling })
			if tc.stop {
				if _, err := h.client.StopRun(ctxT(t), run); err != nil {
					t.Fatal(err)
				}
			}
			waitServer(t, h.srv, "the run to end", func() bool {
				ri, _ := h.srv.Run(run)
				return ri.Status == strings.TrimPrefix(tc.kind, "run.")
			})
			ev := h.pollUntil(run, tc.kind)
			p, ok := ev.Data.(*apiserver.RunOutcomePayload)
			if !ok || !p.Synthesized || !tc.check(p) {
				t.Fatalf("final event %s %+v", ev.Kind, ev.Data)
			}
			h.rec.waitRun(t, run, "done", func(ri apiserver.RunInfo) bool {
				return ri.Mode == apiserver.ModeDone && ri.Status == strings.TrimPrefix(tc.kind, "run.") && ri.Interrupted
			})
			subs := 0
			for _, r := range h.srv.Requests() {
				if strings.HasSuffix(r.Path, "/events") {
					subs++
				}
			}
			if subs != 1 {
				t.Errorf("%d event-stream subscribes after a drop on 0.18.2, want 1 (no resubscribe into a split queue)", subs)
			}
		})
	}
}
