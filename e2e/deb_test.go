//go:build linux

package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The .deb's files the app menu needs.
const (
	debEntry = "/usr/share/applications/herald.desktop"
	debIcons = "/usr/share/icons/hicolor"
)

// launcher is how the test starts Herald: the built binary, or the
// command line of the installed desktop entry.
type launcher struct {
	bin  string
	args []string
	// wmClass is the entry's StartupWMClass ("" when not from an entry).
	wmClass string
}

// installDeb installs the .deb at path (dpkg -i, as root: CI runs on a
// throwaway machine), checks the app-menu entry as a desktop would read
// it, and returns the command line its Exec= key starts. The package is
// removed when the test ends.
func installDeb(t *testing.T, deb string, sum *summary) launcher {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("HERALD_E2E_DEB=%s needs root (dpkg -i); run without it to test the built binary", deb)
	}
	t0 := time.Now()
	if out, err := exec.Command("dpkg", "-i", deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg -i %s: %v\n%s", deb, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("dpkg", "-r", "herald").CombinedOutput(); err != nil {
			t.Errorf("dpkg -r herald: %v\n%s", err, out)
		}
	})
	if p, err := exec.LookPath("desktop-file-validate"); err == nil {
		if out, err := exec.Command(p, debEntry).CombinedOutput(); err != nil {
			t.Fatalf("desktop-file-validate %s: %v\n%s", debEntry, err, out)
		}
	}
	entry, err := readDesktopEntry(debEntry)
	if err != nil {
		t.Fatal(err)
	}
	argv, err := execArgs(entry["Exec"])
	if err != nil {
		t.Fatalf("%s: %v", debEntry, err)
	}
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		t.Fatalf("%s: Exec=%s: %v", debEntry, entry["Exec"], err)
	}
	icon := entry["Icon"]
	for _, n := range []string{"16x16", "48x48", "256x256"} {
		if _, err := os.Stat(filepath.Join(debIcons, n, "apps", icon+".png")); err != nil {
			t.Errorf("the entry's Icon=%s has no %s icon in %s: %v", icon, n, debIcons, err)
		}
	}
	if entry["StartupWMClass"] == "" {
		t.Errorf("%s has no StartupWMClass: docks cannot match the window to it", debEntry)
	}
	sum.add("package", fmt.Sprintf("installed %s in %s; launching %s Exec=%s", filepath.Base(deb), since(t0), debEntry, entry["Exec"]))
	return launcher{bin: bin, args: argv[1:], wmClass: entry["StartupWMClass"]}
}

// readDesktopEntry reads the [Desktop Entry] group's keys (unlocalised).
func readDesktopEntry(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	keys := map[string]string{}
	group := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			group = line
		case group == "[Desktop Entry]":
			k, v, ok := strings.Cut(line, "=")
			if ok && !strings.Contains(k, "[") {
				keys[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if keys["Exec"] == "" {
		return nil, fmt.Errorf("%s has no Exec= in [Desktop Entry]", path)
	}
	return keys, nil
}

// execArgs splits an Exec= value as the desktop entry spec says: quoted
// arguments, backslash escapes inside quotes, field codes (%f, %U, ...)
// dropped since Herald is started without files or URLs, %% a percent.
func execArgs(v string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case quoted && c == '\\' && i+1 < len(v):
			i++
			cur.WriteByte(v[i])
		case c == '"':
			quoted, inArg = !quoted, true
		case !quoted && (c == ' ' || c == '\t'):
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		case !quoted && c == '%' && i+1 < len(v):
			i++
			if v[i] == '%' {
				cur.WriteByte('%')
				inArg = true
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if quoted {
		return nil, errors.New("unterminated quote in Exec=")
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("empty Exec=")
	}
	return args, nil
}

func TestExecArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{"herald", []string{"herald"}, false},
		{"herald --hidden %U", []string{"herald", "--hidden"}, false},
		{`"/opt/my apps/herald" --hidden`, []string{"/opt/my apps/herald", "--hidden"}, false},
		{`"/opt/a\"b/herald"`, []string{`/opt/a"b/herald`}, false},
		{"herald 100%%", []string{"herald", "100%"}, false},
		{`"herald`, nil, true},
		{"  ", nil, true},
	}
	for _, tc := range tests {
		got, err := execArgs(tc.in)
		if (err != nil) != tc.err || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("execArgs(%q) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// windowIdentity checks what a desktop matches the window by: its WM_CLASS
// is the entry's StartupWMClass, and it carries an icon.
func (h *harness) windowIdentity(win, wmClass string) {
	h.t.Helper()
	out, err := h.e.run(5*time.Second, "xprop", "-id", win, "WM_CLASS", "_NET_WM_ICON")
	if err != nil {
		h.fatalf("xprop: %v", err)
	}
	class := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "WM_CLASS") {
			class = line
		}
	}
	if wmClass != "" && !strings.Contains(class, `"`+wmClass+`"`) {
		h.t.Errorf("window %s has %q, want the entry's StartupWMClass %q", win, class, wmClass)
	}
	if strings.Contains(out, "_NET_WM_ICON:  not found") || !strings.Contains(out, "_NET_WM_ICON(CARDINAL)") {
		h.t.Errorf("window %s has no icon (_NET_WM_ICON): %s", win, firstLines(out, 3))
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// cliWithoutDisplay runs the desktop binary's terminal answers with no
// display at all: they must work, and no GTK or Go trace may show.
func cliWithoutDisplay(t *testing.T, bin string) {
	t.Helper()
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"version"}, 0, "herald "},
		{[]string{"help"}, 0, "Usage:"},
		{[]string{"--help"}, 0, "Usage:"},
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{nil, 1, "no graphical display"},
	}
	for _, tc := range tests {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s %q: %v", bin, tc.args, err)
		}
		if code != tc.code || !strings.Contains(string(out), tc.out) ||
			strings.Contains(string(out), "goroutine") || strings.Contains(string(out), "Gtk") {
			t.Errorf("without a display, herald %q: exit %d, output %q; want exit %d and %q", tc.args, code, out, tc.code, tc.out)
		}
	}
}
