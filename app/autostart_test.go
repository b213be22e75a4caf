package app

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Each OS gets its own mechanism behind the one Autostart.
func TestAutostartPicksTheOSMechanism(t *testing.T) {
	t.Parallel()
	tests := []struct {
		goos string
		file string // written in Dir by Set(true); "" for none
	}{
		{"linux", "herald.desktop"},
		{"freebsd", "herald.desktop"},
		{"darwin", LaunchAgentLabel + ".plist"},
		{"windows", ""},
	}
	for _, tc := range tests {
		t.Run(tc.goos, func(t *testing.T) {
			t.Parallel()
			a := Autostart{Dir: t.TempDir(), Args: []string{"/opt/herald/herald", "--hidden"}, GOOS: tc.goos}
			err := a.Set(true)
			if tc.file == "" {
				if runtime.GOOS != "windows" && err == nil {
					t.Fatal("the Run key claimed to work off Windows")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(a.Dir, tc.file)); err != nil {
				t.Fatalf("Set(true) wrote no %s: %v", tc.file, err)
			}
			if on, err := a.Enabled(); !on || err != nil {
				t.Fatalf("Enabled = %v, %v after Set(true)", on, err)
			}
			if err := a.Set(false); err != nil {
				t.Fatal(err)
			}
			if on, err := a.Enabled(); on || err != nil {
				t.Fatalf("Enabled = %v, %v after Set(false)", on, err)
			}
			if err := a.Set(false); err != nil {
				t.Fatalf("turning off twice: %v", err)
			}
		})
	}
}

func TestXDGAutostartEntry(t *testing.T) {
	t.Parallel()
	a := XDGAutostart{Dir: t.TempDir(), Args: []string{"/home/a b/herald", "--hidden"}}
	if err := a.Set(true); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(a.Dir, "herald.desktop")
	b, _ := os.ReadFile(p)
	for _, want := range []string{"Exec=\"/home/a b/herald\" --hidden\n", "Icon=herald\n", "Type=Application\n", "Terminal=false\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("entry lacks %q:\n%s", want, b)
		}
	}
	if v, err := exec.LookPath("desktop-file-validate"); err == nil {
		if out, err := exec.Command(v, p).CombinedOutput(); err != nil {
			t.Errorf("desktop-file-validate: %v\n%s", err, out)
		}
	}
}

func TestLaunchAgentPlist(t *testing.T) {
	t.Parallel()
	prog := "/Applications/Herald & Co.app/Contents/MacOS/herald"
	l := LaunchAgent{Dir: t.TempDir(), Args: []string{prog, "--hidden"}}
	if err := l.Set(true); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(l.Dir, LaunchAgentLabel+".plist")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// It is well-formed XML, and the keys launchd needs hold our values.
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	var texts []string
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("the plist is not XML: %v\n%s", err, b)
		}
		if cd, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(cd)) != "" {
			texts = append(texts, string(cd))
		}
	}
	want := []string{"Label", LaunchAgentLabel, "ProgramArguments", prog, "--hidden", "RunAtLoad", "ProcessType", "Interactive"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Fatalf("plist texts %q, want %q", texts, want)
	}
	if !strings.Contains(string(b), "<key>RunAtLoad</key>\n\t<true/>") {
		t.Fatalf("RunAtLoad is not true:\n%s", b)
	}
	// Disabled by hand (launchctl, a cleaner app): reported off.
	os.WriteFile(p, bytes.Replace(b, []byte("<dict>"), []byte("<dict>\n\t<key>Disabled</key>\n\t<true/>"), 1), 0o644)
	if on, err := l.Enabled(); on || err != nil {
		t.Fatalf("a Disabled job reported %v, %v", on, err)
	}
}

// With no folder given, the files go where the desktop looks: the XDG
// config home's autostart/ and ~/Library/LaunchAgents, for this executable.
func TestAutostartDefaultsInATempHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	x := Autostart{GOOS: "linux"}
	if err := x.Set(true); err != nil {
		t.Fatal(err)
	}
	var xdgDir string
	if runtime.GOOS == "linux" {
		xdgDir = filepath.Join(home, ".config", "autostart")
	} else {
		base, _ := os.UserConfigDir()
		xdgDir = filepath.Join(base, "autostart")
	}
	b, err := os.ReadFile(filepath.Join(xdgDir, "herald.desktop"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Exec="+quoteExec(self)+" --hidden\n") {
		t.Fatalf("the entry does not start this executable hidden:\n%s", b)
	}
	m := Autostart{GOOS: "darwin"}
	if err := m.Set(true); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(home, "Library", "LaunchAgents", LaunchAgentLabel+".plist"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<string>"+self+"</string>") {
		t.Fatalf("the LaunchAgent does not start this executable:\n%s", b)
	}
	for _, a := range []Autostart{x, m} {
		if on, _ := a.Enabled(); !on {
			t.Fatalf("%s: not enabled", a.GOOS)
		}
		a.Set(false)
	}
}

func TestQuoteExec(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"/usr/bin/herald":  "/usr/bin/herald",
		"/home/a b/herald": `"/home/a b/herald"`,
		`/x/"q"/herald`:    `"/x/\"q\"/herald"`,
		"/x/100%/herald":   `"/x/100%%/herald"`,
		"/x/$HOME/herald":  `"/x/\$HOME/herald"`,
		"":                 `""`,
	}
	for in, want := range tests {
		if got := quoteExec(in); got != want {
			t.Errorf("quoteExec(%q) = %s, want %s", in, got, want)
		}
	}
}
