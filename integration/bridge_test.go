package integration

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermespeer"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
	"github.com/herald-desktop/herald/cli"
	hermesplugin "github.com/herald-desktop/herald/hermes-plugin"
	"github.com/herald-desktop/herald/service"
)

// bridgePeer starts the real 0.19.0 dashboard with the Hermes plugin herald
// in HERMES_HOME/plugins, enabled through Hermes' managed scope (the peer
// rewrites HERMES_HOME/config.yaml on every start).
func bridgePeer(t testing.TB) *hermespeer.Peer {
	t.Helper()
	managed := t.TempDir()
	if err := os.WriteFile(filepath.Join(managed, "config.yaml"), []byte("plugins:\n  enabled: [herald]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return hermespeer.Start(t, hermespeer.WS, "0.19.0", hermespeer.Env("HERMES_MANAGED_DIR="+managed),
		hermespeer.Setup(func(home string) error {
			if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(hermespeer.StubConfigHeader), 0o600); err != nil {
				return err
			}
			return fs.WalkDir(hermesplugin.Files(), ".", func(rel string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, _ := fs.ReadFile(hermesplugin.Files(), rel)
				dst := filepath.Join(home, "plugins", hermesplugin.Name, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					return err
				}
				return os.WriteFile(dst, b, 0o644)
			})
		}))
}

// syncBuf is an io.Writer tests read while another goroutine writes.
type syncBuf struct {
	mu   sync.Mutex
	b    bytes.Buffer
	wake chan struct{}
}

func newSyncBuf() *syncBuf { return &syncBuf{wake: make(chan struct{})} }

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.wake)
	s.wake = make(chan struct{})
	return s.b.Write(p)
}

func (s *syncBuf) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func (s *syncBuf) changed() <-chan struct{} { s.mu.Lock(); defer s.mu.Unlock(); return s.wake }

// TestBridgeNoticeFromRealHermes: the real 0.19.0 dashboard (no approval
// transports) loads the plugin; its observer hook brings a real approval of
// the stub agent to a running `herald watch --bridge` as a notice with the
// session's title, and its end when it is answered where it was asked.
func TestBridgeNoticeFromRealHermes(t *testing.T) {
	t.Parallel()
	p := bridgePeer(t)
	out, errb := newSyncBuf(), newSyncBuf()
	ctx, cancel := context.WithCancel(context.Background())
	stdin, stdinW := io.Pipe()
	ctl := t.TempDir()
	if err := os.Chmod(ctl, 0o700); err != nil { // the control socket's folder must be private
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"watch", "--gateway", "lab=" + p.Base, "--token", p.Secret, "--bridge",
			"--control", filepath.Join(ctl, "ctl.sock"), "--db", ""}, stdin, out, errb)
	}()
	t.Cleanup(func() {
		cancel()
		stdinW.Close()
		<-done
		if t.Failed() {
			t.Logf("herald watch:\n%s\n%s", out.String(), errb.String())
		}
	})
	testwait.Until(t, guard, "herald connected to the bridge", out.changed, func() bool {
		return strings.Contains(out.String(), "lab-bridge connected")
	})

	other := dialRaw(t, "desktop", p.URL) // another client drives the session
	var created struct {
		SessionID string `json:"session_id"`
	}
	other.MustCall("session.create", map[string]any{"title": "Deploy the blog"}, &created)
	mark := other.Len()
	other.MustCall("prompt.submit", map[string]any{"session_id": created.SessionID, "text": "approve-me: rm -rf ./build"}, nil)
	other.WaitEvent(mark, "approval.request", nil)

	testwait.Until(t, guard, "the notice in herald", out.changed, func() bool {
		return strings.Contains(out.String(), "an approval is waiting in the dashboard: `rm -rf ./build`. Answer it where it was asked.")
	})
	if !strings.Contains(out.String(), `(session "Deploy the blog")`) {
		t.Fatalf("the notice lacks the session's title:\n%s", out.String())
	}
	other.MustCall("approval.respond", map[string]any{"session_id": created.SessionID, "choice": "deny"}, nil)
	testwait.Until(t, guard, "the notice's end in herald", out.changed, func() bool {
		return strings.Contains(out.String(), "the approval in the dashboard ended (deny)")
	})
}

// standIn is a Python process standing in for a Hermes CLI process of the
// peer's profile (hermes-plugin/tests/cli_stand_in.py).
type standIn struct {
	in    io.WriteCloser
	lines chan []string
}

func startStandIn(t testing.TB, p *hermespeer.Peer) *standIn {
	t.Helper()
	root, _ := filepath.Abs("..")
	cmd := exec.Command("/usr/bin/python3", filepath.Join(root, "hermes-plugin", "tests", "cli_stand_in.py"))
	cmd.Env = append(os.Environ(), "HERMES_HOME="+p.Home, "HERALD_SHARED="+filepath.Dir(hermespeer.Dir(t)),
		"HERMES_SESSION_PLATFORM=telegram", "HERMES_SESSION_CHAT_NAME=Ops chat", "PYTHONDONTWRITEBYTECODE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &standIn{in: in, lines: make(chan []string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- strings.Fields(sc.Text())
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("stand-in stderr:\n%s", stderr.String())
		}
	})
	return s
}

func (s *standIn) next(t testing.TB, word string) []string {
	t.Helper()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("the stand-in CLI process exited before %s", word)
			}
			if len(l) > 0 && l[0] == word {
				return l
			}
		case <-timer.C:
			t.Fatalf("no %s from the stand-in CLI process within %s", word, guard)
		}
	}
}

// bridgeHerald is Herald's service following the peer with its bridge.
func bridgeHerald(t testing.TB, p *hermespeer.Peer) (*service.Service, func() <-chan struct{}) {
	t.Helper()
	var mu sync.Mutex
	wake := make(chan struct{})
	poke := func() { mu.Lock(); close(wake); wake = make(chan struct{}); mu.Unlock() }
	changed := func() <-chan struct{} { mu.Lock(); defer mu.Unlock(); return wake }
	s := service.New(service.Config{Store: approval.NewMemoryStore()})
	t.Cleanup(s.Close)
	sub := s.Subscribe(service.WatchChanges, 0)
	go func() {
		for {
			if _, err := sub.Next(context.Background()); err != nil {
				return
			}
			poke()
		}
	}()
	if _, err := s.AddSource(service.SourceConfig{Kind: "ws", Bridge: true, Config: source.Config{Name: "lab", URL: p.Base, Secrets: map[string]string{"token": p.Secret}}}); err != nil {
		t.Fatal(err)
	}
	return s, changed
}

func bridgeRequest(t testing.TB, s *service.Service, changed func() <-chan struct{}, id string) approval.Request {
	t.Helper()
	var req approval.Request
	testwait.Until(t, guard, "the bridge approval in Herald's inbox", changed, func() bool {
		for _, r := range s.Inbox().Pending() {
			if r.RequestID == id {
				req = r
				return true
			}
		}
		return false
	})
	return req
}

// TestBridgeTransportEndToEnd: a Python process standing in for a Hermes
// CLI process runs the plugin's transport through Hermes' real
// invoke_approval_transport; Herald sees the approval through the real
// dashboard's plugin route, with where it was asked, and answers it; the
// choice reaches that process. The time from Herald's answer to the
// process having it is logged (BenchmarkBridgeAnswerToProcess measures it).
func TestBridgeTransportEndToEnd(t *testing.T) {
	t.Parallel()
	p := bridgePeer(t)
	s, changed := bridgeHerald(t, p)
	proc := startStandIn(t, p)
	io.WriteString(proc.in, "ask rm -rf ./build\n")
	id := proc.next(t, "ASKED")[1]
	req := bridgeRequest(t, s, changed, id)
	if req.Gateway != service.BridgeName("lab") || req.Command != "rm -rf ./build" ||
		!strings.Contains(req.DisplayDescription(), "asked in Telegram (Ops chat)") {
		t.Fatalf("request %+v", req)
	}
	if err := s.Answer(context.Background(), req.Key, "always", "test", false); err == nil {
		t.Fatal(`"always" went out without its confirmation`)
	}
	sent := time.Now()
	if err := s.Answer(context.Background(), req.Key, "once", "test", false); err != nil {
		t.Fatal(err)
	}
	res := proc.next(t, "RESULT")
	if res[1] != id || res[2] != "once" || res[3] != "-" {
		t.Fatalf("the CLI process got %v", res)
	}
	at, _ := strconv.ParseInt(res[4], 10, 64)
	t.Logf("Herald's answer reached the CLI process %v after Answer was called", time.Unix(0, at).Sub(sent))
	if r, _ := s.Inbox().Get(req.Key); r.State != approval.StateResolved {
		t.Fatalf("after the answer: %+v", r)
	}
}

// BenchmarkBridgeAnswerToProcess: from Herald's Answer to the CLI process
// holding the choice, through the real dashboard's plugin route and the
// plugin's socket (ms/answer; wall clocks of one machine).
func BenchmarkBridgeAnswerToProcess(b *testing.B) {
	p := bridgePeer(b)
	s, changed := bridgeHerald(b, p)
	proc := startStandIn(b, p)
	var total, worst time.Duration
	b.ResetTimer()
	for range b.N {
		io.WriteString(proc.in, "ask rm -rf ./build\n")
		id := proc.next(b, "ASKED")[1]
		req := bridgeRequest(b, s, changed, id)
		sent := time.Now()
		if err := s.Answer(context.Background(), req.Key, "once", "bench", false); err != nil {
			b.Fatal(err)
		}
		res := proc.next(b, "RESULT")
		at, _ := strconv.ParseInt(res[4], 10, 64)
		d := time.Unix(0, at).Sub(sent)
		total += d
		worst = max(worst, d)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/answer")
	b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms/answer")
}
