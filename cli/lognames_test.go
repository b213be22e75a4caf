package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/service"
)

// TestLogNamesSessions: `herald log` without a running Herald names each
// entry's session by the title recorded with its request (shown as
// VisibleLine: a control or direction change is a marker), else by its
// short id, as the window's history does; --json carries the raw name.
func TestLogNamesSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "audit.db")
	st, err := approval.OpenStore(db, approval.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	entries := []approval.Entry{
		{At: t0, Kind: approval.ChangeArrived, Key: "lab/srq/1", Gateway: "lab", Session: "a1b2c3d4e5f6", Command: "ls", State: approval.StatePending, SessionTitle: "Nightly backup check"},
		{At: t0, Kind: approval.ChangeArrived, Key: "lab/srq/2", Gateway: "lab", Session: "0123456789ab", Command: "ls", State: approval.StatePending, SessionTitle: "evil\u202egnp.exe\x1b[2J"},
		{At: t0, Kind: approval.ChangeArrived, Key: "lab/srq/3", Gateway: "lab", Session: "fedcba987654", Command: "ls", State: approval.StatePending},
	}
	for _, e := range entries {
		if err := st.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	ctl := filepath.Join(dir, "run", "ctl.sock")
	out, errb, code := runMain(t, "log", "--control", ctl, "--db", db)
	if code != 0 || errb != "" {
		t.Fatalf("log: exit %d, stderr %q", code, errb)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{"session “Nightly backup check”", "session “evil⟦U+202E⟧gnp.exe␛[2J”", "session “Untitled session”"}
	if len(lines) != len(want) {
		t.Fatalf("log printed %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d %q lacks %q", i, lines[i], w)
		}
		if enc := surface.Terminal(lines[i]); enc != lines[i] {
			t.Errorf("line %d holds a raw character: %q", i, lines[i])
		}
	}
	out, _, code = runMain(t, "log", "--control", ctl, "--db", db, "--json")
	var js []service.LogEntry
	if err := json.Unmarshal([]byte(out), &js); code != 0 || err != nil || len(js) != 3 {
		t.Fatalf("log --json: exit %d, %v:\n%s", code, err, out)
	}
	if js[1].SessionName != "evil\u202egnp.exe\x1b[2J" {
		t.Errorf("--json session_name %q, want the raw title", js[1].SessionName)
	}
}
