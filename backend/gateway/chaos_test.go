package gateway

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// seedFromEnv returns HERALD_SEED when set (to reproduce a failure), else a
// fresh seed. The seed is always logged.
func seedFromEnv(t *testing.T) uint64 {
	t.Helper()
	if v := os.Getenv("HERALD_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("HERALD_SEED=%q: %v", v, err)
		}
		return s
	}
	return uint64(time.Now().UnixNano())
}

// TestDropAtRandomFrameLosesNothing drops the connection at a random frame
// during a burst of 500 events with approvals in it, 200 times, on the
// replaying dialect. Every run must deliver each event exactly once, in
// order, and every pending approval again after the reconnect.
func TestDropAtRandomFrameLosesNothing(t *testing.T) {
	seed := seedFromEnv(t)
	t.Logf("seed %d (rerun with HERALD_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x4e52))
	runs := 200
	if testing.Short() {
		runs = 20
	}
	for i := 0; i < runs; i++ {
		runSeed := rng.Uint64()
		t.Run(fmt.Sprintf("run%03d", i), func(t *testing.T) {
			t.Parallel()
			if err := dropRun(t, runSeed); err != nil {
				t.Fatalf("seed %d: %v", runSeed, err)
			}
		})
	}
}

const burst = 500

func dropRun(t *testing.T, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := start(t, srv, nil)
	h.rec.waitState(t, source.StateConnected)
	ref, err := h.client.CreateSession(ctxT(t), nil)
	if err != nil {
		return err
	}
	// The session gets its stored row at the first prompt.
	if err := h.client.Call(ctxT(t), "prompt.submit", map[string]any{"session_id": ref.ID, "text": "hello"}, nil); err != nil {
		return err
	}
	h.rec.waitKind(t, wire.MessageComplete, 1)

	// Approvals at random points of the burst; a cut at a random frame.
	approvalAt := map[int]bool{}
	for len(approvalAt) < 5 {
		approvalAt[rng.IntN(burst)] = true
	}
	cutAt := rng.IntN(burst + len(approvalAt))
	// Half the runs also duplicate every event frame after the reconnect.
	srv.SetFaults(hermestest.Faults{DuplicateEvents: rng.IntN(2) == 0})
	srv.CutAfter(cutAt)
	// Emit part of the burst while the client is reconnecting, so live
	// frames overlap the replay. The pause comes after at least one more
	// frame than the cut point (every delta is a frame), so the cut has
	// happened by then.
	pauseAt := cutAt + 1 + rng.IntN(burst-cutAt+5)
	var wantApprovals []string
	for i := 0; i < burst; i++ {
		if i == pauseAt {
			waitServer(t, srv, "re-attach", func() bool {
				ss := srv.Sessions()
				return srv.Dials() > 1 && len(ss) == 1 && ss[0].Attached
			})
		}
		if err := srv.Emit(ref.ID, wire.MessageDelta, map[string]any{"text": strconv.Itoa(i)}); err != nil {
			return err
		}
		if approvalAt[i] {
			id, _, err := srv.RequestApproval(ref.ID, hermestest.ApprovalSpec{Command: "rm -rf ./build-" + strconv.Itoa(i)})
			if err != nil {
				return err
			}
			wantApprovals = append(wantApprovals, id)
		}
	}
	// Wait for every delta, then check the whole stream.
	h.rec.waitFor(t, "all deltas", func(evs []wire.Event, _ []source.Status) bool {
		n := 0
		for _, e := range evs {
			if e.Kind == wire.MessageDelta {
				if d := e.Data.(*wire.DeltaPayload); d.Text == strconv.Itoa(burst-1) {
					n++
				}
			}
		}
		return n > 0
	})
	h.rec.waitFor(t, "all approvals", func(evs []wire.Event, _ []source.Status) bool {
		return len(approvals(evs)) >= len(wantApprovals)
	})
	evs, _ := h.rec.snapshot()
	next := 0
	seen := map[uint64]bool{}
	gotApprovals := map[string]int{}
	for _, e := range evs {
		if e.Seq > 0 {
			if seen[e.Seq] {
				return fmt.Errorf("seq %d delivered twice", e.Seq)
			}
			seen[e.Seq] = true
		}
		switch {
		case e.Kind == wire.MessageDelta:
			d := e.Data.(*wire.DeltaPayload)
			if d.Text != strconv.Itoa(next) {
				return fmt.Errorf("delta %q out of order or missing (want %d)", d.Text, next)
			}
			next++
		case e.IsApproval():
			gotApprovals[e.RequestID]++
		case e.Kind == wire.RequestCancel:
			return fmt.Errorf("unexpected cancel of %s", e.RequestID)
		}
	}
	if next != burst {
		return fmt.Errorf("got %d of %d deltas", next, burst)
	}
	for _, id := range wantApprovals {
		if gotApprovals[id] != 1 {
			return fmt.Errorf("approval %s delivered %d times, want 1 (cut at frame %d)", id, gotApprovals[id], cutAt)
		}
	}
	if srv.Dials() < 2 {
		return fmt.Errorf("the connection was never cut (cut at %d, dials %d)", cutAt, srv.Dials())
	}
	// Every pending approval can still be answered, once each.
	for _, e := range approvals(evs) {
		if err := h.client.RespondServerRequest(ctxT(t), e.RequestID, "deny"); err != nil {
			return err
		}
	}
	waitServer(t, srv, "answers", func() bool { return len(srv.Answers()) == len(wantApprovals) })
	if len(srv.Answers()) != len(wantApprovals) {
		return fmt.Errorf("gateway saw %d answers, want %d", len(srv.Answers()), len(wantApprovals))
	}
	return nil
}
