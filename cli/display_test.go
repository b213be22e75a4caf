package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/spooftest"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/testwait"
	"github.com/herald-desktop/herald/service"
)

var t0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

func hostileRequest(i int, cmd string) approval.Request {
	return approval.Request{
		Key: fmt.Sprintf("lab/srq/srq-%d", i), Gateway: "lab", Session: "s\x1b[2Ksess", Command: cmd,
		Description: "why\u202e", Choices: []string{"once", "session", "always", "deny"},
		ReceivedAt: t0, ExpiresAt: t0.Add(5 * time.Minute), Dialect: approval.DialectServerRequest, State: approval.StatePending,
	}
}

// TestSpoofingTerminal: every hostile command, on every terminal surface
// (the watch block, `pending`, `log`, the confirmation echo, and the
// display fields of --json), shows its dangerous part and holds no raw
// control or invisible character; --json keeps the raw command too.
func TestSpoofingTerminal(t *testing.T) {
	t.Parallel()
	for i, c := range spooftest.Cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			r := hostileRequest(i, c.Command)
			check := func(name, text string, multiLine bool) {
				t.Helper()
				if err := spooftest.Check(text, c, multiLine); err != nil {
					t.Errorf("%s %v:\n%s", name, err, text)
				}
				// As the terminal gets it: through the encoder, unchanged.
				if enc := surface.Terminal(text); enc != text {
					t.Errorf("%s: the terminal encoder changed %q to %q: the display let something raw through", name, text, enc)
				}
			}
			if c.Hidden != "" {
				for name, text := range map[string]string{"watch": strings.Join(approvalBlock(r, 1), "\n"), "pending": pendingLine(r, t0), "log": logLine(service.LogEntry{Entry: approval.Entry{At: t0, Key: r.Key, Command: r.Command}})} {
					if !strings.Contains(text, c.Hidden) {
						t.Errorf("%s does not say %q:\n%s", name, c.Hidden, text)
					}
				}
				if r.Display().Hidden != c.Hidden {
					t.Errorf("--json display.hidden = %q, want %q", r.Display().Hidden, c.Hidden)
				}
			}
			check("watch", strings.Join(approvalBlock(r, 1), "\n"), true)
			check("watch, several waiting", strings.Join(approvalBlock(r, 3), "\n"), true)
			check("pending", pendingLine(r, t0), false)
			check("log", logLine(service.LogEntry{Entry: approval.Entry{At: t0, Key: r.Key, Gateway: r.Gateway, Command: r.Command, State: approval.StatePending}, SessionName: r.Session + "\u202e"}), false)
			if _, ok := spooftest.Raw(r.CommandFirstLine(), false); ok {
				t.Errorf("confirmation echo %q holds a raw character", r.CommandFirstLine())
			}

			// --json: the raw command as sent, plus the display.
			var rec struct {
				Request approval.Request `json:"request"`
				Display approval.Display `json:"display"`
			}
			d := r.Display()
			b, _ := json.Marshal(jsonRecord{Type: "approval", Request: &r, Display: &d})
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			check("watch --json display.command", rec.Display.Command, true)
			check("watch --json display.masked", rec.Display.Masked, true)
			if utf8.ValidString(c.Command) && rec.Request.Command != c.Command {
				t.Errorf("watch --json request.command = %q, want the command as sent", rec.Request.Command)
			}
			var pend []approvalJSON
			b, _ = json.Marshal([]approvalJSON{{Request: r, Display: r.Display()}})
			if err := json.Unmarshal(b, &pend); err != nil {
				t.Fatal(err)
			}
			check("pending --json display.command", pend[0].Display.Command, true)
			var ent []entryJSON
			b, _ = json.Marshal([]entryJSON{{LogEntry: service.LogEntry{Entry: approval.Entry{Command: r.Command}}, Display: approval.Entry{Command: r.Command}.DisplayCommand()}})
			if err := json.Unmarshal(b, &ent); err != nil {
				t.Fatal(err)
			}
			check("log --json display", ent[0].Display, true)
		})
	}
}

// fakeInbox is a key handler's view of the service.
type fakeInbox struct {
	mu      sync.Mutex
	pending []approval.Request
	answers []string // "id choice confirm"
}

func (f *fakeInbox) Pending() []approval.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.pending)
}

func (f *fakeInbox) Answer(_ context.Context, id, choice, _ string, c approval.Confirmed) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.pending {
		if strings.HasPrefix(service.ShortKey(r.Key), id) {
			a := fmt.Sprintf("%s %s %v", service.ShortKey(r.Key), choice, c.Always)
			if c.Hidden {
				a += " hidden"
			}
			f.answers = append(f.answers, a)
			f.pending = slices.Delete(f.pending, i, i+1)
			return nil
		}
	}
	return fmt.Errorf("no approval with id %q", id)
}

type keysFixture struct {
	in   *fakeInbox
	k    *keys
	out  *strings.Builder
	now  time.Time
	reqs map[string]approval.Request
}

func newKeysFixture() *keysFixture {
	f := &keysFixture{in: &fakeInbox{}, out: &strings.Builder{}, now: t0, reqs: map[string]approval.Request{}}
	f.k = &keys{out: &printer{w: f.out}, in: f.in, now: func() time.Time { return f.now }}
	return f
}

// arrive adds a pending request and displays it, as watch does.
func (f *keysFixture) arrive(name, cmd string) string {
	r := hostileRequest(len(f.reqs), cmd)
	r.Key = "lab/srq/" + name
	f.in.mu.Lock()
	f.in.pending = append(f.in.pending, r)
	f.in.mu.Unlock()
	f.k.arrival(r)
	f.reqs[name] = r
	return service.ShortKey(r.Key)
}

func (f *keysFixture) end(id string) {
	f.in.mu.Lock()
	defer f.in.mu.Unlock()
	f.in.pending = slices.DeleteFunc(f.in.pending, func(r approval.Request) bool { return service.ShortKey(r.Key) == id })
}

// press types a line and returns what watch printed for it.
func (f *keysFixture) press(t *testing.T, line string) string {
	t.Helper()
	f.out.Reset()
	if f.k.handle(context.Background(), line) {
		t.Fatalf("%q quit", line)
	}
	return f.out.String()
}

func (f *keysFixture) answers() []string {
	f.in.mu.Lock()
	defer f.in.mu.Unlock()
	return slices.Clone(f.in.answers)
}

// TestKeysAnswerTheRequestOnScreen: a bare key answers only the request
// displayed last, when it is the one waiting and has been on screen for
// settle; otherwise nothing is sent and the user is told what to type.
// Every answer echoes the command's first line.
func TestKeysAnswerTheRequestOnScreen(t *testing.T) {
	t.Parallel()
	t.Run("one waiting, read", func(t *testing.T) {
		f := newKeysFixture()
		id := f.arrive("a", "git push --force\nsecond line")
		f.now = f.now.Add(settle)
		out := f.press(t, "o")
		if got := f.answers(); !slices.Equal(got, []string{id + " once false"}) {
			t.Fatalf("answers %v", got)
		}
		if !strings.Contains(out, "git push --force (+1 more line)") {
			t.Fatalf("no echo of the first line: %q", out)
		}
	})
	t.Run("just appeared", func(t *testing.T) {
		f := newKeysFixture()
		f.arrive("a", "rm -rf ./build")
		f.now = f.now.Add(settle - time.Millisecond)
		if out := f.press(t, "o"); len(f.answers()) != 0 || !strings.Contains(out, "appeared just now") {
			t.Fatalf("answered a request shown %v ago: %v %q", settle-time.Millisecond, f.answers(), out)
		}
		f.now = f.now.Add(time.Millisecond)
		f.press(t, "o")
		if len(f.answers()) != 1 {
			t.Fatal("no answer once read")
		}
	})
	t.Run("several waiting need the id", func(t *testing.T) {
		f := newKeysFixture()
		a := f.arrive("a", "ls")
		b := f.arrive("b", "rm -rf ~/important")
		f.now = f.now.Add(time.Minute)
		for _, key := range []string{"o", "d", "s", "a"} {
			if out := f.press(t, key); len(f.answers()) != 0 || !strings.Contains(out, "2 approvals are waiting") || !strings.Contains(out, b) {
				t.Fatalf("%s with two waiting: %v %q", key, f.answers(), out)
			}
		}
		out := f.press(t, "o "+a)
		if got := f.answers(); !slices.Equal(got, []string{a + " once false"}) || !strings.Contains(out, ": ls") {
			t.Fatalf("o %s: %v %q", a, got, out)
		}
	})
	t.Run("the one on screen ended, an older one waits", func(t *testing.T) {
		f := newKeysFixture()
		a := f.arrive("a", "ls -la")
		b := f.arrive("b", "rm -rf ~/important")
		f.end(b) // answered elsewhere: the screen shows b, a still waits
		f.now = f.now.Add(time.Minute)
		out := f.press(t, "o")
		if len(f.answers()) != 0 || !strings.Contains(out, "APPROVAL "+a) || !strings.Contains(out, "press the key again") {
			t.Fatalf("bare o answered a request not on screen: %v %q", f.answers(), out)
		}
		f.now = f.now.Add(settle)
		f.press(t, "o")
		if got := f.answers(); !slices.Equal(got, []string{a + " once false"}) {
			t.Fatalf("answers %v", got)
		}
	})
	t.Run("always asks with the command", func(t *testing.T) {
		f := newKeysFixture()
		id := f.arrive("a", "git push --force")
		f.now = f.now.Add(settle)
		if out := f.press(t, "a"); len(f.answers()) != 0 || !strings.Contains(out, "git push --force") || !strings.Contains(out, "yes") {
			t.Fatalf("always: %v %q", f.answers(), out)
		}
		f.press(t, "yes")
		if got := f.answers(); !slices.Equal(got, []string{id + " always true"}) {
			t.Fatalf("answers %v", got)
		}
	})
	t.Run("none waiting", func(t *testing.T) {
		f := newKeysFixture()
		if out := f.press(t, "o"); !strings.Contains(out, "No approval is waiting") {
			t.Fatalf("%q", out)
		}
	})
}

// syncBuffer is watch's stdout in the hostile test.
type syncBuffer struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return len(p), nil
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
func (s *syncBuffer) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// screen is what a person sees when a terminal shows out: a small
// terminal emulator (carriage return, backspace, tab, CSI cursor moves
// and erases, OSC strings, C1 CSI; format characters are invisible and a
// right-to-left override reverses the rest of its line).
func screen(out string) string {
	var rows [][]rune
	row, col := 0, 0
	put := func(r rune) {
		for len(rows) <= row {
			rows = append(rows, nil)
		}
		for len(rows[row]) <= col {
			rows[row] = append(rows[row], ' ')
		}
		rows[row][col] = r
		col++
	}
	rs := []rune(out)
	rtl := -1 // column where a right-to-left override started on this row
	endRTL := func() {
		if rtl >= 0 && row < len(rows) && rtl < len(rows[row]) {
			slices.Reverse(rows[row][rtl:])
		}
		rtl = -1
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\n':
			endRTL()
			row, col = row+1, 0
		case r == '\r':
			col = 0
		case r == '\b':
			col = max(col-1, 0)
		case r == '\t':
			col = (col/8 + 1) * 8
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == ']', r == 0x9d: // OSC: invisible up to BEL or ST
			for i++; i < len(rs) && rs[i] != 0x07 && !(rs[i] == 0x1b && i+1 < len(rs) && rs[i+1] == '\\'); i++ {
			}
			if i < len(rs) && rs[i] == 0x1b {
				i++
			}
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == '[', r == 0x9b: // CSI
			if r == 0x1b {
				i++
			}
			j := i + 1
			for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
				j++
			}
			if j >= len(rs) {
				i = j
				continue
			}
			n := 1
			fmt.Sscanf(string(rs[i+1:j]), "%d", &n)
			switch rs[j] {
			case 'A':
				endRTL()
				row = max(row-n, 0)
			case 'B':
				row += n
			case 'C':
				col += n
			case 'D':
				col = max(col-n, 0)
			case 'G':
				col = max(n-1, 0)
			case 'K':
				if row < len(rows) {
					if string(rs[i+1:j]) == "2" {
						rows[row] = nil
					} else if col < len(rows[row]) {
						rows[row] = rows[row][:col]
					}
				}
			}
			i = j
		case r == 0x1b:
			i++ // a two-character escape
		case r == '\u202e' || r == '\u202d':
			endRTL()
			if r == '\u202e' {
				rtl = col
			}
		case r == '\u202c':
			endRTL()
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r):
			// invisible
		default:
			put(r)
		}
	}
	endRTL()
	var lines []string
	for _, l := range rows {
		lines = append(lines, strings.TrimRight(string(l), " "))
	}
	return strings.Join(lines, "\n")
}

func TestScreenEmulator(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"rm -rf ~/x\x1b[2K\recho hi", "echo hi"},
		{"rm -rf /tmp\rls -la", "ls -la /tmp"},
		{"abc\b\bX", "aXc"},
		{"evil\n\x1b[1A\x1b[2Kok", "ok"},
		{"\x1b]8;;https://e\x1b\\ls\x1b]8;;\x1b\\", "ls"},
		{"a \u202ecba", "a abc"},
		{"r\u200bm", "rm"},
	}
	for _, tt := range tests {
		if got := screen(tt.in); got != strings.TrimRight(tt.want, " ") {
			t.Errorf("screen(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestHostileGatewayApprovesOnlyWhatWasDisplayed: a hostile fake gateway
// sends every spoofing command to `herald watch`; the test plays a person
// reading the terminal (through a terminal emulator) who approves a
// request only when the screen shows what it hides, and denies it
// otherwise. Every hostile command must reach the gateway as approved only
// because it was shown, and a plain command is approved as usual.
func TestHostileGatewayApprovesOnlyWhatWasDisplayed(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Token: "hostile-token"})
	defer srv.Close()
	live, stored := srv.CreateSession()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdinR, stdinW := io.Pipe()
	out := &syncBuffer{changed: make(chan struct{})}
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"watch", "--gateway", "lab=" + srv.URL, "--token", srv.Token(), "--session", stored,
			"--control", filepath.Join(dir, "run", "ctl.sock"), "--db", ""}, stdinR, out, io.Discard)
	}()
	defer func() {
		stdinW.Close()
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("watch exited %d", code)
		}
	}()
	testwait.Until(t, guard, "session attached", srv.Changed, func() bool {
		for _, s := range srv.Sessions() {
			if s.ID == live && s.Attached {
				return true
			}
		}
		return false
	})

	onScreen := map[string]bool{}
	cases := append(slices.Clone(spooftest.Cases), spooftest.Case{Name: "plain", Command: "ls -la ~/important", Show: []string{"ls -la ~/important"}})
	for _, c := range cases {
		from := len(out.String())
		_, agent, err := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: c.Command, Description: "hostile"})
		if err != nil {
			t.Fatal(err)
		}
		var block string
		testwait.Until(t, guard, c.Name+" displayed", out.Changed, func() bool {
			s := out.String()[from:]
			start := strings.Index(s, "┏ APPROVAL ")
			end := strings.Index(s, "┗ [")
			if start < 0 || end < start || !strings.Contains(s[end:], "\n") {
				return false
			}
			block = s[start : end+strings.Index(s[end:], "\n")]
			return true
		})
		id := strings.Fields(strings.TrimPrefix(block, "┏ APPROVAL "))[0]
		seen := screen(block)
		shown := true
		for _, s := range c.Show {
			shown = shown && strings.Contains(seen, s)
		}
		onScreen[c.Command] = shown
		key := "d"
		if shown && !strings.Contains(seen, "only deny is accepted") && !strings.Contains(seen, "Hermes hid part") {
			key = "o" // the person saw what runs, and agrees
		}
		fmt.Fprintf(stdinW, "%s %s\n", key, id)
		choice := <-agent
		if want := map[string]string{"o": "once", "d": "deny"}[key]; choice != want {
			t.Fatalf("%s: the gateway got %q, want %q", c.Name, choice, want)
		}
		if !shown {
			t.Errorf("%s: the screen hid what runs; a person would have seen:\n%s", c.Name, seen)
		}
	}
	// The gateway approved only commands whose dangerous part was on screen.
	for _, a := range srv.Answers() {
		if a.Choice == "once" && !onScreen[a.Command] {
			t.Errorf("the gateway approved %q, which the screen did not show", a.Command)
		}
	}
}

// TestApprovalBlockOffersOnlyItsChoices: the keys line names the keys of
// the choices offered and no others (a deny-only approval says "d deny"),
// an approval whose command Herald never saw shows no empty command line
// and says its expiry is unknown.
func TestApprovalBlockOffersOnlyItsChoices(t *testing.T) {
	t.Parallel()
	all := approval.Request{Key: "lab/ev/s/1.1", Gateway: "lab", Session: "s", Command: "rm -rf ./build", Kind: approval.KindApproval,
		Choices: []string{"once", "session", "always", "deny"}, ReceivedAt: t0, ExpiresAt: t0.Add(5 * time.Minute), State: approval.StatePending}
	unseen := all
	unseen.Command, unseen.Description, unseen.Choices = "", "Herald cannot show the command", []string{"deny"}
	for _, tc := range []struct {
		name      string
		r         approval.Request
		waiting   int
		want, not []string
	}{
		{"every choice", all, 1, []string{"[once/session/always/deny]  keys: o Allow once, s Allow for session, a Always allow, d Deny (+ Enter); expires " + t0.Add(5*time.Minute).Local().Format("15:04:05")}, nil},
		{"deny only, unseen", unseen, 1, []string{"[deny]  keys: d Deny (+ Enter); expiry unknown", "┃ Herald cannot show the command"}, []string{"o Allow once", "┃ \n", "expires "}},
		{"deny only, several waiting", unseen, 2, []string{`2 approvals are waiting: type the key and this id, e.g. "d `}, []string{`"o `}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			block := strings.Join(approvalBlock(tc.r, tc.waiting), "\n") + "\n"
			for _, w := range tc.want {
				if !strings.Contains(block, w) {
					t.Errorf("block lacks %q:\n%s", w, block)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(block, n) {
					t.Errorf("block has %q:\n%s", n, block)
				}
			}
		})
	}
}

// TestUnknownKeyListsEveryCommand: a line watch does not know lists every
// key and command watch takes, the session commands included.
func TestUnknownKeyListsEveryCommand(t *testing.T) {
	t.Parallel()
	for _, line := range []string{"help", "x", "?"} {
		got := newKeysFixture().press(t, line)
		for _, w := range []string{"o Allow once", "s Allow for session", "a Always allow", "d Deny", "t YOUR ANSWER", "p pending", "sessions", "follow ID", "unfollow ID", "take ID", "q quit"} {
			if !strings.Contains(got, w) {
				t.Errorf("%q: %q does not name %q", line, got, w)
			}
		}
	}
}

// An approval that is not a command shows every field it asks with, made
// safe, and says that only deny is accepted.
func TestApprovalBlockShowsFields(t *testing.T) {
	t.Parallel()
	r := approval.Request{Key: "api/q/run_1/q1", Kind: approval.KindApproval, Gateway: "api", Session: "run_1", Choices: []string{"deny"},
		Fields: []approval.Field{{Name: "kind", Value: "site"}, {Name: "url", Value: "https://example.com/\x1b[2J\nsecond"}}}
	got := strings.Join(approvalBlock(r, 1), "\n")
	for _, want := range []string{"asks to approve something other than a command (only deny is accepted here):", "┃   kind: site", "┃   url: https://example.com/␛[2J"} {
		if !strings.Contains(got, want) {
			t.Errorf("block lacks %q:\n%s", want, got)
		}
	}
	if strings.ContainsRune(got, '\x1b') {
		t.Errorf("raw escape in:\n%s", got)
	}
}
