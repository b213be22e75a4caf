package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/testwait"
	"go.uber.org/goleak"
)

const guard = 30 * time.Second

var heraldBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "herald-e2e")
	if err != nil {
		panic(err)
	}
	heraldBin = filepath.Join(dir, "herald")
	build := exec.Command("go", "build", "-o", heraldBin, "github.com/herald-desktop/herald")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building herald failed:", err)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		// Like goleak.VerifyTestMain: no goroutine may outlive the tests.
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines outlived the tests:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// watchProc is a running `herald watch --json`.
type watchProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// stderr is what watch wrote there; read it once watch ended.
	stderr *bytes.Buffer
	lines  chan map[string]any
	mu     sync.Mutex
	raw    bytes.Buffer
}

func (w *watchProc) output() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.raw.String()
}

func startWatch(t *testing.T, args ...string) *watchProc {
	t.Helper()
	return startWatchEnv(t, nil, args...)
}

// startWatchEnv is startWatch with extra environment variables.
func startWatchEnv(t *testing.T, env []string, args ...string) *watchProc {
	t.Helper()
	return startWatchIO(t, env, "", args...)
}

// startWatchStdin is startWatch that first writes input to watch's stdin.
func startWatchStdin(t *testing.T, input string, args ...string) *watchProc {
	t.Helper()
	return startWatchIO(t, nil, input, args...)
}

func startWatchIO(t *testing.T, env []string, input string, args ...string) *watchProc {
	t.Helper()
	cmd := exec.Command(heraldBin, append([]string{"watch", "--json"}, args...)...)
	cmd.Env = append(append(os.Environ(), "HERALD_TOKEN="), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if input != "" {
		io.WriteString(stdin, input)
	}
	w := &watchProc{cmd: cmd, stdin: stdin, stderr: &stderr, lines: make(chan map[string]any, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			w.mu.Lock()
			w.raw.Write(append(sc.Bytes(), '\n'))
			w.mu.Unlock()
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				t.Errorf("watch --json printed a non-JSON line: %q", sc.Text())
				continue
			}
			w.lines <- m
		}
		close(w.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			t.Logf("watch stderr: %s", stderr.String())
		}
	})
	return w
}

// waitLine reads records until keep matches one.
func (w *watchProc) waitLine(t *testing.T, what string, keep func(map[string]any) bool) map[string]any {
	t.Helper()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-w.lines:
			if !ok {
				t.Fatalf("watch exited while waiting for %s", what)
			}
			if keep(m) {
				return m
			}
		case <-timer.C:
			out := w.output()
			if len(out) > 3000 {
				out = out[len(out)-3000:]
			}
			t.Fatalf("timed out waiting for %s; watch printed (tail):\n%s", what, out)
		}
	}
}

func field(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(heraldBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func waitServer(t *testing.T, srv *hermestest.Server, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, guard, "the gateway: "+what, srv.Changed, cond)
}

// TestWatchApproveEndToEnd: fake gateway -> `herald watch --json` in a
// subprocess -> answered with `herald approve` from another process -> the
// gateway records the choice; in both protocol dialects.
func TestWatchApproveEndToEnd(t *testing.T) {
	for _, d := range []hermestest.Dialect{hermestest.Legacy, hermestest.Modern} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d, Token: "e2e-token-" + d.String()})
			defer srv.Close()
			live, stored := srv.CreateSession()
			dir := t.TempDir()
			ctl := filepath.Join(dir, "run", "ctl.sock") // the socket folder must be private (0700)
			db := filepath.Join(dir, "audit.db")
			w := startWatch(t, "--gateway", "lab="+srv.URL, "--token", srv.Token(), "--session", stored, "--control", ctl, "--db", db)
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

			// Bad input first: nothing is lost from the inbox.
			if _, e, code := run(t, "approve", "--control", ctl, "nosuch", "once"); code != 1 || !strings.Contains(e, "no approval with id") || strings.Count(strings.TrimSpace(e), "\n") != 0 {
				t.Fatalf("unknown id: exit %d, stderr %q", code, e)
			}
			if _, e, code := run(t, "approve", "--control", ctl, "x", "maybe"); code != 2 || !strings.Contains(e, "not a choice") {
				t.Fatalf("invalid choice: exit %d, stderr %q", code, e)
			}
			if _, e, code := run(t, "pending", "--control", filepath.Join(dir, "none.sock")); code != 1 || !strings.Contains(e, "no running Herald") {
				t.Fatalf("no daemon: exit %d, stderr %q", code, e)
			}

			_, agent, err := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 git push --force"})
			if err != nil {
				t.Fatal(err)
			}
			arrived := w.waitLine(t, "approval", func(m map[string]any) bool {
				return m["type"] == "approval" && m["change"] == "arrived"
			})
			id := arrived["id"].(string)
			if got := field(arrived, "request", "command"); got != "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 git push --force" {
				t.Fatalf("request command %v", got)
			}
			out, _, code := run(t, "pending", "--control", ctl)
			// The terminal is where the user decides: it shows the command
			// as it runs, not masked (masking can hide code).
			if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 git push --force") {
				t.Fatalf("pending: exit %d %q (must list %s with the command as it runs)", code, out, id)
			}
			if len(srv.Answers()) != 0 {
				t.Fatal("the gateway got an answer before the user gave one")
			}
			if _, e, code := run(t, "approve", "--control", ctl, id, "always"); code != 2 || !strings.Contains(e, "--yes-always") {
				t.Fatalf("always without confirmation: exit %d %q", code, e)
			}
			out, e, code := run(t, "approve", "--control", ctl, id, "once")
			if code != 0 || !strings.Contains(out, "confirmed by the gateway") {
				t.Fatalf("approve: exit %d out %q err %q", code, out, e)
			}
			if c := <-agent; c != "once" {
				t.Fatalf("agent got %q", c)
			}
			waitServer(t, srv, "answer", func() bool { return len(srv.Answers()) == 1 })
			if a := srv.Answers()[0]; a.Choice != "once" || a.Session != live {
				t.Fatalf("gateway recorded %+v", a)
			}
			w.waitLine(t, "resolved", func(m map[string]any) bool {
				return m["type"] == "approval" && m["id"] == id && field(m, "request", "state") == "resolved"
			})
			// A second answer is refused and sends nothing.
			if _, e, code := run(t, "approve", "--control", ctl, id, "deny"); code != 1 || !strings.Contains(e, "already answered") {
				t.Fatalf("second answer: exit %d %q", code, e)
			}
			out, _, code = run(t, "log", "--control", ctl)
			if code != 0 || !strings.Contains(out, "resolved") || !strings.Contains(out, "choice=once") {
				t.Fatalf("log: exit %d %q", code, out)
			}
			if len(srv.Answers()) != 1 {
				t.Fatalf("gateway saw %d answers, want exactly 1", len(srv.Answers()))
			}
			if strings.Contains(w.output(), srv.Token()) {
				t.Fatal("watch printed the gateway token")
			}
		})
	}
}
