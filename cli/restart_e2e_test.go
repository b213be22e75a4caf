package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/wire"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestApprovalSurvivesCtrlC: `herald watch` is stopped with Ctrl-C while
// an approval waits. The next watch over the same history shows it again
// at once ("may still be pending", deny-only); when the gateway offers it
// again by the same id for the same command in the same session (Modern
// re-lists open requests on resume) it is the same request: it keeps its
// key, regains its choices and is answered. The audit log never shows two
// commands under one key and no entry is left open.
func TestApprovalSurvivesCtrlC(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	t.Cleanup(srv.Close)
	live, stored := srv.CreateSession()
	dir := t.TempDir()
	db := filepath.Join(dir, "audit.db")
	args := func(n string) []string {
		return []string{"--gateway", "lab=" + srv.URL, "--token", srv.Token(), "--session", stored, "--control", filepath.Join(dir, "run"+n, "ctl.sock"), "--db", db}
	}

	w := startWatch(t, args("1")...)
	w.waitLine(t, "connected", func(m map[string]any) bool {
		return m["type"] == "status" && field(m, "status", "state") == "connected"
	})
	waitServer(t, srv, "session attached", func() bool {
		for _, s := range srv.Sessions() {
			if s.ID == live && s.Attached {
				return true
			}
		}
		return false
	})
	_, agent, err := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf ./build"})
	if err != nil {
		t.Fatal(err)
	}
	first := w.waitLine(t, "approval", func(m map[string]any) bool { return m["type"] == "approval" && m["change"] == "arrived" })
	firstKey := field(first, "request", "key").(string)
	if err := w.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Wait(); err != nil {
		t.Fatalf("watch after Ctrl-C: %v", err)
	}

	w2 := startWatch(t, args("2")...)
	restored := w2.waitLine(t, "the open approval shown again", func(m map[string]any) bool {
		return m["type"] == "approval" && m["change"] == "arrived" && field(m, "request", "key") == firstKey
	})
	if field(restored, "request", "uncertain") != true || !strings.Contains(field(restored, "request", "outcome", "detail").(string), "restarted") {
		t.Fatalf("restored approval %v", restored)
	}
	again := w2.waitLine(t, "the gateway's copy", func(m map[string]any) bool {
		return m["type"] == "approval" && field(m, "request", "key") == firstKey && field(m, "request", "uncertain") != true && field(m, "request", "state") == "pending"
	})
	if field(again, "request", "command") != "rm -rf ./build" || !strings.Contains(fmt.Sprint(field(again, "request", "choices")), "once") {
		t.Fatalf("offered again: %v", again)
	}
	out, e, code := run(t, "approve", "--control", filepath.Join(dir, "run2", "ctl.sock"), again["id"].(string), "deny")
	if code != 0 {
		t.Fatalf("approve: exit %d %q %q", code, out, e)
	}
	if c := <-agent; c != "deny" {
		t.Fatalf("agent got %q", c)
	}
	w2.waitLine(t, "resolved", func(m map[string]any) bool {
		return m["type"] == "approval" && m["id"] == again["id"] && field(m, "request", "state") == "resolved"
	})
	if err := w2.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	w2.cmd.Wait()

	// The history: one command per key, every key in a final state.
	out, e, code = run(t, "log", "--control", filepath.Join(dir, "none.sock"), "--db", db, "--json")
	if code != 0 {
		t.Fatalf("log: exit %d %q", code, e)
	}
	var entries []struct {
		Key, Command, State, Kind string
	}
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("log --json: %v\n%s", err, out)
	}
	last := map[string]string{}
	cmds := map[string]string{}
	for _, en := range entries {
		last[en.Key] = en.State
		if en.Kind == "arrived" {
			if c, ok := cmds[en.Key]; ok && c != en.Command {
				t.Errorf("key %s names %q and %q", en.Key, c, en.Command)
			}
			cmds[en.Key] = en.Command
		}
	}
	// One request, offered again by its own id: one key, resolved.
	if len(last) != 1 || last[firstKey] != "resolved" {
		t.Fatalf("keys in the log %v, want only %s, resolved", last, firstKey)
	}
	for k, st := range last {
		if st == "pending" || st == "answering" {
			t.Errorf("entry %s left %s", k, st)
		}
	}
}

// TestWatchTextShowsRestoredApproval: the terminal view (not --json)
// shows a request left open in the history as "may still be pending" at
// start, before the service is fully wired.
func TestWatchTextShowsRestoredApproval(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	t.Cleanup(srv.Close)
	db := filepath.Join(t.TempDir(), "audit.db")
	st, err := approval.OpenStore(db, approval.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := approval.New(approval.Options{Store: st})
	ev := wire.Event{Gateway: "lab", Session: "s1", Kind: wire.ApprovalRequest, ReceivedAt: time.Now(), Payload: []byte(`{"command":"rm -rf ./left-open","choices":["once","deny"]}`)}
	in.Ingest(ev)
	if len(in.Pending()) != 1 {
		t.Fatal("no request to leave open")
	}
	in.Close()
	st.Close()

	cmd := exec.Command(heraldBin, "watch", "--db", db, "--control", filepath.Join(t.TempDir(), "run", "ctl.sock"), "--gateway", "lab="+srv.URL, "--token", srv.Token())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb lockedBuf
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	seen := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		var all strings.Builder
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "may still be pending: Herald restarted") {
				seen <- all.String()
				return
			}
		}
		seen <- all.String()
	}()
	select {
	case out := <-seen:
		if !strings.Contains(out, "rm -rf ./left-open") || !strings.Contains(out, "may still be pending") {
			t.Fatalf("watch printed %q; stderr %q", out, errb.String())
		}
	case <-time.After(guard):
		t.Fatalf("watch did not show the restored request; stderr %q", errb.String())
	}
}
