package approval

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Confusables, Unicode TR39 style: text that looks like something it is
// not ("gіthub.com" with a Cyrillic і, "ѕudo" with a Cyrillic ѕ, "ｓｕｄｏ"
// in fullwidth letters, "rm −rf" with a minus sign) is shown with the
// look-alike characters as ⟦U+XXXX⟧ markers, so it cannot pass as the real
// thing. A character is marked when:
//
//   - it is a letter in a token (a run of letters, digits and marks) that
//     mixes scripts in a way TR39's "highly restrictive" profile does not
//     allow (Latin with Cyrillic, Greek, Armenian, Cherokee, ...; Latin with
//     Han, Hiragana, Katakana, Hangul or Bopomofo is allowed), and it is
//     not of the token's main script;
//   - its token is written wholly in one non-Latin script with every
//     letter a look-alike of a Latin one ("сосо" in Cyrillic), two letters
//     or more;
//   - it is a compatibility form of ASCII (fullwidth letters and
//     punctuation, mathematical alphanumerics, ligatures: NFKC maps it to
//     ASCII), or a look-alike in the skeleton table below that is marked
//     wherever it appears (dotless ı, long ſ, Latin ɑ/ɡ, the minus sign,
//     dashes, division and fraction slashes, one-dot leader).

// latinLookalike maps common look-alikes of Latin letters from other
// scripts to the letter they imitate (TR39 confusables.txt, the frequent
// ones). Used for whole-script confusables.
var latinLookalike = map[rune]rune{
	// Cyrillic
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's',
	'һ': 'h', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'ү': 'y', 'ѵ': 'v', 'ё': 'e', 'ї': 'i', 'к': 'k',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'Х': 'X', 'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'Ү': 'Y', 'Ԝ': 'W', 'Ԛ': 'Q', 'Ӏ': 'l',
	// Greek
	'α': 'a', 'ο': 'o', 'ν': 'v', 'ι': 'i', 'κ': 'k', 'ρ': 'p', 'υ': 'u', 'χ': 'x', 'γ': 'y', 'ε': 'e',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	// Armenian
	'ս': 'u', 'օ': 'o', 'ց': 'g', 'հ': 'h', 'ո': 'n', 'ա': 'w', 'զ': 'q',
	// Cherokee
	'Ꭺ': 'A', 'Ᏼ': 'B', 'Ꮯ': 'C', 'Ꭼ': 'E', 'Ꮋ': 'H', 'Ꭻ': 'J', 'Ꮶ': 'K', 'Ꮇ': 'M', 'Ꮲ': 'P', 'Ꭲ': 'T',
	'Ꮃ': 'W', 'Ꮪ': 'S', 'Ꮩ': 'V', 'Ꮓ': 'Z',
}

// alwaysConfusable are look-alikes of ASCII marked wherever they appear:
// they are Latin or Common script, so no script mixing gives them away,
// and NFKC leaves them as they are.
var alwaysConfusable = map[rune]rune{
	'ı': 'i', 'ȷ': 'j', 'ſ': 'f', 'ɑ': 'a', 'ɡ': 'g', 'ɩ': 'i', 'ʏ': 'y', 'ꞵ': 'b', 'ᴅ': 'd', 'ᴠ': 'v', 'ᴡ': 'w', 'ᴢ': 'z',
	'\u2212': '-', '\u2010': '-', '\u2011': '-', '\u2012': '-', '\u2013': '-', '\u2014': '-', '\u2015': '-', '\u2043': '-', '\u02d7': '-',
	'\u2215': '/', '\u2044': '/', '\u29f8': '/', '\u29f9': '\\', '\u2216': '\\',
	'\u2024': '.', '\u2027': '.', '\u0589': ':', '\u02d0': ':', '\u2236': ':', '\ua789': ':',
	'\u037e': ';', '\u01c0': '|', '\u2223': '|', '\u02bc': '\'', '\u2018': '\'', '\u2019': '\'', '\u201c': '"', '\u201d': '"',
}

// scriptOf returns r's script for mixing: "" for Common and Inherited
// (digits, punctuation, marks), which mix with anything.
func scriptOf(r rune) string {
	if r < 0x80 {
		if unicode.IsLetter(r) {
			return "Latin"
		}
		return ""
	}
	for _, s := range frequentScripts {
		if unicode.Is(s.table, r) {
			return s.name
		}
	}
	if unicode.In(r, unicode.Common, unicode.Inherited) {
		return ""
	}
	for name, table := range unicode.Scripts {
		if unicode.Is(table, r) {
			return name
		}
	}
	return ""
}

var frequentScripts = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek},
	{"Han", unicode.Han}, {"Hiragana", unicode.Hiragana}, {"Katakana", unicode.Katakana},
	{"Hangul", unicode.Hangul}, {"Armenian", unicode.Armenian}, {"Cherokee", unicode.Cherokee},
	{"Bopomofo", unicode.Bopomofo},
}

// allowedMixes are the script sets TR39's highly restrictive profile
// allows in one token (besides a single script).
var allowedMixes = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// scriptCount counts a token's letters by script.
type scriptCount struct {
	name string
	n    int
}

type scriptCounts []scriptCount

func (c scriptCounts) add(name string) scriptCounts {
	for i := range c {
		if c[i].name == name {
			c[i].n++
			return c
		}
	}
	return append(c, scriptCount{name, 1})
}

func (c scriptCounts) count(name string) int {
	for _, s := range c {
		if s.name == name {
			return s.n
		}
	}
	return 0
}

func allowedMix(scripts scriptCounts) bool {
	if len(scripts) <= 1 {
		return true
	}
	for _, set := range allowedMixes {
		ok := true
		for _, sc := range scripts {
			s := sc.name
			found := false
			for _, a := range set {
				found = found || a == s
			}
			ok = ok && found
		}
		if ok {
			return true
		}
	}
	return false
}

// compatASCII reports whether the character at the start of s is a
// compatibility form of ASCII text (fullwidth "ｓ", mathematical "𝐬",
// ligature "ﬁ", "Ⅰ"): its NFKC decomposition is printable ASCII.
func compatASCII(s string) bool {
	d := norm.NFKC.PropertiesString(s).Decomposition()
	if len(d) == 0 {
		return false
	}
	for _, c := range d {
		if c >= 0x80 || c < 0x21 {
			return false
		}
	}
	return true
}

// IsConfusable reports whether VisibleCommand shows some character of s as a
// look-alike marker.
func IsConfusable(s string) bool { return len(confusables(s, true)) > 0 }

// confusables returns the byte offsets in s of the characters Visible
// marks as look-alikes (see the table above); nil for plain ASCII. The
// punctuation look-alikes count only in a command.
func confusables(s string, command bool) map[int]bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return nil
	}
	var marked map[int]bool
	mark := func(i int) {
		if marked == nil {
			marked = map[int]bool{}
		}
		marked[i] = true
	}
	type letter struct {
		at     int
		r      rune
		script string
	}
	var token []letter
	var scripts scriptCounts
	flush := func() {
		defer func() { token = token[:0] }()
		scripts = scripts[:0]
		for _, l := range token {
			if l.script != "" {
				scripts = scripts.add(l.script)
			}
		}
		if !allowedMix(scripts) {
			// The main script has the most letters; a tie goes to
			// Latin, then to the first name.
			main, m := "", 0
			for _, sc := range scripts {
				switch s, n := sc.name, sc.n; {
				case main == "", n > m:
					main, m = s, n
				case n == m && main != "Latin" && (s == "Latin" || s < main):
					main = s
				}
			}
			for _, l := range token {
				if l.script != "" && l.script != main {
					mark(l.at)
				}
			}
			return
		}
		if len(scripts) != 1 || scripts.count("Latin") > 0 {
			return
		}
		letters := 0
		for _, l := range token {
			if l.script == "" {
				continue
			}
			letters++
			if _, ok := latinLookalike[l.r]; !ok {
				return
			}
		}
		if letters >= 2 {
			for _, l := range token {
				if l.script != "" {
					mark(l.at)
				}
			}
		}
	}
	for i, r := range s {
		if r >= 0x80 {
			if p, ok := alwaysConfusable[r]; (ok && (command || unicode.IsLetter(p))) || compatASCII(s[i:]) {
				mark(i)
			}
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) {
			token = append(token, letter{i, r, scriptOf(r)})
			continue
		}
		flush()
	}
	flush()
	return marked
}
