package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestSecondWatchDialsNothing: a second `herald watch` on the same control
// socket stops with one line before it dials any gateway (a resume would
// take the running Herald's sessions on 0.18.2), and since the socket is
// served before the gateways are dialed, `herald pending` works as soon as
// the first watch shows a gateway connected.
func TestSecondWatchDialsNothing(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	defer srv.Close()
	_, stored := srv.CreateSession()
	ctl := filepath.Join(t.TempDir(), "run", "ctl.sock")
	w := startWatch(t, "--gateway", "lab="+srv.URL, "--token", srv.Token(), "--session", stored, "--control", ctl, "--db", "")
	w.waitLine(t, "connected", func(m map[string]any) bool {
		return m["type"] == "status" && field(m, "status", "state") == "connected"
	})
	if out, e, code := run(t, "pending", "--control", ctl); code != 0 {
		t.Fatalf("pending once connected: exit %d out %q err %q", code, out, e)
	}
	waitServer(t, srv, "the session followed", func() bool {
		for _, s := range srv.Sessions() {
			if s.StoredID == stored && s.Attached {
				return true
			}
		}
		return false
	})
	resumes := count(srv.Methods(), "session.resume")
	dials := srv.Dials()
	_, e, code := run(t, "watch", "--gateway", "lab="+srv.URL, "--token", srv.Token(), "--session", stored, "--control", ctl, "--db", "")
	if code != 1 || !strings.Contains(e, "another Herald is already running") || !strings.Contains(e, "use that one (`herald pending`") || strings.Count(strings.TrimSpace(e), "\n") != 0 {
		t.Fatalf("second watch: exit %d stderr %q", code, e)
	}
	if srv.Dials() != dials {
		t.Fatalf("the second watch dialed the gateway (%d dials, was %d)", srv.Dials(), dials)
	}
	if n := count(srv.Methods(), "session.resume"); n != resumes {
		t.Fatalf("the session was resumed again (%d resumes, was %d)", n, resumes)
	}
}

// TestJSONModePrintsOnlyJSON: with --json every line watch prints is one
// JSON object, including a gateway's problems (a follow that failed, a
// dropped link) and the lines written for people; a script reading the
// stream never meets plain text.
func TestJSONModePrintsOnlyJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	out := &printer{w: &buf, json: true}
	out.problem("lab", errors.New("following session s1: not connected\x1b[2J"))
	out.line("Demo gateway at %s", "http://127.0.0.1:1")
	out.line("")
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("printed %q, want 3 lines", buf.String())
	}
	var recs []jsonRecord
	for _, l := range lines {
		var r jsonRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("not JSON: %q (%v)", l, err)
		}
		recs = append(recs, r)
	}
	if recs[0].Type != "problem" || recs[0].Gateway != "lab" || !strings.Contains(recs[0].Text, "not connected") || strings.Contains(recs[0].Text, "\x1b") {
		t.Fatalf("problem record %+v", recs[0])
	}
	if recs[1].Type != "message" || recs[1].Text != "Demo gateway at http://127.0.0.1:1" || recs[2].Type != "message" {
		t.Fatalf("message records %+v", recs[1:])
	}
	// Text mode is unchanged.
	buf.Reset()
	(&printer{w: &buf}).problem("lab", errors.New("boom"))
	if buf.String() != "! lab: boom\n" {
		t.Fatalf("text mode printed %q", buf.String())
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
