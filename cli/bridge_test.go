package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
)

func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestBridgeInstallPrintsTheSteps(t *testing.T) {
	t.Parallel()
	out, _, code := runCLI(t, "", "bridge", "install")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"plugins/herald/", "enabled:", "- herald", "transport: herald", "transport_fallback: builtin",
		"Restart Hermes", "To turn it off"} {
		if !strings.Contains(out, want) {
			t.Errorf("the steps lack %q:\n%s", want, out)
		}
	}
}

func TestBridgeInstallWrite(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cfg := filepath.Join(home, "config.yaml")
	if err := os.WriteFile(cfg, []byte("model: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Shown first; "n" changes nothing.
	out, _, code := runCLI(t, "n\n", "bridge", "install", "--write", home)
	if code != 0 || !strings.Contains(out, "+ plugins:") || !strings.Contains(out, "nothing changed") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if b, _ := os.ReadFile(cfg); string(b) != "model: x\n" {
		t.Fatalf("changed without consent: %q", b)
	}
	out, _, code = runCLI(t, "y\n", "bridge", "install", "--write", home, "--fallback", "deny")
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	b, _ := os.ReadFile(cfg)
	if !strings.Contains(string(b), "transport_fallback: deny") || !strings.Contains(string(b), "- herald") {
		t.Fatalf("config:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(home, "plugins", "herald", "plugin.yaml")); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runCLI(t, "", "bridge", "install", "--write", home, "--fallback", "deny")
	if !strings.Contains(out, "nothing to change") {
		t.Fatalf("second run:\n%s", out)
	}
	exp := t.TempDir()
	if out, _, code = runCLI(t, "", "bridge", "install", "--export", exp); code != 0 {
		t.Fatalf("export: %s", out)
	}
	if _, err := os.Stat(filepath.Join(exp, "herald", "dashboard", "plugin_api.py")); err != nil {
		t.Fatal(err)
	}
}

// cancelOn is a writer that cancels a context once what was written
// contains a prompt: Ctrl-C while the prompt waits.
type cancelOn struct {
	lockedBuf
	prompt string
	cancel context.CancelFunc
}

func (w *cancelOn) Write(p []byte) (int, error) {
	n, err := w.lockedBuf.Write(p)
	if strings.Contains(w.String(), w.prompt) {
		w.cancel()
	}
	return n, err
}

// TestCtrlCAtAPromptEndsIt: Ctrl-C while a prompt waits for a line (it is
// caught, so the read alone would wait on) ends the command at once with
// one line saying nothing was done.
func TestCtrlCAtAPromptEndsIt(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cfg := filepath.Join(home, "config.yaml")
	if err := os.WriteFile(cfg, []byte("model: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A question waits in a running Herald, for `herald answer ID`'s prompt.
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	t.Cleanup(srv.Close)
	live, stored := srv.CreateSession()
	ctl := filepath.Join(t.TempDir(), "run", "ctl.sock")
	w := startWatch(t, "--gateway", "lab="+srv.URL, "--token", srv.Token(), "--session", stored, "--control", ctl, "--db", "")
	waitServer(t, srv, "session attached", func() bool {
		for _, s := range srv.Sessions() {
			if s.ID == live && s.Attached {
				return true
			}
		}
		return false
	})
	if _, _, err := srv.RequestPrompt(live, hermestest.PromptSpec{Kind: hermestest.PromptClarify, Question: "Deploy where?", Choices: []string{"dev", "prod"}}); err != nil {
		t.Fatal(err)
	}
	asked := w.waitLine(t, "the question", func(m map[string]any) bool {
		return m["type"] == "approval" && m["change"] == "arrived" && field(m, "request", "kind") == "clarify"
	})
	for _, tc := range []struct {
		name, prompt, want string
		args               []string
	}{
		{"bridge install --write", "Apply these changes? [y/N]", "herald bridge: interrupted, nothing changed", []string{"bridge", "install", "--write", home}},
		{"answer a question", "Answer (a choice number or your own text): ", "herald answer: interrupted, nothing was sent", []string{"answer", "--control", ctl, asked["id"].(string)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stdin, typing := io.Pipe() // nothing is ever typed
			defer typing.Close()
			out := &cancelOn{prompt: tc.prompt, cancel: cancel}
			done := make(chan int, 1)
			go func() { done <- Main(ctx, tc.args, stdin, out, out) }()
			select {
			case code := <-done:
				lines := strings.Split(strings.TrimSpace(out.String()), "\n")
				if code == 0 || lines[len(lines)-1] != tc.want {
					t.Errorf("exit %d, printed %q; want non-zero and last %q", code, out.String(), tc.want)
				}
			case <-time.After(guard):
				t.Fatalf("the prompt did not end on Ctrl-C; printed %q", out.String())
			}
		})
	}
	if b, _ := os.ReadFile(cfg); string(b) != "model: x\n" {
		t.Errorf("the config changed: %q", b)
	}
}
