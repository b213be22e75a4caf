package cli

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
)

// runBounded runs herald and fails the test instead of hanging if it does
// not exit within guard.
func runBounded(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	cmd := exec.CommandContext(ctx, heraldBin, args...)
	cmd.Env = append(os.Environ(), "HERALD_TOKEN=", "HERALD_API_KEY=", "HERALD_PASSWORD=", "HERALD_USERNAME=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("herald %v did not exit within %s; printed %q %q", args, guard, out.String(), errb.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestWatchExitsWhenRefused: a refusal only the user can fix (a wrong API
// key, a wrong gateway token, a --start that failed) ends `herald watch`
// with exit 1 and one clear line naming the flag to fix, instead of
// hanging.
func TestWatchExitsWhenRefused(t *testing.T) {
	t.Parallel()
	api := apiservertest.NewServer(apiservertest.Options{})
	t.Cleanup(api.Close)
	gw := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Token: "right-token-0123456789"})
	t.Cleanup(gw.Close)
	const wrongKey = "wrong-key-abcdefghijklmnop"
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"wrong API key", []string{"--api", "api=" + api.URL, "--api-key", wrongKey}, []string{"api: the API server refused the API key", "--api-key", "HERALD_API_KEY"}},
		{"no API key", []string{"--api", "api=" + api.URL}, []string{"api: the API server wants its API key and Herald has none: pass it with --api-key or HERALD_API_KEY"}},
		{"wrong API key with --start", []string{"--api", "api=" + api.URL, "--api-key", wrongKey, "--start", "hello"}, []string{"api: the API server refused the API key", "--api-key"}},
		{"wrong gateway token", []string{"--gateway", "lab=" + gw.URL, "--token", "wrong-token-0123456789"}, []string{"lab: the gateway refused the connection", "--token"}},
		{"failed start", []string{"--api", "api=" + api.URL, "--api-key", api.Key(), "--start", "   "}, []string{"api: starting the run failed", "a run needs input"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctl := filepath.Join(t.TempDir(), "run", "ctl.sock")
			out, errOut, code := runBounded(t, append([]string{"watch", "--db", "", "--control", ctl}, tc.args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stdout %q stderr %q", code, out, errOut)
			}
			line := strings.TrimSpace(errOut)
			if strings.Count(line, "\n") != 0 {
				t.Fatalf("stderr is not one line: %q", errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("stderr %q does not say %q", line, w)
				}
			}
			if strings.Count(line, "herald watch:") != 1 || strings.Contains(line, "failed: starting") {
				t.Errorf("stuttering prefixes: %q", line)
			}
			if strings.Contains(out+errOut, wrongKey) || strings.Contains(out+errOut, "wrong-token") {
				t.Errorf("a secret was printed: %q %q", out, errOut)
			}
			if strings.Contains(out, "✗") {
				t.Errorf("the refusal was printed twice: stdout %q", out)
			}
		})
	}
}

// TestStatusPrinterSaysThingsOnce: "connected" is printed once however
// many events report it; retries of the same failure print one line with
// a countdown, then "still retrying" every 30 s while it repeats; a new
// failure or a new connection prints again.
func TestStatusPrinterSaysThingsOnce(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	p := newStatusPrinter(&printer{w: &buf})
	p.now = func() time.Time { return now }
	st := func(state source.State, err string, attempt int, in time.Duration) source.Status {
		s := source.Status{Gateway: "lab", State: state, Err: err, Attempt: attempt}
		if in > 0 {
			s.NextRetry = now.Add(in)
		}
		return s
	}
	for i := 0; i < 5; i++ {
		p.show(st(source.StateConnected, "", 0, 0))
	}
	// The same failure, retried every 10 s for 75 s: said at once, then
	// "still retrying" every 30 s (at 30 s and 60 s), not at every try.
	for i := 1; i <= 8; i++ {
		p.show(st(source.StateConnecting, "", i, 0))
		p.show(st(source.StateReconnecting, "dial tcp: connection refused", i, 4*time.Second))
		now = now.Add(10 * time.Second)
	}
	p.show(st(source.StateReconnecting, "HTTP 503", 9, 8*time.Second))
	p.show(st(source.StateConnected, "", 0, 0))
	p.show(st(source.StateConnected, "", 0, 0))
	want := []string{
		"● lab connected",
		"○ lab: dial tcp: connection refused; retrying in 4s",
		"○ lab: still retrying since 08:00:00 (dial tcp: connection refused); retrying in 4s",
		"○ lab: still retrying since 08:00:00 (dial tcp: connection refused); retrying in 4s",
		"○ lab: HTTP 503; retrying in 8s",
		"● lab connected",
	}
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWatchExitsWhenSignedOut: a gateway that ends the session with close
// 4401 while watch runs needs the user too: watch exits 1 with one line.
func TestWatchExitsWhenSignedOut(t *testing.T) {
	t.Parallel()
	gw := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	t.Cleanup(gw.Close)
	cmd := exec.Command(heraldBin, "watch", "--db", "", "--control", filepath.Join(t.TempDir(), "run", "ctl.sock"), "--gateway", "lab="+gw.URL, "--token", gw.Token())
	var errb lockedBuf
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	connected := make(chan struct{})
	var out lockedBuf
	go func() {
		sc := bufio.NewScanner(stdout)
		once := false
		for sc.Scan() {
			out.Write(append(sc.Bytes(), '\n'))
			if !once && strings.Contains(sc.Text(), "● lab connected") {
				once = true
				close(connected)
			}
		}
	}()
	select {
	case <-connected:
	case <-time.After(guard):
		t.Fatalf("watch never connected; printed %q %q", out.String(), errb.String())
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	gw.CloseAll(4401, "authentication revoked")
	select {
	case err := <-exited:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Fatalf("exit %v, want 1; stderr %q", err, errb.String())
		}
	case <-time.After(guard):
		t.Fatalf("watch did not exit after close 4401; printed %q %q", out.String(), errb.String())
	}
	line := strings.TrimSpace(errb.String())
	if strings.Count(line, "\n") != 0 || !strings.Contains(line, "lab: the gateway ended the session (4401)") || !strings.Contains(line, "--token") {
		t.Fatalf("stderr %q", line)
	}
}

// lockedBuf is a bytes.Buffer safe for a process's writer goroutine and
// the test's reads.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *lockedBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *lockedBuf) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
