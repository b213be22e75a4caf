package integration

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
)

// heraldBin is the herald binary built once for the suite (TestMain).
var heraldBin string

func buildHerald(dir string) error {
	if b := os.Getenv("HERALD_BIN"); b != "" {
		heraldBin = b
		return nil
	}
	heraldBin = filepath.Join(dir, "herald")
	build := exec.Command("go", "build", "-o", heraldBin, "github.com/herald-desktop/herald")
	build.Stderr = os.Stderr
	return build.Run()
}

// herald is one Herald instance: its control socket, history and config
// folder, private to the test.
type herald struct {
	t   *testing.T
	dir string
	ctl string
	db  string
}

func newHerald(t *testing.T) *herald {
	dir := t.TempDir()
	return &herald{t: t, dir: dir, ctl: filepath.Join(dir, "run", "ctl.sock"), db: filepath.Join(dir, "audit.db")}
}

// env is what every herald process of the test gets: no inherited
// credentials, a private config and runtime folder.
func (h *herald) env(extra ...string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "HERALD_TOKEN", "HERALD_PASSWORD", "HERALD_USERNAME", "HERALD_API_KEY", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "HOME":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+h.dir, "XDG_CONFIG_HOME="+filepath.Join(h.dir, "config"), "HERALD_DISCOVERY_INTERVAL=500ms")
	return append(env, extra...)
}

// watch is a running `herald watch --json`.
type watch struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	recs  []map[string]any
	raw   bytes.Buffer
	errb  bytes.Buffer
	wake  chan struct{}
	done  chan struct{}
	code  int
}

// watch starts `herald watch --json` with args (and --control, --db).
func (h *herald) watch(env []string, args ...string) *watch {
	h.t.Helper()
	return h.watchArgs(env, append([]string{"--control", h.ctl, "--db", h.db}, args...)...)
}

// attach starts `herald watch --json --control` with nothing else: beside
// this instance's running Herald it attaches to it.
func (h *herald) attach() *watch {
	h.t.Helper()
	return h.watchArgs(nil, "--control", h.ctl)
}

// watchArgs starts `herald watch --json` with exactly args.
func (h *herald) watchArgs(env []string, args ...string) *watch {
	t := h.t
	t.Helper()
	cmd := exec.Command(heraldBin, append([]string{"watch", "--json"}, args...)...)
	cmd.Env = h.env(env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w := &watch{t: t, cmd: cmd, wake: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &w.mu, b: &w.errb}
	w.stdin, _ = cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			w.mu.Lock()
			w.raw.Write(append(sc.Bytes(), '\n'))
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				t.Errorf("watch --json printed a non-JSON line: %q", sc.Text())
			} else {
				w.recs = append(w.recs, m)
			}
			close(w.wake)
			w.wake = make(chan struct{})
			w.mu.Unlock()
		}
		err := cmd.Wait()
		w.mu.Lock()
		w.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			w.code = ee.ExitCode()
		}
		close(w.wake)
		w.wake = make(chan struct{})
		w.mu.Unlock()
		close(w.done)
	}()
	t.Cleanup(func() {
		w.Stop()
		if t.Failed() {
			t.Logf("watch output (tail):\n%s\nwatch stderr:\n%s", tail(w.Output(), 4000), w.Stderr())
		}
	})
	return w
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Stop ends watch with SIGTERM (SIGKILL after a bound) and waits.
func (w *watch) Stop() {
	select {
	case <-w.done:
		return
	default:
	}
	w.stdin.Close()
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// Exited waits for watch to exit on its own and returns its exit code.
func (w *watch) Exited() int {
	w.t.Helper()
	select {
	case <-w.done:
	case <-time.After(guard):
		w.t.Fatalf("watch still running after %s", guard)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.code
}

func (w *watch) Output() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.raw.String()
}

func (w *watch) Stderr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.errb.String()
}

// records is a copy of every record so far.
func (w *watch) records() []map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]map[string]any(nil), w.recs...)
}

// Mark is the number of records so far (for Wait's from).
func (w *watch) Mark() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.recs)
}

// Wait returns the first record at index >= from for which keep holds.
func (w *watch) Wait(from int, what string, keep func(map[string]any) bool) map[string]any {
	w.t.Helper()
	deadline := time.NewTimer(guard)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		for i := from; i < len(w.recs); i++ {
			if keep(w.recs[i]) {
				r := w.recs[i]
				w.mu.Unlock()
				return r
			}
		}
		from = len(w.recs)
		wake := w.wake
		w.mu.Unlock()
		select {
		case <-wake:
		case <-w.done:
			w.mu.Lock()
			n := len(w.recs)
			w.mu.Unlock()
			if n == from {
				w.t.Fatalf("watch exited while waiting for %s", what)
			}
		case <-deadline.C:
			w.t.Fatalf("no %s within %s", what, guard)
		}
	}
}

// Connected waits for a status record saying the gateway (or API server)
// is connected.
func (w *watch) Connected(from int) {
	w.t.Helper()
	w.Wait(from, "connected", func(m map[string]any) bool {
		return m["type"] == "status" && field(m, "status", "state") == "connected"
	})
}

// Approval waits for an approval or prompt record of change (arrived,
// updated, …) for which keep (may be nil) holds.
func (w *watch) Approval(from int, change string, keep func(map[string]any) bool) map[string]any {
	w.t.Helper()
	return w.Wait(from, "approval "+change, func(m map[string]any) bool {
		return m["type"] == "approval" && m["change"] == change && (keep == nil || keep(m))
	})
}

// Event waits for an event record of kind.
func (w *watch) Event(from int, kind string, keep func(map[string]any) bool) map[string]any {
	w.t.Helper()
	return w.Wait(from, "event "+kind, func(m map[string]any) bool {
		return m["type"] == "event" && field(m, "event", "kind") == kind && (keep == nil || keep(m))
	})
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

func str(m map[string]any, path ...string) string {
	s, _ := field(m, path...).(string)
	return s
}

// run runs a herald subcommand against this instance's control socket
// (--control is added after the subcommand) and returns stdout, stderr
// and the exit code.
func (h *herald) run(args ...string) (string, string, int) {
	h.t.Helper()
	full := append([]string{args[0], "--control", h.ctl}, args[1:]...)
	return h.runRaw(nil, "", full...)
}

// runRaw runs herald with exactly args, env and stdin.
func (h *herald) runRaw(env []string, stdin string, args ...string) (string, string, int) {
	h.t.Helper()
	cmd := exec.Command(heraldBin, args...)
	cmd.Env = h.env(env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(guard):
		_ = cmd.Process.Kill()
		<-done
		h.t.Fatalf("herald %s: still running after %s", strings.Join(args, " "), guard)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// mustRun is run that fails the test on a non-zero exit.
func (h *herald) mustRun(args ...string) string {
	h.t.Helper()
	out, e, code := h.run(args...)
	if code != 0 {
		h.t.Fatalf("herald %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, e)
	}
	return out
}

// filesContain reports the files under dir whose bytes contain s.
func filesContain(t *testing.T, dir, s string) []string {
	t.Helper()
	var hits []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(s)) {
			hits = append(hits, p)
		}
		return nil
	})
	return hits
}

func fmtRec(m map[string]any) string {
	b, _ := json.Marshal(m)
	return fmt.Sprint(string(b))
}
