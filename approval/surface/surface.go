// Package surface holds the one encoder per surface that Herald puts
// gateway text on: a terminal, a freedesktop notification body (Pango
// markup), a tray menu label (dbusmenu), HTML, and JSON that Herald
// re-emits. The CLI, app/ and desktop/ all encode through it.
//
// Text reaches an encoder already composed for display: Herald's own words
// around gateway text that went through approval.Visible or VisibleLine.
// Each encoder first runs approval.Guard, which marks any control, escape
// or invisible character a path forgot to sanitise (Visible output passes
// unchanged), then escapes what the surface itself would read as syntax.
package surface

import (
	"html"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/herald-desktop/herald/approval"
)

// Terminal is s for a terminal: nothing a terminal acts on (ESC, C0 and C1
// controls, CR, BS, OSC, bidi controls) reaches it raw; line breaks stay.
func Terminal(s string) string { return approval.Guard(s, true) }

// pango escapes what Pango markup (and the HTML subset some notification
// servers read) takes as markup.
var pango = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// Pango is s for a freedesktop notification body, which servers may read
// as Pango markup: <b>, <a href> and entities show as the text they are.
func Pango(s string) string { return pango.Replace(approval.Guard(s, true)) }

// DBusMenu is s for a tray menu label (com.canonical.dbusmenu), one line:
// dbusmenu reads "_" as the mnemonic marker and drops it, so
// "./my_build_dir" would show as "./mybuilddir". Each "_" is doubled, which
// shows one underscore.
func DBusMenu(s string) string {
	return strings.ReplaceAll(approval.Guard(s, false), "_", "__")
}

// HTML is s as HTML text: markup and entities show as the text they are.
// (The window's Svelte page renders gateway text as text nodes, never
// {@html}; this is for HTML that Go writes.)
func HTML(s string) string { return html.EscapeString(approval.Guard(s, true)) }

// TerminalWriter wraps a terminal's stream so that every byte written goes
// through Terminal, whatever path wrote it: the CLI's last line of defence
// for "every line printed". Tabs (flag help) and line breaks stay; a
// character split across writes is held until its last byte arrives.
func TerminalWriter(w io.Writer) io.Writer { return &terminalWriter{w: w} }

type terminalWriter struct {
	mu   sync.Mutex
	w    io.Writer
	tail []byte // the start of a character split across writes
}

func (t *terminalWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := append(t.tail, p...)
	t.tail = nil
	// Hold back an incomplete character at the end (at most 3 bytes).
	for k := 1; k <= 3 && k <= len(buf); k++ {
		c := buf[len(buf)-k]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(buf[len(buf)-k:]) {
				t.tail = append([]byte(nil), buf[len(buf)-k:]...)
				buf = buf[:len(buf)-k]
			}
			break
		}
	}
	parts := strings.Split(string(buf), "\t")
	for i, s := range parts {
		parts[i] = Terminal(s)
	}
	if _, err := io.WriteString(t.w, strings.Join(parts, "\t")); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Line is s for a plain-text, one-line surface that reads no markup: a
// notification's title and action labels, the tray icon's tooltip.
func Line(s string) string { return approval.Guard(s, false) }

// ShownError is err with its text passed through show: approval.VisibleLine
// for an error that quotes a gateway raw, Line for one whose gateway words
// are shown already. errors.Is and As still see err; nil stays nil.
func ShownError(err error, show func(string) string) error {
	if err == nil {
		return nil
	}
	return shownError{err, show}
}

// LineError is ShownError(err, Line): err for a one-line surface such as
// the window's error line.
func LineError(err error) error { return ShownError(err, Line) }

type shownError struct {
	err  error
	show func(string) string
}

func (e shownError) Error() string { return e.show(e.err.Error()) }
func (e shownError) Unwrap() error { return e.err }
