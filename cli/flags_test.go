package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func runMain(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// TestBadFlagIsOneLine: a flag without its value, an unknown flag or a
// bad value is one line naming the flag as typed (--token), exit 2, not
// the whole help.
func TestBadFlagIsOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "--token"}, "herald watch: flag needs an argument: --token; see `herald watch --help`"},
		{[]string{"watch", "--tokn", "x"}, "herald watch: unknown flag --tokn (did you mean --token?); see `herald watch --help`"},
		{[]string{"watch", "--gatway", "http://127.0.0.1:9119"}, "herald watch: unknown flag --gatway (did you mean --gateway?); see `herald watch --help`"},
		{[]string{"ask", "--sesion", "x", "hi"}, "herald ask: unknown flag --sesion (did you mean --session?); see `herald ask --help`"},
		{[]string{"watch", "--zzzzzz"}, "herald watch: unknown flag --zzzzzz; see `herald watch --help`"},
		{[]string{"log", "-m", "3"}, "herald log: unknown flag -m; see `herald log --help`"},
		{[]string{"watch", "--gateway", "not a url", "--token", "x"}, `herald watch: --gateway "not a url" is not a valid URL (invalid character " " in host name): give one like http://127.0.0.1:9119`},
		{[]string{"watch", "--gateway", "http//127.0.0.1:9119", "--token", "x"}, `herald watch: --gateway "http//127.0.0.1:9119" lacks the ":" after http: give one like http://127.0.0.1:9119`},
		{[]string{"watch", "--api", "127.0.0.1:99999"}, `herald watch: --api "127.0.0.1:99999" has no valid port (ports are 1 to 65535): give one like http://127.0.0.1:8642`},
		{[]string{"ask", "--api", "http://[::1", "hi"}, `herald ask: --api "http://[::1" is not a valid URL (missing ']' in host): give one like http://127.0.0.1:8642`},
		{[]string{"log", "-n", "many"}, `herald log: invalid value "many" for flag -n: parse error; see ` + "`herald log --help`"},
		{[]string{"ask", "--wait", "soon", "hi"}, `herald ask: invalid value "soon" for flag --wait: parse error; see ` + "`herald ask --help`"},
	} {
		out, errb, code := runMain(t, tc.args...)
		if code != 2 || out != "" || strings.TrimSpace(errb) != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errb, tc.want)
		}
	}
}

// TestHelpIsDoubleDashWithExamples: --help prints to stdout, names every
// flag --name with its value, and shows examples.
func TestHelpIsDoubleDashWithExamples(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"watch", "pending", "approve", "answer", "log", "stop", "ask"} {
		out, errb, code := runMain(t, cmd, "--help")
		if code != 0 || errb != "" {
			t.Fatalf("%s --help: exit %d, stderr %q", cmd, code, errb)
		}
		for _, want := range []string{"Usage: herald " + cmd, "Flags:\n  --", "Examples:\n  herald " + cmd} {
			if !strings.Contains(out, want) {
				t.Errorf("%s --help lacks %q:\n%s", cmd, want, out)
			}
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "  -") && !strings.HasPrefix(l, "  --") && !strings.HasPrefix(l, "  -n ") {
				t.Errorf("%s --help: %q is in -flag style", cmd, l)
			}
			if strings.HasPrefix(l, "  --") && strings.HasSuffix(l, " VALUE") {
				t.Errorf("%s --help: %q names its value only VALUE; give it a placeholder", cmd, l)
			}
		}
	}
	out, _, _ := runMain(t, "watch", "--help")
	for _, want := range []string{"  --gateway URL\n", "  --token-file PATH\n", "  --demo\n", "herald watch --demo", "still retrying"} {
		if !strings.Contains(out, want) {
			t.Errorf("watch --help lacks %q", want)
		}
	}
}

// TestLogWithoutHistorySaysSo: `herald log` with no Herald running and no
// history file says there is no history yet, and exits 0.
func TestLogWithoutHistorySaysSo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, errb, code := runMain(t, "log", "--control", filepath.Join(dir, "run", "ctl.sock"), "--db", filepath.Join(dir, "audit.db"))
	if code != 0 || errb != "" || !strings.HasPrefix(out, "No approval history yet") {
		t.Fatalf("log: exit %d, stdout %q, stderr %q", code, out, errb)
	}
}
