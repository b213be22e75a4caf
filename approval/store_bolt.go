package approval

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	bolt "go.etcd.io/bbolt"
)

// Defaults for StoreOptions.
const (
	DefaultMaxAge     = 90 * 24 * time.Hour
	DefaultMaxEntries = 20000
	// DefaultMaxBytes bounds the history file's records (keys and
	// values; the file itself can be somewhat larger).
	DefaultMaxBytes = 32 << 20
)

// StoreOptions bounds a BoltStore.
type StoreOptions struct {
	// MaxAge drops entries older than this on every Record (default
	// DefaultMaxAge).
	MaxAge time.Duration
	// MaxEntries keeps at most this many entries (default
	// DefaultMaxEntries).
	MaxEntries int
	// MaxBytes keeps at most this many bytes of entries (default
	// DefaultMaxBytes).
	MaxBytes int64
	// Clock tells the age of entries and times batches (default
	// clock.Real).
	Clock clock.Clock
	// BatchDelay is how long a record that holds no decision (an
	// arrival, refusal, expiry or withdrawal) may wait to be written
	// with others in one transaction, one fsync (default
	// DefaultBatchDelay). Decisions are written at once, together with
	// whatever waits before them.
	BatchDelay time.Duration
}

// DefaultBatchDelay is StoreOptions.BatchDelay's default. A batch is also
// written once it holds maxBatch entries or maxBatchBytes.
const DefaultBatchDelay = 200 * time.Millisecond

const (
	maxBatch      = 512
	maxBatchBytes = 4 << 20
)

// BoltStore is the audit log in a bbolt file. Entries are kept in arrival
// order. Over MaxEntries or MaxBytes it drops the oldest entries that
// record no decision (arrivals, expiries, withdrawals) before any that do
// (an answer sent or confirmed, a dismissal), so a flood of junk requests
// cannot wipe out the record of what the user approved or denied. Past
// MaxAge everything goes.
//
// Each transaction costs an fsync, so records that hold no decision wait
// up to BatchDelay to be written together (a flood of refused requests
// would otherwise be logged at a few dozen a second); a decision is
// written and synced before Record returns, after everything recorded
// before it. List, Prune and Close write what waits first. Recording an
// entry that holds no decision never waits for the disk (unless writes
// fall far behind): the notifier of a new approval is not held up by a
// batch being synced.
type BoltStore struct {
	db  *bolt.DB
	opt StoreOptions

	// wmu orders writes; it guards sizes, txs and onWrite.
	wmu   sync.Mutex
	sizes [2]tally // by tier: junk, decisions
	// mu guards the batch and closed; it is never held across a write.
	mu sync.Mutex
	// batch holds sanitized entries not yet written (batchBytes their
	// commands' and texts' size); batchErr is why the last write from
	// the timer failed, returned by the next Record.
	batch      []Entry
	batchBytes int
	batchErr   error
	// batchAt is the clock when the latest waiting entry was recorded:
	// the age cut is taken from then, as if written at once.
	batchAt time.Time
	closed  bool
	// txs counts write transactions (tests); onWrite, when set (tests),
	// is called after each, under wmu.
	txs     int
	onWrite func()
	kick    chan struct{}
	now     chan struct{}
	done    chan struct{}
	stopped chan struct{}
}

type tally struct {
	count int
	bytes int64
}

// Entries live in two buckets, one per tier, under one sequence (the
// entries bucket's), so List merges them back in order. Files written
// before the split have everything in the entries bucket.
var (
	entriesBucket   = []byte("entries")
	decisionsBucket = []byte("decisions")
	tierBuckets     = [2][]byte{entriesBucket, decisionsBucket}
)

const (
	tierJunk     = 0
	tierDecision = 1
)

// tierOf says which bucket an entry goes to.
func tierOf(e Entry) int {
	if e.Choice != "" || e.Surface != "" || e.State == StateResolved {
		return tierDecision
	}
	return tierJunk
}

// OpenStore opens (or creates) the audit log at path.
func OpenStore(path string, opt StoreOptions) (*BoltStore, error) {
	if opt.MaxAge <= 0 {
		opt.MaxAge = DefaultMaxAge
	}
	if opt.MaxEntries <= 0 {
		opt.MaxEntries = DefaultMaxEntries
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.Clock == nil {
		opt.Clock = clock.Real{}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the folder for the approval history %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("the approval history %s is in use by another process; quit the other Herald and try again", path)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open the approval history %s (move the file aside to start a new one): %w", path, err)
	}
	// The history keeps commands as sent (evidence), which may hold
	// secrets: it is private to the user even if it was created otherwise.
	if err := os.Chmod(path, 0o600); err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot make the approval history %s private to you (chmod 600 it, or move it aside): %w", path, err)
	}
	if opt.BatchDelay <= 0 {
		opt.BatchDelay = DefaultBatchDelay
	}
	s := &BoltStore{db: db, opt: opt, kick: make(chan struct{}, 1), now: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := splitTiers(tx); err != nil {
			return err
		}
		for tier, name := range tierBuckets {
			b, err := tx.CreateBucketIfNotExists(name)
			if err != nil {
				return err
			}
			b.ForEach(func(k, v []byte) error {
				s.sizes[tier].count++
				s.sizes[tier].bytes += int64(len(k) + len(v))
				return nil
			})
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot prepare the approval history %s: %w", path, err)
	}
	go s.batcher()
	return s, nil
}

// Record appends e and prunes by age, count and size. An entry that
// records a decision is on disk when Record returns; any other may wait
// up to BatchDelay (see BoltStore).
func (s *BoltStore) Record(e Entry) error {
	e = e.sanitized()
	if tierOf(e) == tierDecision {
		s.wmu.Lock()
		defer s.wmu.Unlock()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("the approval history is closed")
	}
	err := s.batchErr
	s.batchErr = nil
	s.batchAt = s.opt.Clock.Now()
	s.batch = append(s.batch, e)
	if tierOf(e) == tierDecision {
		batch, at := s.takeLocked()
		s.mu.Unlock()
		if werr := s.writeBatch(batch, at); werr != nil {
			return werr
		}
		return err
	}
	s.batchBytes += len(e.Command) + len(e.MaskedCommand) + len(e.Description) + len(e.Detail) + len(e.Error) + len(e.Question) + 256
	n, size := len(s.batch), s.batchBytes
	s.mu.Unlock()
	signal := func(ch chan struct{}) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	switch {
	case n >= 4*maxBatch || size >= 4*maxBatchBytes:
		// Writes fall far behind: wait for one, so memory stays bounded.
		if werr := s.write(); werr != nil {
			return werr
		}
	case batchFull(n, size):
		signal(s.now) // the batcher writes it now
	case n == 1:
		signal(s.kick) // the batcher times this batch
	}
	return err
}

// batcher writes a batch BatchDelay after its first entry.
func (s *BoltStore) batcher() {
	defer close(s.stopped)
	t := s.opt.Clock.NewTimer(time.Hour)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-s.kick:
			t.Reset(s.opt.BatchDelay)
		case <-t.C():
			s.writeAsync()
		case <-s.now:
			// A Record that found the batch full after this loop took the
			// last signal, but before the batch was taken, signals again:
			// write only a batch that is full now, not that one's tail.
			if s.full() {
				s.writeAsync()
			}
		}
	}
}

// full reports whether the waiting batch is due to be written at once.
func (s *BoltStore) full() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return batchFull(len(s.batch), s.batchBytes)
}

// batchFull reports whether a batch of n entries of size bytes is due to
// be written at once.
func batchFull(n, size int) bool { return n >= maxBatch || size >= maxBatchBytes }

// writeAsync writes the batch for the batcher; a failure is returned by
// the next Record.
func (s *BoltStore) writeAsync() {
	if err := s.write(); err != nil {
		s.mu.Lock()
		s.batchErr = err
		s.mu.Unlock()
	}
}

// takeLocked takes the waiting entries out of the batch. Caller holds mu
// (and wmu, so batches are written in the order they are taken).
func (s *BoltStore) takeLocked() ([]Entry, time.Time) {
	batch, at := s.batch, s.batchAt
	s.batch, s.batchBytes = nil, 0
	return batch, at
}

// write writes the waiting entries.
func (s *BoltStore) write() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	batch, at := s.takeLocked()
	s.mu.Unlock()
	return s.writeBatch(batch, at)
}

// writeBatch writes entries in one transaction, in order, and prunes as
// of now. Caller holds wmu. On failure they are dropped (the error says
// so): keeping them would grow memory while the disk refuses writes.
func (s *BoltStore) writeBatch(batch []Entry, now time.Time) error {
	if len(batch) == 0 {
		return nil
	}
	sizes := s.sizes
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, e := range batch {
			seq, err := tx.Bucket(entriesBucket).NextSequence()
			if err != nil {
				return err
			}
			e.Seq = seq
			v, err := json.Marshal(e)
			if err != nil {
				return err
			}
			tier := tierOf(e)
			k := seqKey(seq)
			if err := tx.Bucket(tierBuckets[tier]).Put(k, v); err != nil {
				return err
			}
			sizes[tier].count++
			sizes[tier].bytes += int64(len(k) + len(v))
		}
		return s.trim(tx, now.Add(-s.opt.MaxAge), &sizes)
	})
	if err != nil {
		if len(batch) > 1 {
			return fmt.Errorf("%d entries were not written: %w", len(batch), err)
		}
		return err
	}
	s.sizes = sizes
	s.txs++
	if s.onWrite != nil {
		s.onWrite()
	}
	return nil
}

// Flush writes the entries that wait for their batch.
func (s *BoltStore) Flush() error { return s.write() }

// List returns the matching entries, oldest first, including those that
// wait for their batch.
func (s *BoltStore) List(f Filter) ([]Entry, error) {
	if err := s.Flush(); err != nil {
		return nil, err
	}
	var out []Entry
	err := s.db.View(func(tx *bolt.Tx) error {
		var cur [2]*bolt.Cursor
		var k, v [2][]byte
		for t, name := range tierBuckets {
			cur[t] = tx.Bucket(name).Cursor()
			k[t], v[t] = cur[t].Last()
		}
		for f.Limit <= 0 || len(out) < f.Limit {
			// Newest first across both tiers.
			t := tierJunk
			switch {
			case k[0] == nil && k[1] == nil:
				return nil
			case k[0] == nil || (k[1] != nil && bytes.Compare(k[1], k[0]) > 0):
				t = tierDecision
			}
			var e Entry
			if err := json.Unmarshal(v[t], &e); err != nil {
				return fmt.Errorf("approval history entry %d is damaged: %w", binary.BigEndian.Uint64(k[t]), err)
			}
			if f.match(e) {
				out = append(out, e)
			}
			k[t], v[t] = cur[t].Prev()
		}
		return nil
	})
	slices.Reverse(out)
	return out, err
}

// Prune deletes entries older than before.
func (s *BoltStore) Prune(before time.Time) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	batch, at := s.takeLocked()
	s.mu.Unlock()
	if err := s.writeBatch(batch, at); err != nil {
		return err
	}
	sizes := s.sizes
	err := s.db.Update(func(tx *bolt.Tx) error { return s.trim(tx, before, &sizes) })
	if err == nil {
		s.sizes = sizes
	}
	return err
}

// trim deletes every entry older than cutoff, then, while the log holds
// more than MaxEntries or MaxBytes, the oldest entry that records no
// decision, and only when none is left the oldest decision. Deletion only
// happens at each bucket's oldest end.
func (s *BoltStore) trim(tx *bolt.Tx, cutoff time.Time, sizes *[2]tally) error {
	del := func(t int, c *bolt.Cursor, k, v []byte) error {
		if err := c.Delete(); err != nil {
			return err
		}
		sizes[t].count--
		sizes[t].bytes -= int64(len(k) + len(v))
		return nil
	}
	for t, name := range tierBuckets {
		c := tx.Bucket(name).Cursor()
		for k, v := c.First(); k != nil; k, v = c.First() {
			var e Entry
			if json.Unmarshal(v, &e) == nil && !e.At.Before(cutoff) {
				break
			}
			if err := del(t, c, k, v); err != nil {
				return err
			}
		}
	}
	over := func() bool {
		return sizes[0].count+sizes[1].count > s.opt.MaxEntries || sizes[0].bytes+sizes[1].bytes > s.opt.MaxBytes
	}
	for _, t := range []int{tierJunk, tierDecision} {
		c := tx.Bucket(tierBuckets[t]).Cursor()
		for k, v := c.First(); k != nil && over(); k, v = c.First() {
			if err := del(t, c, k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close writes what waits for its batch and closes the file.
func (s *BoltStore) Close() error {
	s.wmu.Lock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wmu.Unlock()
		return nil
	}
	s.closed = true
	batch, at := s.takeLocked()
	s.mu.Unlock()
	werr := s.writeBatch(batch, at)
	s.wmu.Unlock()
	close(s.done)
	<-s.stopped
	if err := s.db.Close(); err != nil {
		return err
	}
	return werr
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// splitTiers moves the decisions of a history written before the tiers
// existed (everything in the entries bucket) to the decisions bucket,
// once, so that pruning keeps them over junk there too.
func splitTiers(tx *bolt.Tx) error {
	if tx.Bucket(decisionsBucket) != nil {
		return nil
	}
	dec, err := tx.CreateBucket(decisionsBucket)
	if err != nil {
		return err
	}
	b := tx.Bucket(entriesBucket)
	if b == nil {
		return nil
	}
	var move [][2][]byte
	err = b.ForEach(func(k, v []byte) error {
		var e Entry
		if json.Unmarshal(v, &e) == nil && tierOf(e) == tierDecision {
			move = append(move, [2][]byte{slices.Clone(k), slices.Clone(v)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, kv := range move {
		if err := dec.Put(kv[0], kv[1]); err != nil {
			return err
		}
		if err := b.Delete(kv[0]); err != nil {
			return err
		}
	}
	return nil
}
