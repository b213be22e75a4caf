package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestAskAndStopThroughRunningHerald: `herald ask` starts a turn in the
// running `herald watch` (a new session: session.create, then
// prompt.submit), `herald stop` lists it and interrupts it, and reports
// only after the gateway's message.complete; in both dialects.
func TestAskAndStopThroughRunningHerald(t *testing.T) {
	for _, d := range []hermestest.Dialect{hermestest.Legacy, hermestest.Modern} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d})
			defer srv.Close()
			ctl := filepath.Join(t.TempDir(), "run", "ctl.sock")
			w := startWatch(t, "--gateway", "lab="+srv.URL, "--token", srv.Token(), "--control", ctl, "--db", "")
			w.waitLine(t, "connected", func(m map[string]any) bool {
				return m["type"] == "status" && field(m, "status", "state") == "connected"
			})
			if _, e, code := run(t, "ask", "--control", ctl); code != 2 || !strings.Contains(e, "usage") {
				t.Fatalf("ask without text: exit %d %q", code, e)
			}
			out, e, code := run(t, "ask", "--control", ctl, "--json", "hold")
			if code != 0 {
				t.Fatalf("ask: exit %d %q %q", code, out, e)
			}
			var rec struct {
				Ask struct {
					Gateway, Session, Status string
					Stored                   string `json:"stored_session"`
					New                      bool   `json:"new_session"`
				} `json:"ask"`
			}
			if err := json.Unmarshal([]byte(out), &rec); err != nil || !rec.Ask.New || rec.Ask.Status != "streaming" || rec.Ask.Gateway != "lab" {
				t.Fatalf("ask printed %q (%v)", out, err)
			}
			id := rec.Ask.Session
			w.waitLine(t, "the turn streaming", func(m map[string]any) bool {
				return field(m, "event", "kind") == "message.delta" && field(m, "event", "session") == id
			})
			out, _, code = run(t, "stop", "--control", ctl)
			// Listed by the id `herald stop` takes that Hermes lists too.
			if code != 0 || rec.Ask.Stored == "" || !strings.Contains(out, "lab/"+rec.Ask.Stored+"  session") {
				t.Fatalf("stop (list): exit %d %q", code, out)
			}
			if _, e, code := run(t, "stop", "--control", ctl, "zzzz"); code != 1 || !strings.Contains(e, "no active run matches") {
				t.Fatalf("stop of an unknown run: exit %d %q", code, e)
			}
			if srv.Interrupts() != 0 {
				t.Fatal("a failed stop sent an interrupt")
			}
			out, e, code = run(t, "stop", "--control", ctl, id[:6])
			if code != 0 || !strings.Contains(out, "turn interrupted (confirmed by the gateway)") {
				t.Fatalf("stop: exit %d %q %q", code, out, e)
			}
			if srv.Interrupts() != 1 {
				t.Fatalf("gateway saw %d interrupts", srv.Interrupts())
			}
			w.waitLine(t, "the interrupted turn", func(m map[string]any) bool {
				return field(m, "event", "kind") == "message.complete" && field(m, "event", "payload", "status") == "interrupted"
			})
			out, _, _ = run(t, "stop", "--control", ctl)
			if !strings.Contains(out, "No runs are active") {
				t.Fatalf("stop (list) after the stop: %q", out)
			}
		})
	}
}

// TestAskDirect: `herald ask --gateway URL` connects itself, creates a
// session, submits and prints the answer when the turn ends.
func TestAskDirect(t *testing.T) {
	for _, d := range []hermestest.Dialect{hermestest.Legacy, hermestest.Modern} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d})
			defer srv.Close()
			out, e, code := run(t, "ask", "--gateway", srv.URL, "--token", srv.Token(), "hello", "there")
			if code != 0 || !strings.Contains(out, "streaming (confirmed by the gateway)") || !strings.Contains(out, "turn complete:") || !strings.Contains(out, "stub answer: hello there") {
				t.Fatalf("ask: exit %d out %q err %q", code, out, e)
			}
			if strings.Contains(out+e, srv.Token()) {
				t.Fatal("ask printed the token")
			}
			// Session discovery (session.active_list) and liveness pings
			// run beside the ask at times of their own: what matters is
			// that the prompt went to a session the ask created.
			ms := strings.Join(foreground(srv.Methods()), ",")
			if !strings.Contains(ms, "session.create,prompt.submit") {
				t.Fatalf("gateway saw %s, want session.create then prompt.submit", ms)
			}
			// A stored session Herald does not follow yet is resumed first.
			_, stored := srv.CreateSession()
			out, e, code = run(t, "ask", "--gateway", srv.URL, "--token", srv.Token(), "--session", stored, "again")
			// Both dialects send each session to one client: the note says
			// what following it cost.
			if code != 0 || !strings.Contains(out, "stub answer: again") || !strings.Contains(out, "one client at a time") {
				t.Fatalf("ask --session: exit %d out %q err %q", code, out, e)
			}
			if _, e, code := run(t, "ask", "--gateway", srv.URL, "--token", "wrong", "x"); code != 1 || !strings.Contains(e, "refused") {
				t.Fatalf("ask with a wrong token: exit %d %q", code, e)
			}
		})
	}
}

// foreground drops the calls a connection makes on its own schedule
// (session discovery, liveness pings) from a gateway's method log.
func foreground(methods []string) []string {
	var out []string
	for _, m := range methods {
		if m != "session.active_list" && m != "gateway.ping" {
			out = append(out, m)
		}
	}
	return out
}

// TestStopDirect: `herald stop --gateway URL ID` interrupts a turn another
// client owns (its events never reach Herald: confirmed by session.status)
// and `herald stop --api URL RUN` stops an API-server run.
func TestStopDirect(t *testing.T) {
	t.Run("gateway", func(t *testing.T) {
		t.Parallel()
		srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
		defer srv.Close()
		live, _ := srv.CreateSession()
		if err := srv.Prompt(live, "hold"); err != nil {
			t.Fatal(err)
		}
		if _, e, code := run(t, "stop", "--gateway", srv.URL, "--token", srv.Token()); code != 2 || !strings.Contains(e, "give the session or run id") {
			t.Fatalf("direct stop without id: exit %d %q", code, e)
		}
		out, e, code := run(t, "stop", "--gateway", srv.URL, "--token", srv.Token(), live)
		if code != 0 || !strings.Contains(out, "confirmed by session.status") {
			t.Fatalf("stop: exit %d out %q err %q", code, out, e)
		}
		if srv.Interrupts() != 1 || srv.Sessions()[0].Running {
			t.Fatalf("interrupts %d, sessions %+v", srv.Interrupts(), srv.Sessions())
		}
	})
	for _, d := range []apiservertest.Dialect{apiservertest.SingleConsumer, apiservertest.LastEventID} {
		t.Run("api/"+d.String(), func(t *testing.T) {
			t.Parallel()
			// The agent paces on a fake clock nobody advances: the run
			// holds after its first tick until stopped.
			api := apiservertest.NewServer(apiservertest.Options{Dialect: d, Clock: clock.NewFake(time.Unix(0, 0)), StepDelay: time.Second})
			defer api.Close()
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, api.URL+"/v1/runs", bytes.NewBufferString(`{"input":"slow 5"}`))
			req.Header.Set("Authorization", "Bearer "+api.Key())
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var started struct {
				RunID string `json:"run_id"`
			}
			json.NewDecoder(resp.Body).Decode(&started)
			resp.Body.Close()
			if started.RunID == "" {
				t.Fatalf("start answered %d", resp.StatusCode)
			}
			out, e, code := run(t, "stop", "--api", api.URL, "--api-key", api.Key(), started.RunID)
			if code != 0 || !strings.Contains(out, "run stopped (confirmed by the API server)") {
				t.Fatalf("stop: exit %d out %q err %q", code, out, e)
			}
			if ri, _ := api.Run(started.RunID); ri.Status != "cancelled" {
				t.Fatalf("run is %q", ri.Status)
			}
			if strings.Contains(out+e, api.Key()) {
				t.Fatal("stop printed the API key")
			}
		})
	}
}

// TestAskDirectAPI: `herald ask --api URL` starts a run and prints its
// output when it completes.
func TestAskDirectAPI(t *testing.T) {
	t.Parallel()
	api := apiservertest.NewServer(apiservertest.Options{Dialect: apiservertest.LastEventID})
	defer api.Close()
	out, e, code := run(t, "ask", "--api", api.URL, "--api-key", api.Key(), "hello there")
	if code != 0 || !strings.Contains(out, "run completed:") {
		t.Fatalf("ask --api: exit %d out %q err %q", code, out, e)
	}
}

// TestWatchPrintsNotices: Hermes notices are printed one line each, level
// marked, text made visible (no terminal escapes reach the terminal), and
// their session named by its one name, as the rest of the feed names it.
func TestWatchPrintsNotices(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	out := &printer{w: &buf, name: func(gw, live, stored string) string { return "Fix the build" }}
	mk := func(kind string, payload string) wire.Event {
		ev := wire.Event{Gateway: "lab", Session: "0123456789", Kind: kind, Payload: json.RawMessage(payload)}
		ev.DecodeData()
		return ev
	}
	for _, tc := range []struct {
		ev   wire.Event
		want string
	}{
		{mk(wire.NotificationShow, `{"text":"✕ Credit access paused","level":"error","kind":"sticky","key":"credits.depleted"}`), "  lab · Fix the build ✗ ✕ Credit access paused\n"},
		{mk(wire.NotificationLegacy, `{"text":"used 90%","level":"warn","kind":"sticky"}`), "  lab · Fix the build ⚠ used 90%\n"},
		{mk(wire.NotificationShow, "{\"text\":\"evil\\u001b[2Jx\\nline\",\"level\":\"bogus\",\"kind\":\"ttl\"}"), "  lab · Fix the build ℹ evil␛[2Jx⏎line\n"},
		{mk(wire.NotificationClear, `{"key":"credits.depleted"}`), ""},
	} {
		buf.Reset()
		printEvent(out, tc.ev, "")
		if buf.String() != tc.want {
			t.Errorf("printed %q, want %q", buf.String(), tc.want)
		}
	}
}

// TestAskDirectSaysWhatATurnWaitsFor: a direct `herald ask` whose turn
// waits on the user (an approval, a question) says so and where it can be
// answered instead of waiting in silence; when it stops waiting (its
// --wait, or Ctrl-C) it names the command that follows the turn.
func TestAskDirectSaysWhatATurnWaitsFor(t *testing.T) {
	t.Parallel()
	gw := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	t.Cleanup(gw.Close)
	api := apiservertest.NewServer(apiservertest.Options{Dialect: apiservertest.LastEventID})
	t.Cleanup(api.Close)
	for _, tc := range []struct {
		name      string
		args      []string
		interrupt bool
		want      []string
	}{
		{"gateway approval", []string{"--gateway", gw.URL, "--token", gw.Token(), "--wait", "1s", "approve-me: rm -rf ./build"}, false,
			[]string{"⏸ the session waits for an approval of: rm -rf ./build", "herald ask cannot answer it", "no answer within 1s; the session goes on in Hermes: follow it with `herald watch --gateway " + gw.URL + " --session "}},
		{"API approval", []string{"--api", api.URL, "--api-key", api.Key(), "--wait", "1s", "approve-me: rm -rf ./build"}, false,
			[]string{"⏸ the run waits for an approval of: rm -rf ./build", "no answer within 1s; the run goes on in Hermes: follow it with `herald watch --api " + api.URL + " --run run_"}},
		{"Ctrl-C", []string{"--api", api.URL, "--api-key", api.Key(), "approve-me: rm -rf ./build"}, true,
			[]string{"⏸ the run waits for an approval", "herald ask: stopped waiting; the run goes on in Hermes: follow it with `herald watch --api "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			cmd := exec.CommandContext(ctx, heraldBin, append([]string{"ask"}, tc.args...)...)
			out := &sayWriter{want: "⏸", said: make(chan struct{})}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.interrupt {
				select {
				case <-out.said:
				case <-ctx.Done():
				}
				cmd.Process.Signal(os.Interrupt)
			}
			err := cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("ask did not end; printed %q", out.String())
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Errorf("exit %v, want 1", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("ask printed %q, which does not say %q", out.String(), w)
				}
			}
		})
	}
}

// sayWriter is a lockedBuf that closes said once want was written.
type sayWriter struct {
	lockedBuf
	want string
	said chan struct{}
	once sync.Once
}

func (w *sayWriter) Write(p []byte) (int, error) {
	n, err := w.lockedBuf.Write(p)
	if strings.Contains(w.String(), w.want) {
		w.once.Do(func() { close(w.said) })
	}
	return n, err
}
