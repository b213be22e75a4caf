package approval

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	bolt "go.etcd.io/bbolt"
)

// Defaults for StoreOptions.
const (
	DefaultMaxAge     = 90 * 24 * time.Hour
	DefaultMaxEntries = 20000
)

// StoreOptions bounds a BoltStore.
type StoreOptions struct {
	// MaxAge drops entries older than this on every Record (default
	// DefaultMaxAge).
	MaxAge time.Duration
	// MaxEntries keeps at most this many entries, dropping the oldest
	// (default DefaultMaxEntries).
	MaxEntries int
	// Clock tells the age of entries (default clock.Real).
	Clock clock.Clock
}

// BoltStore is the audit log in a bbolt file. Entries are kept in arrival
// order and pruned from the oldest.
type BoltStore struct {
	db  *bolt.DB
	opt StoreOptions
}

var entriesBucket = []byte("entries")

// OpenStore opens (or creates) the audit log at path.
func OpenStore(path string, opt StoreOptions) (*BoltStore, error) {
	if opt.MaxAge <= 0 {
		opt.MaxAge = DefaultMaxAge
	}
	if opt.MaxEntries <= 0 {
		opt.MaxEntries = DefaultMaxEntries
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
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(entriesBucket)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot prepare the approval history %s: %w", path, err)
	}
	return &BoltStore{db: db, opt: opt}, nil
}

// Record appends e and prunes by age and count.
func (s *BoltStore) Record(e Entry) error {
	e = e.sanitized()
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(entriesBucket)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		e.Seq = seq
		v, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if err := b.Put(seqKey(seq), v); err != nil {
			return err
		}
		return s.trim(b, s.opt.Clock.Now().Add(-s.opt.MaxAge))
	})
}

// List returns the matching entries, oldest first.
func (s *BoltStore) List(f Filter) ([]Entry, error) {
	var out []Entry
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(entriesBucket).Cursor()
		for k, v := c.Last(); k != nil && (f.Limit <= 0 || len(out) < f.Limit); k, v = c.Prev() {
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("approval history entry %d is damaged: %w", binary.BigEndian.Uint64(k), err)
			}
			if f.match(e) {
				out = append(out, e)
			}
		}
		return nil
	})
	slices.Reverse(out)
	return out, err
}

// Prune deletes entries older than before.
func (s *BoltStore) Prune(before time.Time) error {
	return s.db.Update(func(tx *bolt.Tx) error { return s.trim(tx.Bucket(entriesBucket), before) })
}

// trim deletes from the oldest end while there are more than MaxEntries
// or the oldest is before cutoff. Keys stay contiguous because deletion
// only happens at that end, so the count is last - first + 1.
func (s *BoltStore) trim(b *bolt.Bucket, cutoff time.Time) error {
	c := b.Cursor()
	k, _ := c.Last()
	if k == nil {
		return nil
	}
	last := binary.BigEndian.Uint64(k)
	for k, v := c.First(); k != nil; k, v = c.First() {
		count := last - binary.BigEndian.Uint64(k) + 1
		var e Entry
		if count <= uint64(s.opt.MaxEntries) && json.Unmarshal(v, &e) == nil && !e.At.Before(cutoff) {
			return nil
		}
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the file.
func (s *BoltStore) Close() error { return s.db.Close() }

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }
