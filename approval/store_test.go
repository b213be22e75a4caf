package approval

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
)

func openBolt(t *testing.T, path string, opt StoreOptions) *BoltStore {
	t.Helper()
	s, err := OpenStore(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func seqs(t *testing.T, s Store, f Filter) []uint64 {
	t.Helper()
	es, err := s.List(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, e := range es {
		out = append(out, e.Seq)
	}
	return out
}

func TestStoreContract(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) Store{
		"memory": func(*testing.T) Store { return NewMemoryStore() },
		"bolt": func(t *testing.T) Store {
			return openBolt(t, filepath.Join(t.TempDir(), "history", "approvals.db"), StoreOptions{Clock: clock.NewFake(t0)})
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			defer s.Close()
			for i := range 6 {
				e := Entry{At: t0.Add(time.Duration(i) * time.Minute), Kind: ChangeUpdated, Key: fmt.Sprintf("k%d", i%2), Gateway: []string{"g1", "g2", "g1"}[i%3], State: StatePending}
				if err := s.Record(e); err != nil {
					t.Fatal(err)
				}
			}
			tests := []struct {
				f    Filter
				want []uint64
			}{
				{Filter{}, []uint64{1, 2, 3, 4, 5, 6}},
				{Filter{Key: "k1"}, []uint64{2, 4, 6}},
				{Filter{Gateway: "g2"}, []uint64{2, 5}},
				{Filter{Since: t0.Add(4 * time.Minute)}, []uint64{5, 6}},
				{Filter{Limit: 2}, []uint64{5, 6}},
				{Filter{Key: "k0", Limit: 2}, []uint64{3, 5}},
			}
			for _, tt := range tests {
				if got := seqs(t, s, tt.f); !slices.Equal(got, tt.want) {
					t.Errorf("List(%+v) = %v, want %v", tt.f, got, tt.want)
				}
			}
			if err := s.Prune(t0.Add(2 * time.Minute)); err != nil {
				t.Fatal(err)
			}
			if got := seqs(t, s, Filter{}); !slices.Equal(got, []uint64{3, 4, 5, 6}) {
				t.Errorf("after Prune: %v", got)
			}
		})
	}
}

// The audit log is evidence: the command is kept as sent (so masking can
// never lose what ran) with a masked copy for display-only views, and the
// error text holds no credentials.
func TestStoresKeepCommandScrubErrors(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]Store{
		"memory": NewMemoryStore(),
		"bolt":   openBolt(t, filepath.Join(t.TempDir(), "a.db"), StoreOptions{Clock: clock.NewFake(t0)}),
	} {
		defer s.Close()
		err := s.Record(Entry{
			At: t0, Kind: ChangeArrived, Key: "k",
			Command: "curl -H 'Authorization: Bearer abcdef123456' https://u:pw@host",
			Error:   "dial wss://gw/api/ws?token=SECRET: refused",
			Detail:  "see https://gw/x?ticket=SECRET",
		})
		if err != nil {
			t.Fatal(err)
		}
		es, _ := s.List(Filter{})
		if len(es) != 1 {
			t.Fatalf("%s: %d entries", name, len(es))
		}
		e := es[0]
		if e.Command != "curl -H 'Authorization: Bearer abcdef123456' https://u:pw@host" {
			t.Errorf("%s store changed the command: %q", name, e.Command)
		}
		if e.MaskedCommand != "curl -H 'Authorization: Bearer ••••' https://u:••••@host" {
			t.Errorf("%s store masked copy: %q", name, e.MaskedCommand)
		}
		if got := e.Error + e.Detail; strings.Contains(got, "SECRET") {
			t.Errorf("%s store holds a credential in its error text: %s", name, got)
		}
	}
}

func TestBoltStoreSurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "approvals.db")
	s := openBolt(t, path, StoreOptions{Clock: clock.NewFake(t0)})
	want := Entry{At: t0, Kind: ChangeUpdated, Key: "g1/srq/s1/srq-1", Gateway: "g1", Session: "s1", Dialect: DialectServerRequest,
		State: StateResolved, Choice: "once", Surface: "tray", Detail: "d"}
	for range 2 {
		if err := s.Record(want); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openBolt(t, path, StoreOptions{Clock: clock.NewFake(t0)})
	defer s.Close()
	if err := s.Record(want); err != nil {
		t.Fatal(err)
	}
	es, err := s.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[2].Seq != 3 {
		t.Fatalf("after reopening: %+v", es)
	}
	want.Seq = 1
	if !es[0].At.Equal(want.At) {
		t.Fatalf("time %v, want %v", es[0].At, want.At)
	}
	es[0].At = want.At
	if !reflect.DeepEqual(es[0], want) {
		t.Fatalf("entry\n got %+v\nwant %+v", es[0], want)
	}
}

func TestBoltStoreRetention(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opt  StoreOptions
		step time.Duration // fake clock step between records
		want []uint64
	}{
		{"by count", StoreOptions{MaxEntries: 3, MaxAge: time.Hour}, time.Second, []uint64{4, 5, 6}},
		{"by age", StoreOptions{MaxEntries: 100, MaxAge: time.Hour}, 25 * time.Minute, []uint64{4, 5, 6}},
		{"both", StoreOptions{MaxEntries: 2, MaxAge: time.Hour}, 25 * time.Minute, []uint64{5, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := clock.NewFake(t0)
			tt.opt.Clock = clk
			s := openBolt(t, filepath.Join(t.TempDir(), "a.db"), tt.opt)
			defer s.Close()
			for range 6 {
				if err := s.Record(Entry{At: clk.Now(), Key: "k"}); err != nil {
					t.Fatal(err)
				}
				clk.Advance(tt.step)
			}
			if got := seqs(t, s, Filter{}); !slices.Equal(got, tt.want) {
				t.Fatalf("kept %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOpenStoreErrorSaysWhatToDo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := OpenStore(dir, StoreOptions{}) // a folder, not a file
	if err == nil || !strings.Contains(err.Error(), "move the file aside") {
		t.Fatalf("err = %v", err)
	}
}

// The history keeps commands as sent, so it is private to the user even
// when the file was created readable by others.
func TestBoltStoreIsPrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "approvals.db")
	s := openBolt(t, path, StoreOptions{Clock: clock.NewFake(t0)})
	s.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s = openBolt(t, path, StoreOptions{Clock: clock.NewFake(t0)})
	defer s.Close()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("history file mode %v, want 0600", info.Mode().Perm())
	}
}
