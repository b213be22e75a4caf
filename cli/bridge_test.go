package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
