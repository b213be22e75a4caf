package hermesplugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestEditConfig(t *testing.T) {
	t.Parallel()
	const sec = "security:\n  approval:\n    transport: herald\n    transport_fallback: builtin\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "plugins:\n  enabled:\n    - herald\n" + sec},
		{"other keys", "# my config\nmodel: x\napprovals:\n  mode: manual\n",
			"# my config\nmodel: x\napprovals:\n  mode: manual\nplugins:\n  enabled:\n    - herald\n" + sec},
		{"flow list", "plugins:\n  enabled: [disk-cleanup]\n", "plugins:\n  enabled: [disk-cleanup, herald]\n" + sec},
		{"empty flow list", "plugins:\n  enabled: []\n", "plugins:\n  enabled: [herald]\n" + sec},
		{"block list", "plugins:\n  enabled:\n    - a\n    - b\n  disabled:\n    - c\nmodel: x\n",
			"plugins:\n  enabled:\n    - a\n    - b\n    - herald\n  disabled:\n    - c\nmodel: x\n" + sec},
		{"list at the key's indent", "plugins:\n  enabled:\n  - a\nmodel: x\n",
			"plugins:\n  enabled:\n  - a\n  - herald\nmodel: x\n" + sec},
		{"no enabled key", "plugins:\n  disabled: [x]\n", "plugins:\n  disabled: [x]\n  enabled:\n    - herald\n" + sec},
		{"security exists", "security:\n  tirith_enabled: false\n",
			"security:\n  tirith_enabled: false\n  approval:\n    transport: herald\n    transport_fallback: builtin\nplugins:\n  enabled:\n    - herald\n"},
		{"transport builtin", "security:\n  approval:\n    transport: builtin\n    timeout: 5\n",
			"security:\n  approval:\n    transport: herald\n    timeout: 5\n    transport_fallback: builtin\nplugins:\n  enabled:\n    - herald\n"},
		{"four-space indent", "plugins:\n    enabled:\n        - a\n", "plugins:\n    enabled:\n        - a\n        - herald\n" + sec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := EditConfig(tc.in, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			again, err := EditConfig(got, Settings{})
			if err != nil || again != got {
				t.Fatalf("not idempotent:\n%s\n%v", again, err)
			}
			yamlSame(t, got)
		})
	}
	for _, bad := range []string{"security: {approval: {transport: builtin}}\n", "plugins:\n  enabled: *list\n"} {
		if _, err := EditConfig(bad, Settings{}); err == nil {
			t.Errorf("edited %q", bad)
		}
	}
	got, err := EditConfig("", Settings{NoTransport: true})
	if err != nil || got != "plugins:\n  enabled:\n    - herald\n" { // checked without yamlSame: no security
		t.Fatalf("no transport: %q %v", got, err)
	}
	got, err = EditConfig("", Settings{Fallback: "deny"})
	if err != nil || !strings.Contains(got, "transport_fallback: deny") {
		t.Fatalf("deny fallback: %q %v", got, err)
	}
}

// yamlSame checks the edited config with a YAML parser when Debian's python3
// has one (it does wherever Hermes runs): herald enabled, transport set.
func yamlSame(t *testing.T, text string) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		return
	}
	cmd := exec.Command(py, "-c", `import sys, yaml
c = yaml.safe_load(sys.stdin.read())
assert "herald" in c["plugins"]["enabled"], c
assert c["security"]["approval"]["transport"] == "herald", c
print("ok")`)
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && strings.Contains(string(ee.Stderr), "No module named 'yaml'") {
			return
		}
		t.Fatalf("python3 yaml rejects the result: %v\n%s", err, text)
	}
	_ = out
}

func TestPrepareAndApply(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cfg := filepath.Join(home, "config.yaml")
	if err := os.WriteFile(cfg, []byte("model: x\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(home, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Changes() || len(p.Files) != 6 || !strings.Contains(Diff(p.OldConfig, p.NewConfig), "+     - herald") {
		t.Fatalf("plan %+v\n%s", p, Diff(p.OldConfig, p.NewConfig))
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "plugins", "herald", "dashboard", "plugin_api.py")); len(b) == 0 {
		t.Fatal("plugin not written")
	}
	if fi, _ := os.Stat(cfg); fi.Mode().Perm() != 0o640 {
		t.Fatalf("config mode %v", fi.Mode())
	}
	if b, _ := os.ReadFile(cfg + ".before-herald"); string(b) != "model: x\n" {
		t.Fatalf("backup %q", b)
	}
	p2, err := Prepare(home, Settings{})
	if err != nil || p2.Changes() {
		t.Fatalf("second plan changes: %+v %v", p2, err)
	}
	if _, err := Prepare(filepath.Join(home, "nope"), Settings{}); err == nil {
		t.Fatal("a missing home was accepted")
	}
}
