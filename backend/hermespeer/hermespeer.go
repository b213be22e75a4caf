// Package hermespeer starts the REAL Hermes Agent servers (hermes-peer: the
// unmodified hermes-agent 0.18.2 / 0.19.0 server code with a stub agent in
// place of the model) for Herald's tests. It is plain test support: no
// globals, and every process it starts is stopped by its pid in t.Cleanup,
// also when the test fails.
//
// Usage:
//
//	p := hermespeer.Start(t, hermespeer.WS, "0.19.0")
//	// p.URL is ws://127.0.0.1:PORT/api/ws?token=TOKEN, p.Secret the token
//	p.Restart(t) // the same port and HERMES_HOME: state.db survives
//
//	a := hermespeer.Start(t, hermespeer.API, "0.18.2")
//	// a.URL is http://127.0.0.1:PORT, a.Secret the bearer key
//
// Where the peer is: $HERMES_PEER if set, else ../shared/hermes-peer from the
// module root (the directory holding go.mod). $HERMES_PEER_SRC (a
// hermes-agent checkout used instead of the archive) is passed through to
// the peer's launcher. When the peer is absent the test is skipped with one
// line saying how to point at it; with CI=true absence, or a server that
// cannot start, fails the test instead.
//
// Each server gets HERMES_HOME=t.TempDir(), so the launcher execs Python
// directly and the pid held here is the server's. It never writes into the
// peer directory (CI's copy is read-only). The server's stderr goes to a
// file; on failure its tail is logged.
package hermespeer

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Kind selects the server: the dashboard's /api/ws JSON-RPC gateway or the
// API server (/v1/runs with SSE).
type Kind string

const (
	WS  Kind = "ws"
	API Kind = "api"
)

// Versions are the Hermes versions the peer can run.
var Versions = []string{"0.18.2", "0.19.0"}

// Bounds. A first start of a version extracts and byte-compiles the
// archive (a few seconds, far more on a loaded 2-core machine).
const (
	readyBound = 120 * time.Second
	stopBound  = 20 * time.Second
)

// Option changes how a server starts.
type Option func(*config)

type config struct {
	env    []string
	secret string
	setup  func(home string) error
}

// Setup prepares HERMES_HOME before the server first starts, e.g. to
// install a plugin into home/plugins. The peer's launcher uses a home that
// is empty or one it wrote before, so setup that adds files must also
// write config.yaml with the peer's first line (StubConfigHeader); the
// server rewrites config.yaml on every start.
func Setup(fn func(home string) error) Option { return func(c *config) { c.setup = fn } }

// StubConfigHeader is the first line of the config.yaml the peer writes.
const StubConfigHeader = "# written by hermes-peer serve.py (ws) on every start\n"

// Env adds environment variables (KEY=VALUE) to the server's, for example
// "HERMES_STUB_APPROVAL_TIMEOUT=5".
func Env(kv ...string) Option { return func(c *config) { c.env = append(c.env, kv...) } }

// Secret sets the token (ws) or key (api) instead of a random one.
func Secret(s string) Option { return func(c *config) { c.secret = s } }

// Peer is one running real server.
type Peer struct {
	Kind    Kind
	Version string
	Port    int
	// Secret is the ws token (?token=) or the api bearer key.
	Secret string
	// URL is what a client connects to: ws://127.0.0.1:PORT/api/ws?token=SECRET
	// for ws, http://127.0.0.1:PORT for api.
	URL string
	// Base is http://127.0.0.1:PORT for both kinds (REST routes).
	Base string
	// Home is the server's HERMES_HOME; it survives Restart.
	Home string

	dir  string
	cfg  config
	logf string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the process's exit error, once done is closed
}

// Dir returns the hermes-peer directory, or skips the test (fails it when
// CI=true) with one line naming how to point at one.
func Dir(t testing.TB) string {
	t.Helper()
	dir, why := find()
	if dir == "" {
		absent(t, why)
	}
	return dir
}

// Available reports the peer directory and "" if present, else "" and why not.
func Available() (dir, why string) { return find() }

func find() (string, string) {
	if d := os.Getenv("HERMES_PEER"); d != "" {
		if isPeer(d) {
			return abs(d), ""
		}
		return "", fmt.Sprintf("HERMES_PEER=%s has no executable run script", d)
	}
	root := moduleRoot()
	if root == "" {
		return "", "no go.mod above the working directory"
	}
	d := filepath.Join(filepath.Dir(root), "shared", "hermes-peer")
	if isPeer(d) {
		return abs(d), ""
	}
	return "", "../shared/hermes-peer not found"
}

// AbsentMessage is the one line that says the real servers are not
// there (why, from Available) and how to point at them.
func AbsentMessage(why string) string {
	return "real Hermes tests skipped: " + why +
		"; set HERMES_PEER=/path/to/hermes-peer (and HERMES_PEER_SRC=/path/to/hermes-agent to run a checkout)"
}

// InCI reports CI=true (or any non-false CI): there an absent peer or a
// server that cannot start is a failure, not a skip.
func InCI() bool { return inCI() }

func absent(t testing.TB, why string) {
	t.Helper()
	msg := AbsentMessage(why)
	if inCI() {
		t.Fatal(strings.Replace(msg, "skipped", "cannot run in CI", 1))
	}
	// go test prints skips only with -v: say it once per test binary.
	skipOnce.Do(func() { fmt.Fprintln(os.Stderr, msg) })
	t.Skip(msg)
}

var skipOnce sync.Once

func inCI() bool { v := os.Getenv("CI"); return v != "" && v != "false" && v != "0" }

func isPeer(d string) bool {
	fi, err := os.Stat(filepath.Join(d, "run"))
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func abs(d string) string {
	if a, err := filepath.Abs(d); err == nil {
		return a
	}
	return d
}

func moduleRoot() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// Prepare extracts a version's source once (run prepare), so that parallel
// first starts do not each wait on the extraction lock. Optional.
func Prepare(t testing.TB, version string) {
	t.Helper()
	dir := Dir(t)
	cmd := exec.Command(filepath.Join(dir, "run"), "prepare", "--version", version)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("hermes-peer: run prepare --version %s: %v\n%s", version, err, out.Bytes())
	}
}

// Source is the directory of a version's hermes-agent source as the peer
// runs it (run prepare prints it), for tests that call Hermes' own Python
// code directly, such as its redactor.
func Source(t testing.TB, version string) string {
	t.Helper()
	dir := Dir(t)
	cmd := exec.Command(filepath.Join(dir, "run"), "prepare", "--version", version)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("hermes-peer: run prepare --version %s: %v\n%s", version, err, errb.Bytes())
	}
	src := lastLine(strings.TrimSpace(out.String()))
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		t.Fatalf("hermes-peer: run prepare --version %s printed %q, not a directory", version, out.String())
	}
	return src
}

// Start starts a real server of kind and version on a free loopback port
// and waits for its READY line. It is stopped in t.Cleanup.
func Start(t testing.TB, kind Kind, version string, opts ...Option) *Peer {
	t.Helper()
	dir := Dir(t)
	p, err := Launch(dir, kind, version, t.TempDir(), t.TempDir(), opts...)
	if p != nil {
		t.Cleanup(func() {
			// A server slow to exit on a loaded machine is killed; that
			// is the peer's business, not a failure of the test.
			if err := p.Stop(); err != nil {
				t.Logf("hermes-peer %s %s: %v", kind, version, err)
			}
			if t.Failed() {
				t.Logf("hermes-peer %s %s stderr (tail):\n%s", kind, version, p.LogTail(60))
			}
		})
	}
	if errors.Is(err, ErrMissingDeps) && !inCI() {
		t.Skipf("real Hermes tests skipped: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ErrMissingDeps is a Launch that failed because Python packages are
// missing (run install-deps).
var ErrMissingDeps = errors.New("the peer's Python packages are missing")

// Launch starts a server outside a test's lifetime, for a TestMain that
// shares one server across tests: dir is the peer directory (Available),
// home an empty HERMES_HOME, logDir where its stderr goes. The caller must
// Stop it. On error the process is already stopped; the Peer (if not nil)
// still has its log.
func Launch(dir string, kind Kind, version, home, logDir string, opts ...Option) (*Peer, error) {
	p := &Peer{Kind: kind, Version: version, dir: dir, Home: home}
	for _, o := range opts {
		o(&p.cfg)
	}
	p.Secret = p.cfg.secret
	if p.Secret == "" {
		p.Secret = randomSecret()
	}
	p.logf = filepath.Join(logDir, fmt.Sprintf("hermes-%s-%s.log", kind, version))
	if p.cfg.setup != nil {
		if err := p.cfg.setup(home); err != nil {
			return nil, fmt.Errorf("hermes-peer: preparing HERMES_HOME %s: %w", home, err)
		}
	}
	// A port picked free may be taken before the server binds it; retry
	// with another a few times.
	var err error
	for range 3 {
		port, perr := freePort()
		if perr != nil {
			return p, fmt.Errorf("hermes-peer: no free loopback port: %w", perr)
		}
		p.setPort(port)
		if err = p.launch(); err == nil {
			return p, nil
		}
		if !errors.Is(err, errExited) {
			break
		}
		if strings.Contains(p.lastStart(), "lacks Python modules") {
			return p, fmt.Errorf("%w: %s (run %s/install-deps)", ErrMissingDeps, lastLine(p.LogTail(5)), dir)
		}
		if !strings.Contains(p.lastStart(), "address already in use") {
			break
		}
	}
	return p, fmt.Errorf("hermes-peer: %s %s did not start: %v\n%s", kind, version, err, p.LogTail(40))
}

// Restart stops the server and starts it again on the same port with the
// same HERMES_HOME (sessions in state.db persist; in-memory state does not).
func (p *Peer) Restart(t testing.TB) {
	t.Helper()
	if err := p.Stop(); err != nil {
		t.Logf("hermes-peer: stop for restart: %v", err)
	}
	// The port was ours a moment ago; a lingering socket may hold it briefly.
	var err error
	for range 20 {
		if err = p.launch(); err == nil {
			return
		}
		if !strings.Contains(p.lastStart(), "address already in use") {
			break
		}
		time.Sleep(250 * time.Millisecond) // waiting on the kernel, not on the server
	}
	t.Fatalf("hermes-peer: %s %s did not restart on port %d: %v\n%s", p.Kind, p.Version, p.Port, err, p.LogTail(40))
}

var errExited = errors.New("server exited before READY")

func (p *Peer) setPort(port int) {
	p.Port = port
	p.Base = "http://127.0.0.1:" + strconv.Itoa(port)
	if p.Kind == WS {
		p.URL = "ws://127.0.0.1:" + strconv.Itoa(port) + "/api/ws?token=" + p.Secret
	} else {
		p.URL = p.Base
	}
}

// launch starts the process and waits for READY; on any error the process
// is stopped.
func (p *Peer) launch() error {
	logw, err := os.OpenFile(p.logf, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintf(logw, "=== hermes-peer run %s --version %s %d (HERMES_HOME=%s)\n", p.Kind, p.Version, p.Port, p.Home)
	cmd := exec.Command(filepath.Join(p.dir, "run"), string(p.Kind), "--version", p.Version, strconv.Itoa(p.Port), p.Secret)
	cmd.Env = append(os.Environ(), "HERMES_HOME="+p.Home, "PYTHONUNBUFFERED=1")
	cmd.Env = append(cmd.Env, p.cfg.env...)
	cmd.Stderr = logw
	cmd.SysProcAttr = sysProcAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logw.Close()
		return err
	}
	if err := cmd.Start(); err != nil {
		logw.Close()
		return err
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.done, p.err = cmd, done, nil
	p.mu.Unlock()

	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "READY ") {
				ready <- l
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout) // nothing else goes to stdout; keep the pipe drained
	}()
	go func() {
		err := cmd.Wait()
		logw.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()

	timer := time.NewTimer(readyBound)
	defer timer.Stop()
	select {
	case <-ready:
		return nil
	case <-done:
		p.mu.Lock()
		werr := p.err
		p.mu.Unlock()
		return fmt.Errorf("%w (%v)", errExited, werr)
	case <-timer.C:
		_ = p.Stop()
		return fmt.Errorf("no READY line within %s", readyBound)
	}
}

// Stop sends SIGTERM to the server's pid and SIGKILL after a bound. It is
// safe to call more than once; t.Cleanup calls it too.
func (p *Peer) Stop() error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil // already exited (its status is in the log)
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(stopBound)
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-timer.C:
	}
	killGroup(cmd.Process.Pid)
	<-done
	return fmt.Errorf("pid %d ignored SIGTERM for %s; killed", cmd.Process.Pid, stopBound)
}

// Pid is the running server's pid, or 0.
func (p *Peer) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Log is the server's stderr so far (all starts).
func (p *Peer) Log() string {
	b, _ := os.ReadFile(p.logf)
	return string(b)
}

// lastStart is the log of the latest start only.
func (p *Peer) lastStart() string {
	l := p.Log()
	if i := strings.LastIndex(l, "=== hermes-peer run "); i >= 0 {
		return l[i:]
	}
	return l
}

// LogTail is the last n lines of Log.
func (p *Peer) LogTail(n int) string {
	lines := strings.Split(strings.TrimRight(p.Log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomSecret() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "herald-test-" + hex.EncodeToString(b)
}
