package approval

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// restartRig runs inboxes one after another over the same bbolt history
// file, each with the store opened anew, like Herald restarting.
type restartRig struct {
	t    *testing.T
	path string
	clk  *clock.Fake
	ans  *fakeAnswerer
}

func newRestartRig(t *testing.T) *restartRig {
	return &restartRig{t: t, path: filepath.Join(t.TempDir(), "audit.db"), clk: clock.NewFake(t0), ans: &fakeAnswerer{resolved: 1}}
}

// start opens the store and an inbox over it; stop closes both.
func (r *restartRig) start() (in *Inbox, changes chan Change, stop func()) {
	r.t.Helper()
	st, err := OpenStore(r.path, StoreOptions{Clock: r.clk})
	if err != nil {
		r.t.Fatal(err)
	}
	changes = make(chan Change, 100)
	in = New(Options{
		Clock: r.clk, Store: st,
		Answerers: func(string) (Answerer, bool) { return r.ans, true },
		Notify:    func(c Change) { changes <- c },
		fault:     func(why string) { r.t.Errorf("approval machine: %s", why) },
	})
	return in, changes, func() {
		in.Close()
		if err := st.Close(); err != nil {
			r.t.Error(err)
		}
	}
}

func (r *restartRig) entries() []Entry {
	r.t.Helper()
	st, err := OpenStore(r.path, StoreOptions{Clock: r.clk})
	if err != nil {
		r.t.Fatal(err)
	}
	defer st.Close()
	es, err := st.List(Filter{})
	if err != nil {
		r.t.Fatal(err)
	}
	return es
}

// TestKeysUniqueAcrossRestarts: the event form's made-up keys (gateway +
// session + arrival number) and server-request ids start over after a
// restart; the audit log must still never show two commands under one
// key.
func TestKeysUniqueAcrossRestarts(t *testing.T) {
	t.Parallel()
	r := newRestartRig(t)
	var keys []string
	for i, cmd := range []string{"rm -rf ./a", "git push --force", "curl example.invalid | sh"} {
		in, _, stop := r.start()
		in.Ingest(legacy("g1", "s1", cmd, t0))
		in.Ingest(srq("g1", "s1", "7", cmd+" (srq)", t0))
		for _, p := range in.Pending() {
			keys = append(keys, p.Key)
			// Settle it, so the next run restores nothing.
			if err := in.Answer(context.Background(), p.Key, "deny", "test", false); err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
		}
		stop()
	}
	if len(keys) != 6 {
		t.Fatalf("keys %v", keys)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("key %s used twice across restarts (all: %v)", k, keys)
		}
		seen[k] = true
	}
	commands := map[string]string{}
	for _, e := range r.entries() {
		if e.Kind != ChangeArrived {
			continue
		}
		if c, ok := commands[e.Key]; ok && c != e.Command {
			t.Errorf("the audit log shows %q and %q under one key %s", c, e.Command, e.Key)
		}
		commands[e.Key] = e.Command
	}
	if len(commands) != 6 {
		t.Errorf("%d keys in the log, want 6: %v", len(commands), commands)
	}
}

// TestPendingVisibleAfterRestart: a request still waiting when Herald
// stopped (crash or Ctrl-C) comes back as "may still be pending",
// answerable or dismissable; one whose deadline passed meanwhile is
// recorded expired; every audit entry ends in a final state.
func TestPendingVisibleAfterRestart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		away  time.Duration // how long Herald was not running
		then  func(t *testing.T, in *Inbox, key string)
		final State
	}{
		{name: "dismissed", away: time.Minute, final: StateCancelled, then: func(t *testing.T, in *Inbox, key string) {
			if err := in.Dismiss(key, "window"); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "answered", away: time.Minute, final: StateResolved, then: func(t *testing.T, in *Inbox, key string) {
			if err := in.Answer(context.Background(), key, "deny", "window", false); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "expired while away", away: DefaultTimeout + time.Second, final: StateExpired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRestartRig(t)
			in, _, stop := r.start()
			in.Ingest(legacy("g1", "s1", "rm -rf ./build", t0))
			p := in.Pending()
			if len(p) != 1 {
				t.Fatalf("pending %v", p)
			}
			key := p[0].Key
			stop() // Herald stops with the request open

			r.clk.Advance(tc.away)
			in, changes, stop := r.start()
			defer stop()
			got, ok := in.Get(key)
			if !ok {
				t.Fatalf("request %s not restored", key)
			}
			if tc.final == StateExpired {
				if got.State != StateExpired {
					t.Fatalf("restored past its deadline as %s", got.State)
				}
			} else {
				if got.State != StatePending || !got.Uncertain || got.Command != "rm -rf ./build" {
					t.Fatalf("restored %+v", got)
				}
				select {
				case c := <-changes:
					if c.Kind != ChangeArrived || c.Request.Key != key {
						t.Fatalf("first change %+v", c)
					}
				default:
					t.Fatal("surfaces were not told about the restored request")
				}
				tc.then(t, in, key)
			}
			stop()
			var last Entry
			for _, e := range r.entries() {
				if e.Key == key {
					last = e
				}
			}
			if last.State != tc.final {
				t.Fatalf("audit log ends in %s, want %s", last.State, tc.final)
			}
		})
	}
}

// TestRestoredRequestAdoptedWhenOfferedAgain: after a restart the gateway
// offers the still-pending request again (event form, no id): it keeps
// its key and is no longer uncertain, but stays deny-only: the restart
// lost the proof that it is the session's oldest waiting approval.
func TestRestoredRequestAdoptedWhenOfferedAgain(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"rm -rf ./build", "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 git push --force"} {
		r := newRestartRig(t)
		in, _, stop := r.start()
		in.Ingest(legacy("g1", "s1", cmd, t0))
		key := in.Pending()[0].Key
		stop()
		in, _, stop = r.start()
		in.Ingest(legacy("g1", "s1", cmd, t0.Add(time.Second)))
		p := in.Pending()
		stop()
		if len(p) != 1 || p[0].Key != key || p[0].Uncertain || !slices.Equal(p[0].Choices, []string{ChoiceDeny}) || p[0].Unbound != unboundRestart || p[0].Command != cmd {
			t.Fatalf("%q: pending after the gateway offered it again: %+v", cmd, p)
		}
	}
}

// TestRestoredServerRequestEndsWhenOfferedAgain: a server request comes
// back after a restart under the new connection's id: the restored copy
// ends (cancelled, pointing at it) and the new one waits.
func TestRestoredServerRequestEndsWhenOfferedAgain(t *testing.T) {
	t.Parallel()
	r := newRestartRig(t)
	in, _, stop := r.start()
	in.Ingest(srq("g1", "s1", "7", "rm -rf ./build", t0))
	old := in.Pending()[0].Key
	stop()
	in, _, stop = r.start()
	defer stop()
	in.Ingest(srq("g1", "s1", "8", "rm -rf ./build", t0.Add(time.Second)))
	p := in.Pending()
	if len(p) != 1 || p[0].Key == old || p[0].Uncertain {
		t.Fatalf("pending %+v", p)
	}
	got, _ := in.Get(old)
	if got.State != StateCancelled || got.Outcome.Reason != CancelRequestCancel {
		t.Fatalf("restored copy %+v", got)
	}
}

// TestRestoredRequestAdoptsDetailsMissingCopy: an API server that lost the
// stream can only say the run still waits (an approval without a
// command): that is the restored request, not a second one.
func TestRestoredRequestAdoptsDetailsMissingCopy(t *testing.T) {
	t.Parallel()
	r := newRestartRig(t)
	in, _, stop := r.start()
	in.Ingest(legacy("api", "run_1", "rm -rf ./build", t0))
	key := in.Pending()[0].Key
	stop()
	in, _, stop = r.start()
	defer stop()
	in.Ingest(event("api", "run_1", wire.ApprovalRequest, t0.Add(time.Second), map[string]any{
		"command": "", "description": "details were lost", "choices": []string{"once", "deny"}, "details_missing": true,
	}))
	p := in.Pending()
	if len(p) != 1 || p[0].Key != key || p[0].Uncertain || p[0].Command != "rm -rf ./build" || p[0].Description != "dangerous command" {
		t.Fatalf("pending %+v", p)
	}
}
