package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
	bolt "go.etcd.io/bbolt"
)

func TestCommandSizeLimit(t *testing.T) {
	t.Parallel()
	const max = 1000
	tests := []struct {
		name      string
		cmd       string
		truncated bool
	}{
		{"short", "rm -rf ./x", false},
		{"exactly the limit", strings.Repeat("a", max), false},
		{"one byte over", strings.Repeat("a", max+1), true},
		{"cut inside a character", strings.Repeat("a", max-1) + "é; rm -rf /", true},
		{"dangerous tail", "echo " + strings.Repeat("x", 2*max) + "; rm -rf ~", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(o *Options) { o.MaxCommandBytes = max })
			id := fmt.Sprintf("srq-%d", i)
			f.in.Ingest(srq("g1", "s1", id, tt.cmd, t0))
			r := f.only(t)
			if r.Truncated != tt.truncated || r.State != StatePending {
				t.Fatalf("truncated=%v state=%s, want truncated=%v pending", r.Truncated, r.State, tt.truncated)
			}
			if !tt.truncated {
				if r.Command != tt.cmd || r.CommandBytes != 0 || !r.OneClickApprovable() {
					t.Fatalf("an in-bounds command changed: %+v", r)
				}
				return
			}
			if len(r.Command) > max || !strings.HasPrefix(tt.cmd, r.Command) || !utf8.ValidString(r.Command) || r.CommandBytes != len(tt.cmd) {
				t.Fatalf("kept %d bytes (valid UTF-8 %v) of %d, CommandBytes %d", len(r.Command), utf8.ValidString(r.Command), len(tt.cmd), r.CommandBytes)
			}
			if r.OneClickApprovable() {
				t.Fatal("a truncated command is offered for one-click approval")
			}
			for _, choice := range []string{ChoiceOnce, ChoiceSession, ChoiceAlways} {
				var te *TruncatedError
				if err := f.in.Answer(ctx, r.Key, choice, "window", true); !errors.As(err, &te) || te.Size != len(tt.cmd) {
					t.Fatalf("%s on a truncated command: %v", choice, err)
				} else if choice == ChoiceOnce {
					t.Logf("user sees: %v", err)
				}
			}
			if n := len(f.ans["g1"].sent()); n != 0 {
				t.Fatalf("%d answers sent for a truncated command", n)
			}
			if err := f.in.Answer(ctx, r.Key, ChoiceDeny, "window", false); err != nil {
				t.Fatalf("deny on a truncated command: %v", err)
			}
			if s := f.ans["g1"].sent(); len(s) != 1 || s[0].choice != ChoiceDeny {
				t.Fatalf("sent %+v", s)
			}
		})
	}
}

func TestOtherGatewayFieldsBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ev := event("g1", "s1", wire.ApprovalServerRequest, t0, map[string]any{
		"session_id": "s1", "command": "ls", "description": strings.Repeat("d", 3*MaxDescriptionBytes),
		"pattern_keys": strings.Split(strings.Repeat(strings.Repeat("k", 2*MaxIDBytes)+",", 100), ","), "choices": knownChoices,
	})
	ev.RequestID = "srq-" + strings.Repeat("9", 4*MaxIDBytes)
	// Decoded once, as the service's bus does: every subscriber then
	// holds the same payload, which the inbox must not cut in place.
	if err := ev.DecodeData(); err != nil {
		t.Fatal(err)
	}
	f.in.Ingest(ev)
	r := f.only(t)
	if a, _ := ev.Approval(); len(a.PatternKeys) != 101 || len(a.PatternKeys[0]) != 2*MaxIDBytes {
		t.Fatalf("the inbox cut the event it was given: %d keys, the first %d bytes", len(a.PatternKeys), len(a.PatternKeys[0]))
	}
	if len(r.Description) > MaxDescriptionBytes+100 || len(r.PatternKeys) > MaxPatternKeys || len(r.PatternKeys[0]) > MaxIDBytes || len(r.Key) > 2*MaxIDBytes {
		t.Fatalf("unbounded: description %d, %d pattern keys of %d, key %d bytes", len(r.Description), len(r.PatternKeys), len(r.PatternKeys[0]), len(r.Key))
	}
	if r.State != StateFailed || !strings.Contains(r.Outcome.Error, "id longer than") {
		t.Fatalf("a request with an oversized id is %s (%s), want failed", r.State, r.Outcome.Error)
	}
}

func TestPendingLimitFlood(t *testing.T) {
	t.Parallel()
	const max = 4
	f := newFixture(t, func(o *Options) { o.MaxPending = max })
	for i := range 10 {
		f.in.Ingest(srq("g1", "s1", fmt.Sprintf("srq-%d", i), fmt.Sprintf("junk %d", i), t0))
	}
	f.in.Ingest(srq("g2", "s9", "srq-real", "rm -rf ./real", t0))
	s := f.in.Snapshot()
	live := map[string]int{}
	for _, r := range s.Requests {
		live[r.Gateway]++
	}
	if live["g1"] != max || live["g2"] != 1 {
		t.Fatalf("live per gateway %v, want g1=%d g2=1 (a flood on one gateway must not crowd out another)", live, max)
	}
	if len(s.Floods) != 1 || s.Floods[0].Gateway != "g1" || s.Floods[0].Refused != 6 || !s.Floods[0].Active || s.Floods[0].LastCommand != "junk 9" {
		t.Fatalf("floods %+v", s.Floods)
	}
	msg := s.Floods[0].Message()
	if !strings.Contains(msg, "g1") || !strings.Contains(msg, "6 more were refused") || !strings.Contains(msg, "does not run") {
		t.Fatalf("flood message %q", msg)
	}
	t.Logf("user sees: %s", msg)
	// Every refused arrival was reported (notified and logged), none dropped silently.
	refused := 0
	for len(f.changes) > 0 {
		if c := <-f.changes; c.Kind == ChangeRefused {
			refused++
			if c.Request.State != StateFailed || !strings.Contains(c.Request.Outcome.Error, "refused") {
				t.Fatalf("refused change %+v", c.Request)
			}
		}
	}
	logged, _ := f.store.List(Filter{Gateway: "g1"})
	nlogged := 0
	for _, e := range logged {
		if e.Kind == ChangeRefused {
			nlogged++
		}
	}
	if refused != 6 || nlogged != 6 {
		t.Fatalf("%d refused changes, %d refused audit entries, want 6 each", refused, nlogged)
	}
	// Room again: the flood is over, still shown, and new requests come in.
	if err := f.in.Answer(ctx, "g1/srq/s1/srq-0", ChoiceDeny, "window", false); err != nil {
		t.Fatal(err)
	}
	f.in.Ingest(srq("g1", "s1", "srq-new", "echo new", t0))
	if _, ok := f.in.Get("g1/srq/s1/srq-new"); !ok {
		t.Fatal("a request after the flood was refused")
	}
	s = f.in.Snapshot()
	if len(s.Floods) != 1 || s.Floods[0].Active || s.Floods[0].Refused != 6 {
		t.Fatalf("after the flood: %+v", s.Floods)
	}
}

// TestEventFormFloodPoisonsSession: the 0.18.2 form is answered in arrival
// order, so after Herald refused one of a session's requests, a later one
// cannot be approved (the answer could reach the refused one).
func TestEventFormFloodPoisonsSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) { o.MaxPending = 2 })
	for _, c := range []string{"ls a", "ls b", "rm -rf ./unseen"} {
		f.in.Ingest(legacy("g1", "s1", c, t0))
	}
	if n := len(f.in.Pending()); n != 2 {
		t.Fatalf("%d pending", n)
	}
	for _, k := range []string{"g1/ev/s1/1", "g1/ev/s1/2"} {
		if err := f.in.Answer(ctx, k, ChoiceDeny, "window", false); err != nil {
			t.Fatal(err)
		}
	}
	f.in.Ingest(legacy("g1", "s1", "ls c", t0))
	r := f.get(t, "g1/ev/s1/4")
	var ce *ConflictError
	if err := f.in.Answer(ctx, r.Key, ChoiceOnce, "window", false); r.Conflict == "" || !errors.As(err, &ce) {
		t.Fatalf("approving after a refused arrival in the session: conflict %q, err %v", r.Conflict, err)
	} else {
		t.Logf("user sees: %v", err)
	}
	if r.OneClickApprovable() {
		t.Fatal("one-click approvable")
	}
	// Another session of the same gateway is unaffected.
	f.in.Ingest(legacy("g1", "s2", "ls d", t0))
	if r := f.get(t, "g1/ev/s2/1"); r.Conflict != "" {
		t.Fatalf("other session flagged: %s", r.Conflict)
	}
}

// TestInboxBoundsProperty drives random arrivals, answers, cancels and
// re-deliveries over two gateways and checks after every step that the
// bounds hold and that every distinct arrival was either taken in or
// reported refused.
func TestInboxBoundsProperty(t *testing.T) {
	t.Parallel()
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 7))
			const maxPending, maxEnded = 5, 7
			f := newFixture(t, func(o *Options) { o.MaxPending, o.MaxEnded, o.MaxCommandBytes = maxPending, maxEnded, 64 })
			var ids []string
			distinct := map[string]bool{}
			arrived, refused := map[string]bool{}, map[string]bool{}
			for step := range 400 {
				gw := []string{"g1", "g2"}[rng.IntN(2)]
				switch op := rng.IntN(10); {
				case op < 5 || len(ids) == 0:
					id := fmt.Sprintf("srq-%d", step)
					ids = append(ids, gw+" "+id)
					cmd := strings.Repeat("x", rng.IntN(100))
					distinct[gw+"/srq/s1/"+id] = true
					f.in.Ingest(srq(gw, "s1", id, cmd, f.clk.Now()))
				case op < 7:
					g, id, _ := strings.Cut(ids[rng.IntN(len(ids))], " ")
					f.in.Answer(ctx, g+"/srq/s1/"+id, ChoiceDeny, "window", false)
				case op < 9:
					g, id, _ := strings.Cut(ids[rng.IntN(len(ids))], " ")
					f.in.Ingest(cancel(g, "s1", id, "timeout", f.clk.Now()))
				default:
					f.clk.Advance(time.Minute)
				}
				for len(f.changes) > 0 {
					switch c := <-f.changes; c.Kind {
					case ChangeArrived:
						arrived[c.Request.Key] = true
					case ChangeRefused:
						refused[c.Request.Key] = true
					}
				}
				live, ended := map[string]int{}, map[string]int{}
				for _, r := range f.in.Snapshot().Requests {
					if r.State.Live() {
						live[r.Gateway]++
					} else {
						ended[r.Gateway]++
					}
					if len(r.Command) > 64 {
						t.Fatalf("step %d: command of %d bytes kept", step, len(r.Command))
					}
				}
				f.in.mu.Lock()
				for _, gw := range []string{"g1", "g2"} {
					if f.in.live[gw] != live[gw] || f.in.ended[gw] != ended[gw] {
						t.Fatalf("step %d: %s counted %d live, %d ended; holds %d, %d", step, gw, f.in.live[gw], f.in.ended[gw], live[gw], ended[gw])
					}
				}
				f.in.mu.Unlock()
				for gw, n := range live {
					if n > maxPending || ended[gw] > maxEnded {
						t.Fatalf("step %d: %s holds %d live, %d ended", step, gw, n, ended[gw])
					}
				}
			}
			// Changes can be delivered by the expiry timer's goroutine: wait
			// (bounded) for every arrival to be accounted for.
			guardT := time.NewTimer(guard)
			defer guardT.Stop()
			for len(arrived)+len(refused) < len(distinct) {
				select {
				case c := <-f.changes:
					switch c.Kind {
					case ChangeArrived:
						arrived[c.Request.Key] = true
					case ChangeRefused:
						refused[c.Request.Key] = true
					}
				case <-guardT.C:
					t.Fatalf("%d arrivals, %d refusals for %d distinct requests", len(arrived), len(refused), len(distinct))
				}
			}
			for k := range distinct {
				if arrived[k] == refused[k] {
					t.Fatalf("%s: arrived %v, refused %v: every arrival is exactly one of them", k, arrived[k], refused[k])
				}
			}
			if len(refused) == 0 {
				t.Fatal("the run never hit the pending limit; the property was not exercised")
			}
		})
	}
}

func TestDuplicateIDConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(srq("g1", "s1", "srq-7", "ls -la", t0))
	f.in.Ingest(srq("g1", "s1", "srq-7", "ls -la", t0)) // the same request again: no new one
	if n := len(f.in.Snapshot().Requests); n != 1 {
		t.Fatalf("a re-delivery made %d requests", n)
	}
	f.in.Ingest(srq("g1", "s1", "srq-7", "rm -rf ~", t0))
	a, b := f.get(t, "g1/srq/s1/srq-7"), f.get(t, "g1/srq/s1/srq-7#2")
	if a.Command != "ls -la" || b.Command != "rm -rf ~" {
		t.Fatalf("merged: %q / %q", a.Command, b.Command)
	}
	for _, r := range []Request{a, b} {
		if r.Conflict == "" || !strings.Contains(r.Conflict, "srq-7") || r.OneClickApprovable() {
			t.Fatalf("%s not flagged: %+v", r.Key, r)
		}
		var ce *ConflictError
		if err := f.in.Answer(ctx, r.Key, ChoiceOnce, "window", false); !errors.As(err, &ce) {
			t.Fatalf("approving %s: %v", r.Key, err)
		}
	}
	t.Logf("user sees: %s", a.Conflict)
	if n := len(f.ans["g1"].sent()); n != 0 {
		t.Fatalf("%d answers sent", n)
	}
	// The same conflicting command again is not a third request.
	f.in.Ingest(srq("g1", "s1", "srq-7", "rm -rf ~", t0))
	if n := len(f.in.Snapshot().Requests); n != 2 {
		t.Fatalf("%d requests", n)
	}
	// Deny goes to the id, which settles both.
	if err := f.in.Answer(ctx, b.Key, ChoiceDeny, "window", false); err != nil {
		t.Fatal(err)
	}
	if s := f.ans["g1"].sent(); len(s) != 1 || s[0].requestID != "srq-7" || s[0].choice != ChoiceDeny {
		t.Fatalf("sent %+v", s)
	}
	if a := f.get(t, a.Key); a.State != StateCancelled || a.Outcome.Reason != CancelResolvedElsewhere {
		t.Fatalf("the sibling is %s/%s after the id was answered", a.State, a.Outcome.Reason)
	}
}

// TestEpochRelistIsNew: a request listed under a new replay epoch is a new
// request, even with an old id, and the old one is withdrawn.
func TestEpochRelistIsNew(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"ls -la", "rm -rf ~"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			old := srq("g1", "s1", "srq-1", "ls -la", t0)
			old.Epoch = "e1"
			f.in.Ingest(old)
			relisted := srq("g1", "s1", "srq-1", cmd, t0.Add(time.Minute))
			relisted.Epoch, relisted.Replayed = "e2", true
			f.in.Ingest(relisted)
			o, n := f.get(t, "g1/srq/s1/srq-1"), f.get(t, "g1/srq/s1/srq-1@e2")
			if o.State != StateCancelled || !strings.Contains(o.Outcome.Detail, "restarted") {
				t.Fatalf("old request %s (%s), want withdrawn", o.State, o.Outcome.Detail)
			}
			if n.State != StatePending || n.Command != cmd || n.Conflict != "" || n.Epoch != "e2" || !n.ReceivedAt.Equal(t0.Add(time.Minute)) {
				t.Fatalf("new request %+v", n)
			}
			if err := f.in.Answer(ctx, n.Key, ChoiceOnce, "window", false); err != nil {
				t.Fatal(err)
			}
			// Same epoch again: a re-delivery, not another request.
			f.in.Ingest(relisted)
			if k := len(f.in.Snapshot().Requests); k != 2 {
				t.Fatalf("%d requests", k)
			}
		})
	}
}

func TestBoltStoreKeepsDecisionsOverFlood(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opt  StoreOptions
	}{
		{"by count", StoreOptions{MaxEntries: 40, MaxAge: 24 * time.Hour}},
		{"by bytes", StoreOptions{MaxEntries: 100000, MaxBytes: 24 << 10, MaxAge: 24 * time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := clock.NewFake(t0)
			tt.opt.Clock = clk
			path := filepath.Join(t.TempDir(), "a.db")
			s := openBolt(t, path, tt.opt)
			for i := range 10 {
				s.Record(Entry{At: clk.Now(), Kind: ChangeArrived, Key: fmt.Sprint("real", i), State: StatePending, Command: fmt.Sprint("deploy ", i)})
				s.Record(Entry{At: clk.Now(), Kind: ChangeUpdated, Key: fmt.Sprint("real", i), State: StateResolved, Choice: "once", Surface: "window", Command: fmt.Sprint("deploy ", i)})
			}
			junk := strings.Repeat("j", 900)
			for i := range 300 {
				clk.Advance(time.Second)
				if err := s.Record(Entry{At: clk.Now(), Kind: ChangeArrived, Key: fmt.Sprint("junk", i), State: StatePending, Command: junk}); err != nil {
					t.Fatal(err)
				}
			}
			check := func(s *BoltStore) {
				es, err := s.List(Filter{})
				if err != nil {
					t.Fatal(err)
				}
				decisions, size := 0, 0
				for i, e := range es {
					if e.State == StateResolved {
						decisions++
					}
					if i > 0 && e.Seq <= es[i-1].Seq {
						t.Fatalf("out of order at %d", i)
					}
					b, _ := jsonSize(e)
					size += b
				}
				if decisions != 10 {
					t.Fatalf("%d of 10 decisions survived a flood of junk", decisions)
				}
				if len(es) > 100000 || (tt.opt.MaxEntries < 1000 && len(es) > tt.opt.MaxEntries) || (tt.opt.MaxBytes > 0 && int64(size) > tt.opt.MaxBytes) {
					t.Fatalf("kept %d entries, %d bytes: over the bound", len(es), size)
				}
				if es[len(es)-1].Key != "junk299" {
					t.Fatalf("newest entry %s", es[len(es)-1].Key)
				}
				t.Logf("kept %d entries (%d bytes), all 10 decisions", len(es), size)
			}
			check(s)
			s.Close()
			// The accounting survives a reopen.
			s = openBolt(t, path, tt.opt)
			defer s.Close()
			s.Record(Entry{At: clk.Now(), Kind: ChangeArrived, Key: "junk299", Command: junk})
			check(s)
			// Decisions alone over the bound: the oldest decision goes.
			for i := range 60 {
				s.Record(Entry{At: clk.Now(), Kind: ChangeUpdated, Key: fmt.Sprint("d", i), State: StateResolved, Choice: "deny", Surface: "cli", Command: junk})
			}
			es, _ := s.List(Filter{})
			if es[0].Key == "real0" {
				t.Fatal("decisions grow past the bound")
			}
		})
	}
}

func jsonSize(e Entry) (int, error) {
	b, err := json.Marshal(e)
	return len(b) + 8, err
}

// TestOldHistoryDecisionsKeptOverFlood: a history written before the
// tiers existed has its decisions moved on open, so a flood after the
// upgrade does not wipe them either.
func TestOldHistoryDecisionsKeptOverFlood(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(entriesBucket)
		if err != nil {
			return err
		}
		for _, e := range []Entry{
			{At: t0, Kind: ChangeArrived, Key: "k1", State: StatePending, Command: "deploy"},
			{At: t0, Kind: ChangeUpdated, Key: "k1", State: StateResolved, Choice: "once", Surface: "window"},
		} {
			seq, _ := b.NextSequence()
			e.Seq = seq
			v, _ := json.Marshal(e)
			if err := b.Put(seqKey(seq), v); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(t0)
	s := openBolt(t, path, StoreOptions{MaxEntries: 20, MaxAge: 24 * time.Hour, Clock: clk})
	defer s.Close()
	for i := range 50 {
		s.Record(Entry{At: clk.Now(), Kind: ChangeArrived, Key: fmt.Sprint("junk", i), State: StatePending, Command: "junk"})
	}
	es, _ := s.List(Filter{Key: "k1"})
	if len(es) != 1 || es[0].State != StateResolved || es[0].Seq != 2 {
		t.Fatalf("the old decision after a flood: %+v", es)
	}
	if all, _ := s.List(Filter{}); len(all) != 20 || all[0].Key != "k1" {
		t.Fatalf("kept %d entries, first %s", len(all), all[0].Key)
	}
}

// TestPromptRelistedUnderNewEpochIsNew: a question asked under an old id
// after a gateway restart is a new question, not a re-delivery.
func TestPromptRelistedUnderNewEpochIsNew(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	old := promptEvent("g1", "s1", "clarify", "", "srq-1", t0)
	old.Epoch = "e1"
	f.in.Ingest(old)
	relisted := promptEvent("g1", "s1", "clarify", "", "srq-1", t0.Add(time.Minute))
	relisted.Epoch = "e2"
	f.in.Ingest(relisted)
	rs := f.in.Snapshot().Requests
	if len(rs) != 2 || rs[0].State != StateCancelled || rs[1].State != StatePending || rs[1].Epoch != "e2" {
		t.Fatalf("%d requests: %+v", len(rs), rs)
	}
}

// TestUnseenCommandOnlyDenied: an approval that arrives without its
// command (0.18.2 sent it to another client; a stream lost it) offers and
// accepts only deny, in both dialects, whatever the gateway offers.
func TestUnseenCommandOnlyDenied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ev   wire.Event
	}{
		{"event form", legacy("g1", "s1", "", t0)},
		{"server request", srq("g1", "s1", "srq-1", "", t0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.in.Ingest(tt.ev)
			r := f.only(t)
			if len(r.Choices) != 1 || r.Choices[0] != ChoiceDeny || r.OneClickApprovable() {
				t.Fatalf("choices %v (one-click %v), want deny only", r.Choices, r.OneClickApprovable())
			}
			for _, choice := range []string{ChoiceOnce, ChoiceSession, ChoiceAlways} {
				if err := f.in.Answer(ctx, r.Key, choice, "window", true); err == nil {
					t.Fatalf("%s was accepted for a command nobody saw", choice)
				}
			}
			if got, _ := f.in.Get(r.Key); got.State != StatePending {
				t.Fatalf("refused answers changed the request: %s", got.State)
			}
		})
	}
}
