package approval

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
	bolt "go.etcd.io/bbolt"
)

// onDisk lists the keys of the entries written to the file, bypassing
// List (which writes the waiting batch first).
func onDisk(t *testing.T, s *BoltStore) []string {
	t.Helper()
	var keys []string
	err := s.db.View(func(tx *bolt.Tx) error {
		for _, name := range tierBuckets {
			if err := tx.Bucket(name).ForEach(func(_, v []byte) error {
				keys = append(keys, string(v))
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func (s *BoltStore) writes() int {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.txs
}

// TestBoltStoreBatchesRefusals: a flood of records that hold no decision
// is written in a few transactions (one fsync each), in order, none lost;
// a decision is on disk when Record returns, after what came before it.
func TestBoltStoreBatchesRefusals(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	s := openBolt(t, filepath.Join(t.TempDir(), "a.db"), StoreOptions{Clock: clk})
	defer s.Close()
	const flood = 2000
	cmd := strings.Repeat("x", 100)
	for i := range flood {
		kind := ChangeRefused
		if i%3 == 0 {
			kind = ChangeArrived
		}
		if err := s.Record(Entry{At: clk.Now(), Kind: kind, Key: fmt.Sprint("junk", i), State: StateFailed, Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	if n, max := s.writes(), flood/maxBatch; n > max {
		t.Fatalf("%d transactions for %d refusals, want at most %d", n, flood, max)
	}
	// A decision goes to disk at once, behind every waiting refusal.
	if err := s.Record(Entry{At: clk.Now(), Kind: ChangeUpdated, Key: "real", State: StateResolved, Choice: ChoiceDeny, Surface: "cli", Command: "rm -rf ./real"}); err != nil {
		t.Fatal(err)
	}
	if n := len(onDisk(t, s)); n != flood+1 {
		t.Fatalf("%d entries on disk after a decision, want %d: the decision was not written at once", n, flood+1)
	}
	es, err := s.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range es[:flood] {
		if e.Key != fmt.Sprint("junk", i) || (i > 0 && e.Seq <= es[i-1].Seq) {
			t.Fatalf("entry %d is %s seq %d: out of order", i, e.Key, e.Seq)
		}
	}
	if es[flood].Key != "real" {
		t.Fatalf("last entry %s, want the decision", es[flood].Key)
	}
	t.Logf("%d records in %d transactions", flood+1, s.writes())
}

// TestBoltStoreBatchDelay: a lone arrival is written BatchDelay after it
// was recorded, without any other call; Close writes what still waits.
func TestBoltStoreBatchDelay(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	path := filepath.Join(t.TempDir(), "a.db")
	s := openBolt(t, path, StoreOptions{Clock: clk, BatchDelay: time.Second})
	wrote := make(chan struct{}, 8)
	s.onWrite = func() { wrote <- struct{}{} }
	if err := s.Record(Entry{At: clk.Now(), Kind: ChangeArrived, Key: "a1", State: StatePending, Command: "ls"}); err != nil {
		t.Fatal(err)
	}
	clk.BlockUntil(1) // the batcher's timer is armed
	if n := len(onDisk(t, s)); n != 0 {
		t.Fatalf("%d entries on disk before the delay", n)
	}
	clk.Advance(time.Second)
	select {
	case <-wrote:
	case <-time.After(10 * time.Second):
		t.Fatal("the batch was not written after its delay")
	}
	if n := len(onDisk(t, s)); n != 1 {
		t.Fatalf("%d entries on disk after the delay, want 1", n)
	}
	// One more waits; Close writes it.
	if err := s.Record(Entry{At: clk.Now(), Kind: ChangeRefused, Key: "a2", State: StateFailed, Command: "junk"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(Entry{At: clk.Now(), Kind: ChangeRefused, Key: "a3"}); err == nil {
		t.Fatal("Record after Close succeeded")
	}
	s = openBolt(t, path, StoreOptions{Clock: clk})
	defer s.Close()
	if got := seqs(t, s, Filter{}); len(got) != 2 {
		t.Fatalf("after reopen %v, want both entries", got)
	}
}

// BenchmarkAuditRefusals: what the inbox's consumer pays to log one
// refused request during a flood (it used to be one fsync each, ~45/s).
func BenchmarkAuditRefusals(b *testing.B) {
	s, err := OpenStore(filepath.Join(b.TempDir(), "a.db"), StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	cmd := strings.Repeat("x", 20<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := s.Record(Entry{At: time.Now(), Kind: ChangeRefused, Key: fmt.Sprint("junk", i), State: StateFailed, Command: cmd}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// TestRefusalKeepsCommandBeginning: a refused 20 KB command is logged by
// its beginning and size, marked truncated, so logging a flood stays cheap.
func TestRefusalKeepsCommandBeginning(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) { o.MaxPending = 1 })
	big := "echo " + strings.Repeat("A=b -p ", 20<<10/7)
	f.in.Ingest(srq("g1", "s1", "srq-0", "ls", t0))
	f.in.Ingest(srq("g1", "s1", "srq-1", big, t0))
	es, err := f.store.List(Filter{Gateway: "g1"})
	if err != nil {
		t.Fatal(err)
	}
	var got *Entry
	for i := range es {
		if es[i].Kind == ChangeRefused {
			got = &es[i]
		}
	}
	if got == nil || len(got.Command) > refusedCommandBytes || !strings.HasPrefix(big, got.Command) {
		t.Fatalf("refusal entry %+v", got)
	}
	for len(f.changes) > 0 {
		if c := <-f.changes; c.Kind == ChangeRefused && (!c.Request.Truncated || c.Request.CommandBytes != len(big)) {
			t.Fatalf("refused change: truncated %v, %d bytes, want %d", c.Request.Truncated, c.Request.CommandBytes, len(big))
		}
	}
}

// TestTransportRefusalsShownAsFlood: a wire.Refused event (the gateway
// link's queue or open-request bound) counts every request it stands for
// into the gateway's flood, is logged, and when it stood for an approval
// answered in arrival order, makes that session's later approvals
// deny-only.
func TestTransportRefusalsShownAsFlood(t *testing.T) {
	t.Parallel()
	refused := func(session, method string, n int, unkeyed, all bool) wire.Event {
		return event("g1", session, wire.Refused, t0, wire.RefusedPayload{Method: method, Count: n, Reason: "Herald's queue for gateway g1 was full", LastCommand: "rm -rf ./junk", Unkeyed: unkeyed, AllSessions: all})
	}
	tests := []struct {
		name     string
		ev       wire.Event
		conflict map[string]bool // session of a later legacy approval: deny-only
	}{
		{"server requests", refused("s1", wire.ApprovalServerRequest, 37, false, false), map[string]bool{"s1": false, "s2": false}},
		{"unkeyed events", refused("s1", wire.ApprovalRequest, 37, true, false), map[string]bool{"s1": true, "s2": false}},
		{"unkeyed, all sessions", refused("", wire.ApprovalRequest, 37, true, true), map[string]bool{"s1": true, "s2": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.in.Ingest(tt.ev)
			s := f.in.Snapshot()
			if len(s.Floods) != 1 || s.Floods[0].Refused != 37 || s.Floods[0].Bound == "" {
				t.Fatalf("floods %+v", s.Floods)
			}
			msg := s.Floods[0].Message()
			if !strings.Contains(msg, "37 requests were refused") || !strings.Contains(msg, "queue") {
				t.Fatalf("flood message %q", msg)
			}
			es, _ := f.store.List(Filter{})
			if len(es) != 1 || es[0].Kind != ChangeRefused || !strings.Contains(es[0].Error, "37 requests") || es[0].Command != "rm -rf ./junk" {
				t.Fatalf("audit %+v", es)
			}
			if c := <-f.changes; c.Kind != ChangeRefused || c.Refused != 37 {
				t.Fatalf("change %s standing for %d, want refused, 37", c.Kind, c.Refused)
			}
			for sid, deny := range tt.conflict {
				f.in.Ingest(legacy("g1", sid, "echo later", t0))
				var r Request
				for _, x := range f.in.Pending() {
					if x.Session == sid {
						r = x
					}
				}
				if (r.Conflict != "") != deny {
					t.Fatalf("session %s: conflict %q, want deny-only %v", sid, r.Conflict, deny)
				}
			}
		})
	}
}

// TestTransportRefusedPromptKind: refused prompts are logged as prompts.
func TestTransportRefusedPromptKind(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(event("g1", "s1", wire.Refused, t0, wire.RefusedPayload{Method: wire.SudoServerRequest, Count: 2, Reason: "queue full"}))
	es, _ := f.store.List(Filter{})
	if len(es) != 1 || es[0].RequestKind != KindSudo || es[0].Dialect != DialectServerRequest {
		t.Fatalf("audit %+v", es)
	}
}

// TestPoisonedSessionsBounded: refusals of arrival-order approvals in
// endless sessions cannot grow the set of deny-only sessions; past its
// bound the whole gateway's arrival-order approvals are deny-only.
func TestPoisonedSessionsBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *Options) { o.MaxPending, o.Notify = 1, nil })
	f.in.Ingest(legacy("g1", "s0", "ls", t0)) // fills the gateway
	for i := range maxPoisoned + 50 {
		f.in.Ingest(legacy("g1", fmt.Sprint("junk-", i), "rm -rf ./junk", t0))
	}
	var n int
	f.in.do(func(time.Time) { n = len(f.in.order.refused) })
	if n > maxPoisoned+1 {
		t.Fatalf("%d poisoned sessions, bound %d", n, maxPoisoned)
	}
	if err := f.in.Answer(ctx, f.in.Pending()[0].Key, ChoiceDeny, "cli", false); err != nil {
		t.Fatal(err)
	}
	f.in.Ingest(legacy("g1", "fresh", "echo later", t0))
	for _, r := range f.in.Pending() {
		if r.Session == "fresh" && r.Conflict == "" {
			t.Fatal("a later arrival-order approval is approvable after refusals past the bound")
		}
	}
}
