package cli

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestDemoPrintsWhatTheWindowNeeds: `herald watch --demo` prints its
// gateway's URL and token, and that pair signs in (the window's Add
// gateway can follow the demo); the token is not a fixed, guessable one.
func TestDemoPrintsWhatTheWindowNeeds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(heraldBin, "watch", "--demo", "--control", filepath.Join(dir, "run", "ctl.sock"), "--db", filepath.Join(dir, "audit.db"))
	cmd.Env = append(cmd.Environ(), "HERALD_TOKEN=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	re := regexp.MustCompile(`URL (http://\S+), token (\S+)$`)
	sc := bufio.NewScanner(out)
	var url, token string
	for i := 0; i < 5 && sc.Scan(); i++ {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			url, token = m[1], m[2]
			break
		}
	}
	if url == "" {
		t.Fatal("watch --demo printed no URL and token for the window")
	}
	if token == "test-token" {
		t.Fatal("the demo gateway's token is the fixed test token")
	}
	if stage, err := gateway.Check(context.Background(), gateway.Config{URL: url, Token: token}); err != nil {
		t.Fatalf("the printed URL and token do not sign in: %s: %v", stage, err)
	}
	if _, err := gateway.Check(context.Background(), gateway.Config{URL: url, Token: "test-token"}); err == nil {
		t.Fatal("the demo gateway takes the fixed test token")
	}
	go func() {
		for sc.Scan() {
		}
	}()
}

// TestDemoBesideRunningHerald: `herald watch --demo` started while another
// Herald holds the history and the control socket runs anyway, with a
// history and a socket of its own that it names; Ctrl-C then ends it
// without reporting the links it closes itself (no "closed (1006)").
func TestDemoBesideRunningHerald(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"XDG_RUNTIME_DIR=" + filepath.Join(dir, "xdg"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "cfg")}
	if err := os.Mkdir(filepath.Join(dir, "xdg"), 0o700); err != nil {
		t.Fatal(err)
	}
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	t.Cleanup(srv.Close)
	first := startWatchEnv(t, env, "--gateway", "lab="+srv.URL, "--token", srv.Token())
	first.waitLine(t, "the first Herald connected", func(m map[string]any) bool {
		return m["type"] == "status" && field(m, "status", "state") == "connected"
	})

	cmd := exec.Command(heraldBin, "watch", "--demo")
	cmd.Env = append(append(cmd.Environ(), "HERALD_TOKEN="), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb lockedBuf
	cmd.Stderr = &errb
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill() })
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var printed []string
	own := regexp.MustCompile("answers `herald pending --control (\\S+)`")
	sock := ""
	timeout := time.After(guard)
	for approvalShown := false; !approvalShown; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the demo exited; stderr %q, printed:\n%s", errb.String(), strings.Join(printed, "\n"))
			}
			printed = append(printed, l)
			if m := own.FindStringSubmatch(l); m != nil {
				sock = m[1]
			}
			approvalShown = strings.Contains(l, "APPROVAL")
		case <-timeout:
			t.Fatalf("no approval from the demo; printed:\n%s", strings.Join(printed, "\n"))
		}
	}
	if sock == "" {
		t.Fatalf("the demo did not name its own control socket; printed:\n%s", strings.Join(printed, "\n"))
	}
	if o, e, code := run(t, "pending", "--control", sock); code != 0 || !strings.Contains(o, "rm -rf ./build") {
		t.Fatalf("pending on the demo's socket: exit %d out %q err %q", code, o, e)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var after []string
	for l := range lines {
		after = append(after, l)
	}
	cmd.Wait()
	for _, l := range after {
		if strings.Contains(l, "1006") || strings.Contains(l, "closed") || strings.HasPrefix(l, "○") {
			t.Errorf("after Ctrl-C the demo printed %q", l)
		}
	}
}
