package gateway

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/netfault"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// chaosFault is the one network fault a chaos round injects.
type chaosFault int

const (
	faultProxyCut  chaosFault = iota // proxy closes both sockets (abrupt, RST/FIN)
	faultKick                        // gateway drops the TCP connection
	faultCutAfter                    // gateway drops after a random number of frames
	faultStall                       // half-open: proxy freezes past the dead-link window
	faultDuplicate                   // gateway sends every event frame twice
	faultSlow                        // a slow link (every frame delayed) that then drops
	numFaults
)

func (f chaosFault) String() string {
	return [...]string{"proxy-cut", "kick", "cut-after", "stall", "duplicate", "slow"}[f]
}

// TestChaosProxyRounds runs 1000 randomized rounds (100 with -short) of a
// Modern fake gateway behind a netfault proxy. Each round opens a session,
// emits a burst of numbered deltas with approvals in it, and injects one
// random fault during the burst. Every round must deliver every event
// exactly once and in order, every approval exactly once, send no answer
// the user did not give, and deliver each answer exactly once.
//
// The seed is logged; HERALD_SEED=<seed> replays the same rounds, and
// -run 'TestChaosProxyRounds/r0042-' narrows to one of them.
func TestChaosProxyRounds(t *testing.T) {
	seed := seedFromEnv(t)
	t.Logf("seed %d (rerun with HERALD_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0xc4a05))
	rounds := 1000
	if testing.Short() {
		rounds = 100
	}
	type round struct {
		i     int
		seed  uint64
		fault chaosFault
	}
	work := make(chan round)
	// Rounds mostly wait on loopback I/O; a few per core keeps both busy.
	workers := 4 * runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	mix := map[chaosFault]int{}
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				// t.Run may be called from several goroutines at once.
				t.Run(fmt.Sprintf("r%04d-%s", r.i, r.fault), func(t *testing.T) {
					// Deferred: t.Fatal in the round exits the goroutine.
					defer func() {
						if t.Failed() {
							t.Logf("round seed %d; reproduce with HERALD_SEED=%d go test -race -run 'TestChaosProxyRounds/r%04d-' ./backend/gateway/", r.seed, seed, r.i)
						}
					}()
					chaosRound(t, r.seed, r.fault)
				})
			}
		}()
	}
	for i := 0; i < rounds; i++ {
		s := rng.Uint64()
		f := chaosFault(rand.New(rand.NewPCG(s, 2)).IntN(int(numFaults)))
		mix[f]++
		work <- round{i: i, seed: s, fault: f}
	}
	close(work)
	wg.Wait()
	t.Logf("%d rounds in %s; fault mix %v", rounds, time.Since(start).Round(time.Millisecond), mix)
}

// chaosRound is one round; fault is derived from seed by the caller.
func chaosRound(t *testing.T, seed uint64, fault chaosFault) {
	rng := rand.New(rand.NewPCG(seed, 1))
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	px, err := netfault.New(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	switch fault {
	case faultDuplicate:
		srv.SetFaults(hermestest.Faults{DuplicateEvents: true})
	case faultSlow:
		srv.SetFaults(hermestest.Faults{Delay: 200 * time.Microsecond})
	}
	h := start(t, srv, func(c *Config) { c.URL = "http://" + px.Addr() })
	// Stop the client before the proxy and gateway close (defers run
	// before t.Cleanup).
	defer h.stop()
	h.rec.waitState(t, source.StateConnected)
	ref := h.session(t)
	base := len(kinds(h, wire.MessageDelta))

	n := 40 + rng.IntN(80)
	approvalAt := map[int]bool{}
	for k := 1 + rng.IntN(4); len(approvalAt) < k; {
		approvalAt[rng.IntN(n)] = true
	}
	faultAt := rng.IntN(n)
	// A stall lasts while stallEnd-faultAt deltas are emitted into the
	// frozen proxy; then the clock moves past the dead-link window.
	stallEnd := faultAt + rng.IntN(n-faultAt)
	var wantIDs []string
	done := map[string]<-chan string{}
	for i := 0; i < n; i++ {
		if i == faultAt {
			injectFault(t, h, px, rng, fault, n-i, base+i, len(wantIDs))
		}
		if fault == faultStall && i == stallEnd {
			m := h.rec.mark()
			h.clk.BlockUntil(1) // the heartbeat ticker is armed
			h.clk.Advance(35 * time.Second)
			h.clk.Advance(10 * time.Second) // 45 s of silence in all
			st := h.rec.waitStateAfter(t, m, source.StateReconnecting)
			if st.Err == "" {
				t.Fatalf("stall reported with no reason: %+v", st)
			}
			px.Thaw()
		}
		if err := srv.Emit(ref.ID, wire.MessageDelta, map[string]any{"text": strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
		if approvalAt[i] {
			id, ch, err := srv.RequestApproval(ref.ID, hermestest.ApprovalSpec{Command: "rm -rf ./build-" + strconv.Itoa(i)})
			if err != nil {
				t.Fatal(err)
			}
			wantIDs = append(wantIDs, id)
			done[id] = ch
		}
	}
	last := strconv.Itoa(n - 1)
	h.rec.waitFor(t, "the last delta", func(evs []wire.Event, _ []source.Status) bool {
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i].Kind == wire.MessageDelta && evs[i].Data.(*wire.DeltaPayload).Text == last {
				return true
			}
		}
		return false
	})
	h.rec.waitFor(t, "every approval", func(evs []wire.Event, _ []source.Status) bool {
		return len(approvals(evs)) >= len(wantIDs)
	})

	// Exactly once, in order.
	evs, _ := h.rec.snapshot()
	seen := map[uint64]bool{}
	got := map[string]int{}
	next, replayed := 0, 0
	for _, e := range evs {
		if e.Seq > 0 {
			if seen[e.Seq] {
				t.Fatalf("%s: seq %d delivered twice", fault, e.Seq)
			}
			seen[e.Seq] = true
		}
		switch {
		case e.Kind == wire.MessageDelta:
			if base > 0 {
				base-- // the session's first prompt
				continue
			}
			if d := e.Data.(*wire.DeltaPayload).Text; d != strconv.Itoa(next) {
				t.Fatalf("%s at delta %d: delta %q out of order or missing (want %d)", fault, faultAt, d, next)
			}
			next++
			if e.Replayed {
				replayed++
			}
		case e.IsApproval():
			got[e.RequestID]++
		case e.Kind == wire.RequestCancel:
			t.Fatalf("%s: unexpected cancel of %s", fault, e.RequestID)
		}
	}
	if next != n {
		t.Fatalf("%s: %d of %d deltas delivered", fault, next, n)
	}
	if len(got) != len(wantIDs) {
		t.Fatalf("%s: approvals delivered %v, want %v once each", fault, got, wantIDs)
	}
	for _, id := range wantIDs {
		if got[id] != 1 {
			t.Fatalf("%s at delta %d: approval %s delivered %d times, want 1", fault, faultAt, id, got[id])
		}
	}
	if fault != faultDuplicate && srv.Dials() < 2 {
		t.Fatalf("%s: the fault never dropped the link (dials %d)", fault, srv.Dials())
	}
	// Deltas emitted into the frozen proxy can only have come back by
	// replay: proof the stall really lost frames.
	if fault == faultStall && stallEnd > faultAt && replayed == 0 {
		t.Fatalf("stall over %d deltas, but none was replayed", stallEnd-faultAt)
	}

	// Nothing was answered on the user's behalf.
	if a := srv.Answers(); len(a) != 0 {
		t.Fatalf("%s: gateway got answers %+v before the user gave any", fault, a)
	}
	choices := []string{"once", "session", "deny"}
	want := map[string]string{}
	for _, id := range wantIDs {
		c := choices[rng.IntN(len(choices))]
		want[id] = c
		if err := h.client.RespondServerRequest(ctxT(t), id, c); err != nil {
			t.Fatalf("%s: answering %s: %v", fault, id, err)
		}
	}
	waitServer(t, srv, "every answer", func() bool { return len(srv.Answers()) >= len(wantIDs) })
	answered := map[string]int{}
	for _, a := range srv.Answers() {
		answered[a.RequestID]++
		if a.Choice != want[a.RequestID] {
			t.Fatalf("%s: %s answered %q, user chose %q", fault, a.RequestID, a.Choice, want[a.RequestID])
		}
	}
	for _, id := range wantIDs {
		if answered[id] != 1 {
			t.Fatalf("%s: %s answered %d times, want once (%+v)", fault, id, answered[id], srv.Answers())
		}
		if c := <-done[id]; c != want[id] {
			t.Fatalf("%s: agent of %s got %q, want %q", fault, id, c, want[id])
		}
	}
	if len(srv.Answers()) != len(wantIDs) {
		t.Fatalf("%s: %d answers for %d approvals", fault, len(srv.Answers()), len(wantIDs))
	}
}

// injectFault breaks the link once, in the middle of the burst: left
// deltas (at least 1) are still to be emitted; emitted deltas (counting
// the session's first prompt) and approvalsSoFar approvals have been. A stall only freezes here; chaosRound ends it.
func injectFault(t *testing.T, h *harness, px *netfault.Proxy, rng *rand.Rand, fault chaosFault, left, emitted, approvalsSoFar int) {
	t.Helper()
	switch fault {
	case faultProxyCut:
		px.Cut()
	case faultKick, faultSlow:
		h.srv.Kick()
	case faultCutAfter:
		// At most left-1 more frames: the remaining deltas alone are
		// left frames, so the cut always happens within the burst.
		h.srv.CutAfter(rng.IntN(left))
	case faultStall:
		// Let what is already on the wire arrive, so the silence starts
		// now on the fake clock; then freeze mid-burst. Frames emitted
		// while frozen sit in the proxy and die with the link.
		h.rec.waitFor(t, "the burst so far", func(evs []wire.Event, _ []source.Status) bool {
			return len(deltas(h)) >= emitted && len(approvals(evs)) >= approvalsSoFar
		})
		h.waitHeard(t)
		px.Freeze()
	}
}
