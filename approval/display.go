package approval

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// What every surface shows of gateway text (commands, descriptions, session
// ids, errors) goes through Visible or VisibleLine. Nothing is removed:
// whatever a terminal, a notification server or a browser could act on or
// hide is rendered as a visible marker, so what the user reads is what runs.
//
// Markers:
//
//	ESC (0x1B)                 ␛   (so "\x1b[2K" shows as "␛[2K": the whole
//	                                escape sequence stays visible as text)
//	newline (0x0A)             ⏎ followed by a real line break (Visible) or
//	                           ⏎ alone (VisibleLine, for one-line surfaces)
//	tab (0x09)                 ⇥
//	trailing spaces            ␠   (spaces at the end or before a newline)
//	other C0 controls, DEL     ⟦NUL⟧ ⟦BEL⟧ ⟦BS⟧ ⟦CR⟧ ... ⟦DEL⟧
//	invalid UTF-8 bytes        ⟦\xff⟧
//	anything else that is not plainly visible: C1 controls, format
//	characters (Unicode Cf: bidi controls U+202A–202E, U+2066–2069,
//	U+200E/F, U+061C, zero-width U+200B–200D, U+2060, U+FEFF, ...), line
//	and paragraph separators, spaces other than U+0020, invisible letters
//	(U+3164, U+2800, ...), U+FFFD, variation selectors, private-use and unassigned
//	code points, a combining mark not on a letter or stacked more than 3
//	deep                       ⟦U+202E⟧
//	the marker characters themselves when they appear literally
//	(⟦ ␛ ⏎ ⇥ ␠)                ⟦U+241B⟧ ...
//
// Because every marker character is itself escaped when it appears in the
// input, the rendering is injective: two different strings never display
// as the same text (the tests decode the display back to the input).
// Look-alikes (a Cyrillic "і" in "gіthub.com", fullwidth "ｓｕｄｏ", a minus
// sign for "-") are shown as ⟦U+XXXX⟧ too, Unicode TR39 style: see
// confusable.go for when a character counts as one.

const (
	markOpen  = '⟦'
	markClose = '⟧'
	markESC   = '␛'
	markLF    = '⏎'
	markTab   = '⇥'
	markSpace = '␠'
)

// c0Names are the ASCII names of C0 controls, shown as ⟦NAME⟧.
var c0Names = [32]string{
	"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI",
	"DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US",
}

// maxMarks is how many combining marks may follow a letter before the rest
// are shown as markers (Vietnamese needs 2, some Indic text 3).
const maxMarks = 3

// Visible renders s for display with every control, escape sequence,
// invisible or direction-changing character and invalid byte shown as a
// marker, and newlines shown as ⏎ plus a real line break. See the table
// above. Surfaces that wrap lines (terminal, window) use it.
func Visible(s string) string { return render(s, true, false) }

// VisibleLine is Visible on one line: a newline is shown as ⏎ without a
// line break. Surfaces that show a single line (tray, lists, logs) use it.
func VisibleLine(s string) string { return render(s, false, false) }

// VisibleCommand is Visible for a shell command: look-alikes of shell
// punctuation (a minus sign for "-", smart quotes, which do not quote,
// dashes, division and fraction slashes) are markers too. Prose keeps
// them, where they are common.
func VisibleCommand(s string) string { return render(s, true, true) }

// VisibleCommandLine is VisibleCommand on one line.
func VisibleCommandLine(s string) string { return render(s, false, true) }

// HasMarkers reports whether VisibleCommand(s) shows anything but s itself with
// its line breaks marked: s holds text a surface could not show as it is.
// A surface must not offer a one-click answer for such text without showing
// all of it.
func HasMarkers(s string) bool {
	return strings.ReplaceAll(render(s, true, true), string(markLF)+"\n", "\n") != s
}

func render(s string, breaks, command bool) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	prev, marks := rune(0), 0 // last base rune and marks on it
	lookalike := confusables(s, command)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			fmt.Fprintf(&b, "%c\\x%02x%c", markOpen, s[i], markClose)
			i++
			prev, marks = 0, 0
			continue
		}
		i += size
		switch {
		case r == '\n':
			b.WriteRune(markLF)
			if breaks {
				b.WriteByte('\n')
			}
		case r == '\t':
			b.WriteRune(markTab)
		case r == 0x1b:
			b.WriteRune(markESC)
		case r == ' ':
			if trailingSpace(s[i:]) {
				b.WriteRune(markSpace)
			} else {
				b.WriteByte(' ')
			}
		case r < 0x20:
			fmt.Fprintf(&b, "%c%s%c", markOpen, c0Names[r], markClose)
		case r == 0x7f:
			fmt.Fprintf(&b, "%cDEL%c", markOpen, markClose)
		case isMark(r):
			if markAllowed(prev, &marks) && !needsMarker(r) {
				b.WriteRune(r)
			} else {
				codePoint(&b, r)
			}
			continue // keep prev and marks
		case needsMarker(r), lookalike[i-size]:
			codePoint(&b, r)
		default:
			b.WriteRune(r)
		}
		prev, marks = r, 0
	}
	return b.String()
}

// Guard marks, in text that is already composed for display (Herald's own
// words around Visible gateway text), whatever Visible would mark and
// leaves the rest alone: existing markers, combining marks, and line
// breaks when breaks is true (else a newline shows as ⏎). It is the last
// step of every surface encoder, so a path that forgot Visible still puts
// no control, escape or invisible character on a surface. Visible output
// passes through unchanged.
func Guard(s string, breaks bool) string {
	clean := true
	for _, r := range s {
		if guarded(r, breaks) {
			clean = false
			break
		}
	}
	if clean && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			fmt.Fprintf(&b, "%c\\x%02x%c", markOpen, s[i], markClose)
			i++
			continue
		}
		i += size
		if guarded(r, breaks) {
			b.WriteString(render(string(r), breaks, false))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// guarded reports whether Guard marks r.
func guarded(r rune, breaks bool) bool {
	switch r {
	case markOpen, markClose, markESC, markLF, markTab, markSpace, ' ':
		return false
	case '\n':
		return !breaks
	}
	if isMark(r) {
		return needsMarker(r)
	}
	return r < 0x20 || r == 0x7f || needsMarker(r)
}

// trailingSpace reports whether rest (what follows a space) is only spaces
// up to the end or a newline.
func trailingSpace(rest string) bool {
	t := strings.TrimLeft(rest, " ")
	return t == "" || t[0] == '\n'
}

func codePoint(b *strings.Builder, r rune) {
	fmt.Fprintf(b, "%cU+%04X%c", markOpen, r, markClose)
}

func isMark(r rune) bool { return r >= 0x300 && unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) }

// markAllowed: a combining mark is shown as it is on a letter, up to
// maxMarks deep; *marks counts the marks on prev.
func markAllowed(prev rune, marks *int) bool {
	*marks++
	return prev != 0 && unicode.IsLetter(prev) && *marks <= maxMarks
}

// needsMarker reports whether r (not \n, \t, ESC, space, C0 or DEL, which
// render handles) must be shown as ⟦U+XXXX⟧.
func needsMarker(r rune) bool {
	switch r {
	case markOpen, markESC, markLF, markTab, markSpace:
		return true
	case ' ':
		return false
	case 0x2800, // braille blank
		0x115F, 0x1160, 0x3164, 0xFFA0, // hangul fillers
		utf8.RuneError: // U+FFFD: what a decoder made of bytes it could not read
		return true
	}
	if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
		return true
	}
	if r < 0x7f {
		return false
	}
	return !unicode.IsGraphic(r) || // C*, Zl, Zp, unassigned
		unicode.Is(unicode.Zs, r) || // spaces other than U+0020
		unicode.In(r, unicode.Cf, unicode.Co, unicode.Me,
			unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// UndecodableWhy is why a command that Undecodable reports is deny-only.
const UndecodableWhy = "the command holds bytes that are not valid UTF-8 text, shown as ⟦U+FFFD⟧ (the gateway's JSON or Herald's decoder replaced them), so two different commands could look the same here"

// Undecodable reports whether s may have lost bytes on its way to Herald:
// it holds U+FFFD, which is what a JSON decoder (Go's, Python's) makes of
// bytes that are not UTF-8 and of lone surrogate escapes, or it is not
// valid UTF-8 itself (Herald's own JSON would replace those bytes later).
// Such a command cannot be shown exactly, so it is deny-only.
func Undecodable(s string) bool {
	return strings.ContainsRune(s, utf8.RuneError) || !utf8.ValidString(s)
}

// Truncate cuts s to at most maxBytes bytes without splitting a UTF-8
// character or a ⟦…⟧ marker, and reports whether anything was cut. The
// caller says that it did (e.g. "command truncated, open to see all").
func Truncate(s string, maxBytes int) (string, bool) {
	if len(s) <= maxBytes {
		return s, false
	}
	if maxBytes <= 0 {
		return "", true
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	kept := s[:cut]
	// Do not leave half a marker: back up to its ⟦.
	if open := strings.LastIndex(kept, string(markOpen)); open >= 0 && !strings.ContainsRune(kept[open:], markClose) {
		kept = kept[:open]
	}
	return kept, true
}

// FirstLine is command s's first line shown as VisibleCommandLine, followed by
// " (+N more lines)" when s has more.
func FirstLine(s string) string {
	first, rest, more := strings.Cut(s, "\n")
	line := VisibleCommandLine(first)
	if !more {
		return line
	}
	n := strings.Count(rest, "\n") + 1
	if n == 1 {
		return line + " (+1 more line)"
	}
	return fmt.Sprintf("%s (+%d more lines)", line, n)
}

// Display is what surfaces show of a request, computed once in Go so every
// surface (terminal, --json, window, notifications, tray) shows the same
// sanitized text. JSON output keeps the raw Request next to it.
type Display struct {
	// Command is the command as the gateway sent it, Visible (with line
	// breaks): what the user decides on. It is what runs unless Hidden
	// says Hermes masked part of it.
	Command string `json:"command"`
	// Hidden, when set, says what Hermes masked in the command before
	// Herald saw it (HiddenText): every surface shows it with the
	// command, none offers a one-click approval, and approving needs an
	// explicit confirmation (Confirmed.Hidden).
	Hidden string `json:"hidden,omitempty"`
	// Masked is Command with obvious secrets masked (never code), for
	// display-only contexts.
	Masked string `json:"masked"`
	// FirstLine is the command's first line (VisibleLine) and how many
	// more lines it has; confirmations echo it.
	FirstLine   string `json:"first_line"`
	Description string `json:"description,omitempty"` // Visible
	Gateway     string `json:"gateway"`               // VisibleLine
	// Session is the session's one name (Naming.Name), VisibleLine;
	// SessionID its id in the one form surfaces show (SessionID), for
	// the details.
	Session   string `json:"session"`
	SessionID string `json:"session_id"`
	// Markers is true when the command holds text shown as markers
	// (controls, escapes, invisible, direction-changing or look-alike
	// characters, invalid bytes): surfaces that cannot show all of it must
	// not offer a one-click approval.
	Markers bool `json:"markers,omitempty"`
	// Lines is the number of lines of the command.
	Lines int `json:"lines"`
	// Offered are the choices a surface offers (Request.Offered): only
	// deny when DenyOnly says why Herald accepts nothing else.
	Offered  []string `json:"offered,omitempty"`
	DenyOnly string   `json:"deny_only,omitempty"`
	// What a clarify, sudo or secret prompt asks, shown as Visible (the
	// choices as VisibleLine).
	Question string   `json:"question,omitempty"`
	Prompt   string   `json:"prompt,omitempty"`
	EnvVar   string   `json:"env_var,omitempty"`
	Choices  []string `json:"choices,omitempty"`
	// Unseen: an approval whose command Herald was never shown (a session
	// that may be waiting on one sent to another client). Surfaces title
	// it with Title, show no command (no command bar, nothing to copy)
	// and offer only deny.
	Unseen bool   `json:"unseen,omitempty"`
	Title  string `json:"title,omitempty"`
	// Fields are what an approval that carries no command asks (its
	// Fields, names as VisibleLine, values as Visible); such a request
	// is titled FieldsTitle.
	Fields []Field `json:"fields,omitempty"`
	// ExpiryKnown is false when Herald does not know when the gateway
	// stops waiting (an unseen approval): surfaces say "unknown".
	ExpiryKnown bool `json:"expiry_known"`
}

// Unseen reports whether r is an approval whose command Herald was never
// shown: it accepts only deny.
func (r Request) Unseen() bool { return r.Kind == KindApproval && r.Command == "" }

// UnseenTitle is how every surface titles an unseen approval:
// "GATEWAY · SESSION: may be waiting for approval", with the session's one
// name (Naming.Name).
func UnseenTitle(gateway, session string) string {
	return VisibleLine(gateway) + " · " + VisibleLine(session) + ": may be waiting for approval"
}

// FieldsTitle is how every surface titles an approval of something other
// than a command: "GATEWAY · SESSION: asks to approve something other
// than a command".
func FieldsTitle(gateway, session string) string {
	return VisibleLine(gateway) + " · " + VisibleLine(session) + ": asks to approve something other than a command"
}

// title is an unseen approval's title.
func (r Request) title(session string) string {
	switch {
	case !r.Unseen():
		return ""
	case len(r.Fields) > 0:
		return FieldsTitle(r.Gateway, session)
	}
	return UnseenTitle(r.Gateway, session)
}

// DisplayIn is Display with the session's one name as the service names
// it now (service.SessionNames), where it knows one.
func (r Request) DisplayIn(session string) Display {
	d := r.Display()
	if session != "" {
		d.Session = VisibleLine(session)
	}
	d.Title = r.title(d.Session)
	return d
}

// Naming is what a session's (or run's) one name is made of, in the
// order it is chosen (Name).
type Naming struct {
	// Title is the gateway's title for it.
	Title string
	// FirstPrompt is its first prompt: Herald knows it for its own
	// turns and runs, the gateway's listing or messages give it for
	// others'.
	FirstPrompt string
	// Started is when it started (zero: not known).
	Started time.Time
	// Word is what its transport calls it ("session", "run"; "" is
	// "session").
	Word string
}

// firstWords is how many words of a first prompt make a name.
const firstWords = 8

// Name is the one name every surface gives a session: the gateway's
// title; else the first words of its first prompt; else "Untitled
// session, started 13:54" (in local time; "Untitled run" for a run). Its
// ids are never its name: surfaces show them in the details (SessionID).
func (n Naming) Name() string {
	if t := strings.TrimSpace(n.Title); t != "" {
		return t
	}
	if p := FirstWords(n.FirstPrompt); p != "" {
		return p
	}
	w := n.Word
	if w == "" {
		w = "session"
	}
	if n.Started.IsZero() {
		return "Untitled " + w
	}
	return "Untitled " + w + ", started " + n.Started.Local().Format("15:04")
}

// FirstWords is the start of a prompt as a name: its first words, at most
// 80 bytes, "..." when cut ("" for a blank prompt).
func FirstWords(prompt string) string {
	words := strings.Fields(prompt)
	cut := false
	if len(words) > firstWords {
		words, cut = words[:firstWords], true
	}
	t := strings.Join(words, " ")
	if len(t) > 80 {
		t, cut = strings.ToValidUTF8(t[:80], ""), true
	}
	if cut {
		// ASCII dots: every surface shows a name through VisibleLine,
		// which marks U+2026 as a look-alike of "...", so an ellipsis of
		// Herald's own would read "⟦U+2026⟧".
		t += "..."
	}
	return t
}

// SessionID is the one form in which surfaces show a session's id, in
// its details: the stored id where there is one (what Hermes lists and
// `herald watch --session` takes), else the id as the gateway gave it (an
// API run's run_…, whole). Every surface that takes an id also takes the
// other forms (service.Service.ResolveConversation).
func SessionID(stored, id string) string {
	if stored != "" {
		return stored
	}
	return id
}

// RecordedName is the name a request recorded for its session when it
// arrived (SessionTitle, filled from the service's one name), else
// "Untitled session" for a request recorded before Herald kept names.
func (r Request) RecordedName() string { return Naming{Title: r.SessionTitle}.Name() }

// Display returns what surfaces show of r.
func (r Request) Display() Display {
	var choices []string
	if r.Kind == KindClarify {
		for _, c := range r.Choices {
			choices = append(choices, VisibleLine(c))
		}
	}
	return Display{
		Question:    Visible(r.Question),
		Prompt:      Visible(r.Prompt),
		EnvVar:      VisibleLine(r.EnvVar),
		Choices:     choices,
		Command:     r.DisplayCommand(),
		Hidden:      r.Hidden(),
		Masked:      r.MaskedCommand(),
		FirstLine:   r.CommandFirstLine(),
		Description: r.DisplayDescription(),
		Gateway:     VisibleLine(r.Gateway),
		Markers:     HasMarkers(r.Command),
		Lines:       strings.Count(r.Command, "\n") + 1,
		Offered:     r.Offered(),
		DenyOnly:    Guard(r.DenyOnly(), false), // Herald's words: its markers stay
		Unseen:      r.Unseen(),
		Title:       r.title(r.RecordedName()),
		Fields:      visibleFields(r.Fields),
		ExpiryKnown: (!r.Unseen() || len(r.Fields) > 0) && !r.ExpiresAt.IsZero(),
		Session:     VisibleLine(r.RecordedName()),
		SessionID:   VisibleLine(SessionID(r.StoredSession, r.Session)),
	}
}

// visibleFields are fields as surfaces show them.
func visibleFields(fs []Field) []Field {
	if len(fs) == 0 {
		return nil
	}
	out := make([]Field, len(fs))
	for i, f := range fs {
		out[i] = Field{Name: VisibleLine(f.Name), Value: Visible(f.Value)}
	}
	return out
}
