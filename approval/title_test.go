package approval

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// TestArrivalRecordsSessionTitle: every kind of arrival records the title
// its session has then (Options.SessionTitle), raw and bounded, on the
// request and on each of its audit entries, so the history can name the
// session after it is gone.
func TestArrivalRecordsSessionTitle(t *testing.T) {
	t.Parallel()
	long := "a" + strings.Repeat("é", MaxTitleBytes) // é is 2 bytes: the cut falls inside one
	cases := []struct {
		name  string
		title string // what the gateway calls session s1 of g1
		ev    wire.Event
		want  string
	}{
		{"event form", "Nightly backup check", legacy("g1", "s1", "rm -rf ./build", t0), "Nightly backup check"},
		{"server request", "Nightly backup check", srq("g1", "s1", "srq-1", "rm -rf ./build", t0), "Nightly backup check"},
		{"clarify", "Deploy", promptEvent("g1", "s1", "clarify", "c1", "", t0), "Deploy"},
		{"secret server request", "Deploy", promptEvent("g1", "s1", "secret", "", "srq-2", t0), "Deploy"},
		{"refused", "Flood", event("g1", "s1", wire.Refused, t0, wire.RefusedPayload{Method: wire.ApprovalServerRequest, Count: 1, Reason: "queue full", LastCommand: "ls"}), "Flood"},
		{"no title", "", legacy("g1", "s1", "ls", t0), ""},
		{"spaces only", "  \t ", legacy("g1", "s1", "ls", t0), ""},
		// Kept raw: surfaces show it through VisibleLine, which marks
		// the controls and the direction change.
		{"control and bidi", "evil\x1b[2J\u202egnp.exe\r", legacy("g1", "s1", "ls", t0), "evil\x1b[2J\u202egnp.exe"},
		{"too long", long, legacy("g1", "s1", "ls", t0), long[:MaxTitleBytes-1]},
		{"other session", "Nightly", legacy("g1", "s2", "ls", t0), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var asked []string
			f := newFixture(t, func(o *Options) {
				o.SessionTitle = func(gw, session, stored string) string {
					asked = append(asked, gw+"/"+session)
					if gw == "g1" && session == "s1" {
						return tc.title
					}
					return ""
				}
			})
			f.in.Ingest(tc.ev)
			c := f.waitChange(t, "an arrival", func(c Change) bool { return c.Kind == ChangeArrived || c.Kind == ChangeRefused })
			if c.Request.SessionTitle != tc.want {
				t.Errorf("request's session title %q, want %q", c.Request.SessionTitle, tc.want)
			}
			if len(asked) == 0 || asked[0] != "g1/"+tc.ev.Session {
				t.Errorf("SessionTitle asked for %v, want g1/%s", asked, tc.ev.Session)
			}
			es, err := f.store.List(Filter{})
			if err != nil || len(es) == 0 {
				t.Fatalf("audit entries %v, %v", es, err)
			}
			for _, e := range es {
				if e.SessionTitle != tc.want {
					t.Errorf("%s entry's session title %q, want %q", e.Kind, e.SessionTitle, tc.want)
				}
			}
		})
	}
}

// TestSessionTitleKeptAcrossEntriesAndRestart: the title recorded at
// arrival stays on the request's later entries even when the session is
// renamed or gone, and a restart restores it with the request.
func TestSessionTitleKeptAcrossEntriesAndRestart(t *testing.T) {
	t.Parallel()
	r := newRestartRig(t)
	title := "Nightly backup check"
	start := func() (*Inbox, func()) {
		st, err := OpenStore(r.path, StoreOptions{Clock: r.clk})
		if err != nil {
			t.Fatal(err)
		}
		in := New(Options{
			Clock: r.clk, Store: st,
			Answerers:    func(string) (Answerer, bool) { return r.ans, true },
			SessionTitle: func(string, string, string) string { return title },
		})
		return in, func() { in.Close(); st.Close() }
	}
	in, stop := start()
	in.Ingest(legacy("g1", "s1", "rm -rf ./build", t0))
	p := in.Pending()
	if len(p) != 1 {
		t.Fatalf("pending %v", p)
	}
	key := p[0].Key
	stop()

	title = "" // the session is gone: the gateway names it no more
	in, stop = start()
	got, ok := in.Get(key)
	if !ok || got.SessionTitle != "Nightly backup check" {
		t.Fatalf("restored %+v (%v): want the title recorded at arrival", got, ok)
	}
	if err := in.Dismiss(key, "window"); err != nil {
		t.Fatal(err)
	}
	stop()
	n := 0
	for _, e := range r.entries() {
		if e.Key != key {
			continue
		}
		n++
		if e.SessionTitle != "Nightly backup check" {
			t.Errorf("%s entry (%s) has session title %q", e.Kind, e.State, e.SessionTitle)
		}
	}
	if n < 3 {
		t.Fatalf("%d entries for %s, want arrival, restore and dismissal", n, key)
	}
}

// TestOldEntriesWithoutSessionTitle: an entry written before Herald kept
// the title restores with none: its session is "Untitled session" (a name,
// never an id), with its id whole in the details.
func TestOldEntriesWithoutSessionTitle(t *testing.T) {
	t.Parallel()
	e := Entry{Key: "g1/ev/s1/1", Kind: ChangeArrived, Gateway: "g1", Session: "8f2c41d9e0b7a6c3", Command: "ls", State: StatePending, Guards: GuardsVersion, Choices: []string{"once", "deny"}, At: t0}
	r := restoredRequest(e.Key, e, e, t0)
	if r.SessionTitle != "" {
		t.Fatalf("restored title %q from an entry without one", r.SessionTitle)
	}
	if got := r.RecordedName(); got != "Untitled session" {
		t.Fatalf("named %q, want Untitled session", got)
	}
	if d := r.Display(); d.Session != "Untitled session" || d.SessionID != "8f2c41d9e0b7a6c3" {
		t.Fatalf("shown as %q (id %q), want Untitled session with the whole id in the details", d.Session, d.SessionID)
	}
}

// TestNamingName: a session's one name is its title, else its first
// prompt's first words, else "Untitled session, started 15:04"; never an
// id.
func TestNamingName(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 4, 13, 54, 0, 0, time.Local)
	for _, tc := range []struct {
		n    Naming
		want string
	}{
		{Naming{Title: " Fix the build ", FirstPrompt: "run the tests"}, "Fix the build"},
		{Naming{Title: "  ", FirstPrompt: "run the tests and fix what fails", Started: at}, "run the tests and fix what fails"},
		{Naming{FirstPrompt: "one two three four five six seven eight nine ten"}, "one two three four five six seven eight..."},
		{Naming{FirstPrompt: "  \n ", Started: at}, "Untitled session, started 13:54"},
		{Naming{Started: at, Word: "run"}, "Untitled run, started 13:54"},
		{Naming{}, "Untitled session"},
	} {
		if got := tc.n.Name(); got != tc.want {
			t.Errorf("%+v.Name() = %q, want %q", tc.n, got, tc.want)
		} else if shown := VisibleLine(got); shown != got {
			t.Errorf("%+v.Name() %q is shown as %q on every surface", tc.n, got, shown)
		}
	}
	if got := SessionID("", "run_4f2a9c0e11d84b7f9a6b3c2d1e0f9a8b"); got != "run_4f2a9c0e11d84b7f9a6b3c2d1e0f9a8b" {
		t.Errorf("a run's id is shown as %q, want it whole", got)
	}
	if got := SessionID("20261202_100136_258fb5", "a1b2c3d4"); got != "20261202_100136_258fb5" {
		t.Errorf("a session's id is shown as %q, want its stored id", got)
	}
}
