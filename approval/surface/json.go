package surface

import (
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxJSONDepth is how deep JSON re-emits nesting; a deeper value (which only
// a gateway's raw payload can hold) is replaced by TooDeep.
const MaxJSONDepth = 32

// TooDeep replaces a value nested deeper than MaxJSONDepth.
const TooDeep = "⟦nested deeper than 32 levels; not shown⟧"

// JSON is encoded JSON (as encoding/json writes it, which keeps a raw
// payload's bytes) made safe to print: in strings, C1 controls, format
// characters (bidi controls, zero-width), line and paragraph separators,
// private-use and unassigned code points become \uXXXX escapes (the same
// string to a JSON reader, inert on a terminal); an invalid UTF-8 byte
// becomes \ufffd; a value nested deeper than MaxJSONDepth is replaced by
// the string TooDeep. Invalid JSON is returned with only the string
// escapes applied.
func JSON(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	depth, inStr := 0, false
	for i := 0; i < len(b); {
		c := b[i]
		if inStr {
			switch {
			case c == '\\' && i+1 < len(b):
				out = append(out, c, b[i+1])
				i += 2
				continue
			case c == '"':
				inStr = false
			case c >= utf8.RuneSelf:
				r, size := utf8.DecodeRune(b[i:])
				if r == utf8.RuneError && size <= 1 {
					out = append(out, `\ufffd`...)
					i++
					continue
				}
				if jsonEscaped(r) {
					out = appendEscape(out, r)
				} else {
					out = append(out, b[i:i+size]...)
				}
				i += size
				continue
			}
			out = append(out, c)
			i++
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			if depth == MaxJSONDepth {
				out = append(out, fmt.Sprintf("%q", TooDeep)...)
				i = skipValue(b, i)
				continue
			}
			depth++
		case '}', ']':
			depth--
		}
		out = append(out, c)
		i++
	}
	return out
}

// jsonEscaped reports whether JSON writes r as \uXXXX.
func jsonEscaped(r rune) bool {
	return r >= 0x80 && r < 0xa0 || r == utf8.RuneError ||
		!unicode.IsGraphic(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co, unicode.Variation_Selector)
}

func appendEscape(out []byte, r rune) []byte {
	if r > 0xffff {
		r1, r2 := utf16.EncodeRune(r)
		return fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
	}
	return fmt.Appendf(out, `\u%04x`, r)
}

// skipValue returns the index just past the object or array starting at
// b[i].
func skipValue(b []byte, i int) int {
	depth, inStr := 0, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr && c == '\\':
			i++
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}
