package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/spooftest"
)

// decoders undo each surface's own syntax escaping, giving the text the
// user reads; bad reports encoded text the surface would misread.
var encoders = []struct {
	name      string
	enc       func(string) string
	multiLine bool
	decode    func(string) string
	bad       func(string) bool
}{
	{"terminal", Terminal, true, func(s string) string { return s }, func(string) bool { return false }},
	{"line", Line, false, func(s string) string { return s }, func(string) bool { return false }},
	{"pango", Pango, true, html.UnescapeString, hasMarkup},
	{"html", HTML, true, html.UnescapeString, hasMarkup},
	{"dbusmenu", DBusMenu, false, func(s string) string { return strings.ReplaceAll(s, "__", "_") }, loneUnderscore},
}

var entity = regexp.MustCompile(`&(amp|lt|gt|quot|#39|#34);`)

// hasMarkup: a tag or an entity other than the escapes.
func hasMarkup(s string) bool {
	return strings.ContainsAny(entity.ReplaceAllString(s, ""), `<>&"'`)
}

// loneUnderscore: an "_" dbusmenu would read as a mnemonic.
func loneUnderscore(s string) bool { return strings.Contains(strings.ReplaceAll(s, "__", ""), "_") }

// TestSpoofingEncoders: every hostile command and error text, displayed as
// Visible or VisibleLine and then encoded for each surface, reads back
// (after the surface's own unescaping) as the display, shows its
// dangerous part, and holds nothing the surface would act on. Raw text
// that skipped Visible still reaches no surface raw.
func TestSpoofingEncoders(t *testing.T) {
	t.Parallel()
	cases := append(append([]spooftest.Case(nil), spooftest.Cases...), spooftest.Errors...)
	for _, e := range encoders {
		for i, c := range cases {
			// Commands as commands, error texts as prose.
			visible, visibleLine := approval.VisibleCommand, approval.VisibleCommandLine
			if i >= len(spooftest.Cases) {
				visible, visibleLine = approval.Visible, approval.VisibleLine
			}
			shown := visibleLine(c.Command)
			if e.multiLine {
				shown = visible(c.Command)
			}
			out := e.enc(shown)
			if e.bad(out) {
				t.Errorf("%s %s: %q holds what the surface reads as syntax", e.name, c.Name, out)
			}
			if got := e.decode(out); got != shown {
				t.Errorf("%s %s: reads back as %q, want %q", e.name, c.Name, got, shown)
			}
			if err := spooftest.Check(e.decode(out), c, e.multiLine); err != nil {
				t.Errorf("%s %s: %v", e.name, c.Name, err)
			}
			// A path that forgot Visible.
			raw := e.decode(e.enc(c.Command))
			if r, ok := spooftest.Raw(raw, e.multiLine); ok {
				t.Errorf("%s %s without Visible: %U reaches the surface raw in %q", e.name, c.Name, r, raw)
			}
		}
	}
}

func TestEncoders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, got, want string }{
		{"pango", Pango(`echo "<b>x</b>" && rm a>b 'q'`), `echo &quot;&lt;b&gt;x&lt;/b&gt;&quot; &amp;&amp; rm a&gt;b &#39;q&#39;`},
		{"pango keeps lines", Pango("a\nb"), "a\nb"},
		{"dbusmenu", DBusMenu("rm -rf ./my_build_dir"), "rm -rf ./my__build__dir"},
		{"dbusmenu one line", DBusMenu("a\nb"), "a⏎b"},
		{"html", HTML(`<img src=x onerror="alert(1)">`), "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;"},
		{"terminal marks a raw escape", Terminal("a\x1b]52;c;eA==\x07b"), "a␛]52;c;eA==⟦BEL⟧b"},
		{"terminal keeps markers", Terminal("⟦U+202E⟧ ␛ ⏎\n"), "⟦U+202E⟧ ␛ ⏎\n"},
		{"terminal keeps accents", Terminal("cat Re\u0301sume\u0301 日本"), "cat Re\u0301sume\u0301 日本"},
		{"terminal marks invalid bytes", Terminal("a\xffb"), `a⟦\xff⟧b`},
		{"line marks a newline", Line("a\nb"), "a⏎b"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestTerminalWriter(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := TerminalWriter(&b)
	// "é" split across writes, a raw OSC 52 and a tab from flag help.
	for _, p := range []string{"caf\xc3", "\xa9 \x1b]52;c;eA==\x07", "\t-flag\n"} {
		if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got, want := b.String(), "café ␛]52;c;eA==⟦BEL⟧\t-flag\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 40) + `"x"` + strings.Repeat("]", 40)
	in, _ := json.Marshal(map[string]any{
		"c1":   "a\u009b2Kb",
		"bidi": "x\u202ey\u2028",
		"ok":   "⟦U+202E⟧ café \\ \"q\"",
		"raw":  json.RawMessage("{\"p\":\"\xff\u009d\",\"deep\":" + deep + "}"),
	})
	out := JSON(in)
	if !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	if r, ok := spooftest.Raw(string(out), false); ok {
		t.Fatalf("%U raw in %s", r, out)
	}
	var got struct {
		C1, Bidi, OK string
		Raw          struct {
			P    string
			Deep any
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.C1 != "a\u009b2Kb" || got.Bidi != "x\u202ey\u2028" || got.OK != "⟦U+202E⟧ café \\ \"q\"" || got.Raw.P != "\ufffd\u009d" {
		t.Fatalf("strings changed: %+v", got)
	}
	depth := 0
	for v := got.Raw.Deep; ; depth++ {
		a, ok := v.([]any)
		if !ok {
			if v != TooDeep {
				t.Fatalf("innermost value %v, want %q", v, TooDeep)
			}
			break
		}
		v = a[0]
	}
	if depth != MaxJSONDepth-2 { // the record and "raw" are the first two levels
		t.Fatalf("kept %d levels of the payload, want %d", depth, MaxJSONDepth-2)
	}
	if plain := []byte(`{"a":[1,2,{"b":"c"}]}`); !bytes.Equal(JSON(plain), plain) {
		t.Fatalf("plain JSON changed: %s", JSON(plain))
	}
}

func TestShownError(t *testing.T) {
	t.Parallel()
	base := errors.New("refused\x1b]52;c;eA==\x07 ⟦U+202E⟧")
	wrapped := fmt.Errorf("gateway lab: %w", base)
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"line":    {LineError(wrapped), "gateway lab: refused␛]52;c;eA==⟦BEL⟧ ⟦U+202E⟧"},
		"visible": {ShownError(wrapped, approval.VisibleLine), "gateway lab: refused␛]52;c;eA==⟦BEL⟧ ⟦U+27E6⟧U+202E⟧"},
	} {
		if tc.err.Error() != tc.want || !errors.Is(tc.err, base) {
			t.Errorf("%s: %q (is base: %v), want %q", name, tc.err.Error(), errors.Is(tc.err, base), tc.want)
		}
	}
	if LineError(nil) != nil {
		t.Error("LineError(nil) is not nil")
	}
}
