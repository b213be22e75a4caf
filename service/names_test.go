package service

import (
	"context"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
)

// TestSessionNamesOf: a session Herald sees live has the name the Sessions
// panel gives it, whatever its request recorded; a session that is gone
// keeps the name recorded with its request, else is "Untitled session":
// never an id.
func TestSessionNamesOf(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 12, 3, 17, 33, 0, 0, time.Local)
	live := []GatewaySessions{{Gateway: "lab", Sessions: []LiveSessionView{
		{LiveSession: source.LiveSession{ID: "a1b2c3d4e5", Key: "20261203_173300_bd19f2", Title: "Nightly backup check"}},
		{LiveSession: source.LiveSession{ID: "e5f6a7b8c9", Key: "20261203_173301_aaaaaa", StartedAt: started}},
		{LiveSession: source.LiveSession{ID: "b0b0b0b0b0", Key: "20261203_173302_bbbbbb", FirstPrompt: "check the nightly backups", StartedAt: started}},
	}}}
	views := []SessionView{
		{Gateway: "lab", ID: "a1b2c3d4e5", StoredID: "20261203_173300_bd19f2", Title: "older title from events"},
		{Gateway: "lab", ID: "f0f0f0f0f0", Title: "Followed only"},
		{Gateway: "api", ID: "run_0123456789abcdef0123456789abcdef", FirstPrompt: "run the tests and fix", Word: "run"},
		{Gateway: "api", ID: "run_aaaa456789abcdef0123456789abcdef", Started: started, Word: "run"},
	}
	names := View{Live: live, Sessions: views}.Names()
	cases := []struct {
		name                        string
		names                       SessionNames
		gw, id, stored, title, want string
	}{
		{"listed, by live id", names, "lab", "a1b2c3d4e5", "", "", "Nightly backup check"},
		{"listed, by stored id after a resume", names, "lab", "new-live-id", "20261203_173300_bd19f2", "", "Nightly backup check"},
		{"listed wins over the recorded title", names, "lab", "a1b2c3d4e5", "", "recorded then", "Nightly backup check"},
		{"listed without a title", names, "lab", "e5f6a7b8c9", "", "recorded then", "Untitled session, started 17:33"},
		{"listed with its first prompt", names, "lab", "b0b0b0b0b0", "", "", "check the nightly backups"},
		{"followed, not listed", names, "lab", "f0f0f0f0f0", "", "", "Followed only"},
		{"API run", names, "api", "run_0123456789abcdef0123456789abcdef", "", "", "run the tests and fix"},
		{"API run, no prompt known", names, "api", "run_aaaa456789abcdef0123456789abcdef", "", "", "Untitled run, started 17:33"},
		{"same id on another gateway", names, "other", "a1b2c3d4e5", "", "", "Untitled session"},
		{"gone, title recorded", names, "lab", "9999999999", "20261203_000000_000000", "Deploy review", "Deploy review"},
		{"gone, no title recorded", names, "lab", "9999999999", "20261203_000000_000000", "", "Untitled session"},
		{"gone, live id only", names, "lab", "9999999999abcdef", "", "", "Untitled session"},
		{"gone API run, its name recorded", names, "api", "run_fedcba9876543210fedcba9876543210", "", "Untitled run, started 17:33", "Untitled run, started 17:33"},
		// Names stay raw: each surface shows them through VisibleLine.
		{"control and bidi kept raw", names, "lab", "9999999999", "", "evil\u202e\x1b[2Jgnp", "evil\u202e\x1b[2Jgnp"},
		{"no live view (herald log without Herald)", nil, "lab", "a1b2c3d4e5", "20261203_173300_bd19f2", "Nightly backup check", "Nightly backup check"},
		{"no live view, nothing recorded", nil, "lab", "a1b2c3d4e5", "", "", "Untitled session"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.names.Of(tc.gw, tc.id, tc.stored, tc.title); got != tc.want {
				t.Errorf("Of(%q, %q, %q, %q) = %q, want %q", tc.gw, tc.id, tc.stored, tc.title, got, tc.want)
			}
		})
	}
	// The panel's own rule agrees for every listed session.
	for _, l := range live[0].Sessions {
		if got := names.Of("lab", l.ID, l.Key, l.Title); got != l.DisplayName() {
			t.Errorf("%s: named %q, the panel says %q", l.ID, got, l.DisplayName())
		}
	}
}

// TestNamedEntries: entries without a session (a gateway-wide refusal)
// get no name; the others theirs.
func TestNamedEntries(t *testing.T) {
	t.Parallel()
	es := []approval.Entry{
		{Gateway: "lab", Session: "a1b2c3d4e5", SessionTitle: "Deploy"},
		{Gateway: "lab"},
	}
	got := NamedEntries(es, nil)
	if len(got) != 2 || got[0].SessionName != "Deploy" || got[1].SessionName != "" || got[0].Entry.Session != "a1b2c3d4e5" {
		t.Fatalf("%+v", got)
	}
}

// TestHistoryNamesSessionAsPanel: an approval of a titled session is
// recorded with the title; the history names the session as the Sessions
// panel does while it is live, and by the recorded title after Herald
// restarted without it.
func TestHistoryNamesSessionAsPanel(t *testing.T) {
	t.Parallel()
	const title = "Nightly\u202e backup\x1b[2J"
	r := newLiveRig(t, hermestest.Modern, FollowAuto)
	r.connect()
	live, _ := r.foreignSession()
	if err := r.srv.SetTitle(live, title); err != nil {
		t.Fatal(err)
	}
	r.step()
	r.step()
	if row, ok := r.row(live); !ok || !row.Followed || row.Title != title {
		t.Fatalf("row %+v (listed %v)", row, ok)
	}
	if _, _, err := r.srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf ./build"}); err != nil {
		t.Fatal(err)
	}
	var req approval.Request
	r.wait("the approval", func() bool {
		var ok bool
		req, ok = r.pendingFor(live)
		return ok
	})
	if req.SessionTitle != title {
		t.Fatalf("the approval recorded session title %q, want %q", req.SessionTitle, title)
	}
	if err := r.svc.Answer(context.Background(), req.Key, "deny", "test", false); err != nil {
		t.Fatal(err)
	}
	row, _ := r.row(live)
	panel := row.DisplayName()
	hist, err := r.svc.History(approval.Filter{Key: req.Key})
	if err != nil || len(hist) < 2 {
		t.Fatalf("history %+v, %v", hist, err)
	}
	for _, e := range hist {
		if e.SessionName != panel || e.SessionTitle != title {
			t.Errorf("%s entry: named %q (recorded %q), the panel says %q", e.State, e.SessionName, e.SessionTitle, panel)
		}
	}
	// Over the control socket too (`herald log`).
	resp := r.svc.handleControl(context.Background(), ControlRequest{Op: "log"})
	if len(resp.Log) == 0 || resp.Log[len(resp.Log)-1].SessionName != panel {
		t.Errorf("control log %+v, want each named %q", resp.Log, panel)
	}

	// Herald restarted, the gateway not (yet) connected: the recorded
	// title still names the session.
	again := New(Config{Clock: r.clk, Store: r.svc.cfg.Store})
	t.Cleanup(again.Close)
	hist, err = again.History(approval.Filter{Key: req.Key})
	if err != nil || len(hist) == 0 {
		t.Fatalf("history after the restart %+v, %v", hist, err)
	}
	for _, e := range hist {
		if e.SessionName != title {
			t.Errorf("after the restart, %s entry named %q, want %q", e.State, e.SessionName, title)
		}
	}
}
