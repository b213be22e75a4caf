package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// firstOr is the first of ss, or or when there is none.
func firstOr(ss []string, or string) string {
	if len(ss) == 0 {
		return or
	}
	return ss[0]
}

// Everything the terminal prints of gateway text goes through
// approval.Visible / VisibleLine: controls, escape sequences and invisible
// characters are shown as markers, never sent to the terminal. Commands
// are shown whole (the terminal wraps them), never clipped.

// approvalJSON is a request in `pending --json`: the request exactly as
// the gateway sent it, plus what the terminal displays of it.
type approvalJSON struct {
	approval.Request
	Display approval.Display `json:"display"`
}

// entryJSON is an audit entry in `log --json`: the entry as stored, its
// session's one name, and its command as displayed.
type entryJSON struct {
	service.LogEntry
	Display string `json:"display,omitempty"`
}

// approvalBlock is the arrival of a request in `herald watch`. waiting is
// how many requests wait for an answer, this one included.
func approvalBlock(r approval.Request, waiting int) []string {
	d := r.Display()
	id := service.ShortKey(r.Key)
	lines := []string{"", fmt.Sprintf("┏ APPROVAL %s  %s / %s", id, d.Gateway, sessionOf(r))}
	if d.Command != "" { // unseen: the description says why there is none
		for _, l := range strings.Split(d.Command, "\n") {
			lines = append(lines, "┃ "+l)
		}
	}
	if d.Hidden != "" {
		lines = append(lines, "┃ ⚠ "+d.Hidden+": Herald cannot show what runs there, and it may be code; approving asks you to confirm")
	}
	if len(d.Fields) > 0 {
		lines = append(lines, "┃ "+d.Title+" (only deny is accepted here):")
		for _, f := range d.Fields {
			for i, l := range strings.Split(f.Value, "\n") {
				if i == 0 {
					l = f.Name + ": " + l
				}
				lines = append(lines, "┃   "+l)
			}
		}
	}
	if d.Markers {
		lines = append(lines, "┃ ⚠ the command holds control, invisible, direction-changing or look-alike characters: they are shown as ␛ and ⟦…⟧")
	}
	lines = append(lines, limitLines(r)...)
	if d.Description != "" {
		for _, l := range strings.Split(d.Description, "\n") {
			lines = append(lines, "┃ "+l)
		}
	}
	if r.Uncertain && r.Outcome.Detail != "" {
		lines = append(lines, "┃ may still be pending: "+approval.VisibleLine(r.Outcome.Detail))
	}
	offered := r.Offered()
	keys := "keys: " + choiceKeys(offered) + " (+ Enter)"
	if waiting > 1 {
		eg := "d"
		if x, ok := source.ChoiceOf(firstOr(offered, "")); ok {
			eg = x.Key
		}
		keys = fmt.Sprintf("%d approvals are waiting: type the key and this id, e.g. \"%s %s\"", waiting, eg, id)
	}
	expires := "expiry unknown"
	if d.ExpiryKnown {
		expires = "expires " + r.ExpiresAt.Local().Format("15:04:05")
	}
	lines = append(lines, fmt.Sprintf("┗ [%s]  %s; %s", strings.Join(offered, "/"), keys, expires))
	return lines
}

// choiceKeys names the keys of the choices offered, and only those, from
// the one table of choices: a deny-only approval is "d Deny".
func choiceKeys(choices []string) string {
	var ks []string
	for _, c := range choices {
		if x, ok := source.ChoiceOf(c); ok {
			ks = append(ks, x.Key+" "+x.Label)
		}
	}
	return strings.Join(ks, ", ")
}

// sessionOf is r's session as every line of the terminal names it, and
// as the window does: its one name (the name recorded with it, which
// `herald pending` gets as the running Herald names it now), quoted, with
// its id in the one form surfaces show it.
func sessionOf(r approval.Request) string {
	return "“" + approval.VisibleLine(r.RecordedName()) + "” (" + approval.VisibleLine(approval.SessionID(r.StoredSession, r.Session)) + ")"
}

// pendingLine is one request in `herald pending` and the `p` key: the
// whole command on one line (the terminal wraps it).
func pendingLine(r approval.Request, now time.Time) string {
	if r.Kind.IsPrompt() {
		return promptPendingLine(r, now)
	}
	expires := "expires: unknown"
	if r.Display().ExpiryKnown {
		expires = "expires in " + max(r.ExpiresAt.Sub(now).Round(time.Second), 0).String()
	}
	flag := ""
	if r.Uncertain {
		flag = " (may still be pending)"
	}
	if r.LastError != "" {
		flag += " (last send failed: " + approval.VisibleLine(r.LastError) + ")"
	}
	if r.Truncated {
		flag += fmt.Sprintf(" (truncated: %d bytes sent, deny only)", r.CommandBytes)
	}
	if r.Conflict != "" {
		flag += " (conflict: " + surface.Line(r.Conflict) + "; deny only)"
	}
	if r.Unbound != "" && r.Conflict == "" {
		flag += " (deny only: " + surface.Line(r.Unbound) + ")"
	}
	if h := r.Hidden(); h != "" {
		flag += " (" + h + "; approve with --yes-hidden)"
	}
	if r.State == approval.StateSentUnknown {
		flag = fmt.Sprintf(" (%s %s)", approval.VisibleLine(r.Outcome.Choice), approval.VisibleLine(r.SentDetail()))
	}
	return fmt.Sprintf("%s  %-10s %s  %s  [%s] %s%s", service.ShortKey(r.Key), approval.VisibleLine(r.Gateway), sessionOf(r),
		approval.VisibleCommandLine(r.Command), strings.Join(r.Offered(), "/"), expires, flag)
}

// logLine is one audit entry in `herald log`: the command as it ran.
func logLine(le service.LogEntry) string {
	en := le.Entry
	state := string(en.State)
	if en.State == approval.StatePending {
		state = "waiting" // for an answer: "pending" read as unanswered
	}
	s := fmt.Sprintf("%s  %s  %-10s %-9s", en.At.Local().Format("2006-01-02 15:04:05"), service.ShortKey(en.Key), approval.VisibleLine(en.Gateway), state)
	if le.SessionName != "" {
		s += "  session “" + approval.VisibleLine(le.SessionName) + "”"
	}
	if en.RequestKind.IsPrompt() {
		s += "  " + string(en.RequestKind)
		if en.Question != "" {
			s += ": " + approval.VisibleLine(en.Question)
		}
	}
	if en.Command != "" {
		s += "  " + approval.VisibleCommandLine(en.Command)
		if h := approval.HiddenText(en.Command); h != "" {
			s += "  (" + h + ")"
		}
	}
	if en.Choice != "" {
		s += "  choice=" + approval.VisibleLine(en.Choice)
	}
	if en.Surface != "" {
		s += "  via " + approval.VisibleLine(en.Surface)
	}
	if en.Reason != "" {
		s += "  (" + approval.VisibleLine(string(en.Reason)) + ")"
	}
	if en.Error != "" {
		s += "  error: " + approval.VisibleLine(en.Error)
	}
	return s
}

// settle is how long after a request is displayed a bare key waits before
// it may answer it: a key typed for the previous request must not answer
// one that appeared just before it was read (as browsers do for
// permission prompts).
const settle = 700 * time.Millisecond

// inbox is what the key handler needs of the service.
type inbox interface {
	Pending() []approval.Request
	Answer(ctx context.Context, id, choice, surface string, c approval.Confirmed) error
}

// svcInbox adapts service.Service to inbox.
type svcInbox struct{ s *service.Service }

func (i svcInbox) Pending() []approval.Request { return i.s.Inbox().Pending() }
func (i svcInbox) Answer(ctx context.Context, id, choice, surface string, c approval.Confirmed) error {
	return i.s.AnswerConfirmed(ctx, id, choice, surface, c)
}

// keys answers lines typed in `herald watch`. A bare key (o, s, a, d)
// answers the request displayed last, and only when it is the one request
// waiting and has been on screen for settle; otherwise the user must type
// the id, so an answer always goes to the request the user is looking at.
// Every answer echoes the command's first line.
type keys struct {
	out *printer
	in  inbox
	now func() time.Time

	mu         sync.Mutex
	shown      string     // short id of the request displayed last
	shownAt    time.Time  // when
	confirming confirming // an answer waiting for "yes"
}

// confirming is an answer that waits for the user to type yes: "always",
// or an approval of a command Hermes partly hid.
type confirming struct {
	id, choice string
	c          approval.Confirmed // what "yes" confirms
}

// displayed records that the request with this short id was just shown.
func (k *keys) displayed(id string) {
	k.mu.Lock()
	k.shown, k.shownAt = id, k.now()
	k.mu.Unlock()
}

// arrival prints a new request and records it as displayed.
func (k *keys) arrival(r approval.Request) {
	waiting := 1
	if k.in != nil { // nil while the service starts and restores requests left open
		waiting = len(approvalsOnly(k.in.Pending()))
	}
	k.mu.Lock() // display and record together, so a key never sees one without the other
	defer k.mu.Unlock()
	for _, l := range approvalBlock(r, max(waiting, 1)) {
		k.out.line("%s", l)
	}
	k.shown, k.shownAt = service.ShortKey(r.Key), k.now()
}

// handle applies one typed line. It reports whether to quit.
func (k *keys) handle(ctx context.Context, l string) bool {
	l = strings.TrimSpace(l)
	if l == "" {
		return false
	}
	fields := strings.Fields(l)
	key := strings.ToLower(fields[0])
	id := ""
	if len(fields) > 1 {
		id = fields[1]
	}
	k.mu.Lock()
	pending := k.confirming
	k.confirming = confirming{}
	k.mu.Unlock()
	if pending.id != "" {
		switch {
		case key == "yes":
			k.answer(ctx, pending.id, pending.choice, pending.c)
		case pending.c.Hidden:
			k.out.line("Not sent: approving a command Hermes partly hid needs \"yes\".")
		default:
			k.out.line("Not sent: always-allow needs \"yes\".")
		}
		return false
	}
	if k.handlePrompt(ctx, l) {
		return false
	}
	choice := source.ChoiceForKey(key)
	switch {
	case key == "q" || key == "quit":
		return true
	case key == "p":
		pend := k.in.Pending()
		if len(pend) == 0 {
			k.out.line("No approval is waiting.")
		}
		for _, r := range pend {
			k.out.line("%s", pendingLine(r, k.now()))
		}
		if len(pend) == 1 {
			k.displayed(service.ShortKey(pend[0].Key))
		}
		return false
	case choice == "":
		k.out.line("Keys: %s, each + Enter; add the id when several are waiting (\"o 1a2b3c4d\"); a question: its choice number, or t YOUR ANSWER; p pending; sessions, follow ID, unfollow ID, take ID: the gateways' sessions; q quit.", source.ChoiceKeysHelp())
		return false
	}
	if id == "" {
		var ok bool
		if id, ok = k.bareTarget(); !ok {
			return false
		}
	}
	r, known := k.find(id)
	hidden := known && choice != "deny" && r.Hidden() != ""
	if choice == "always" || hidden {
		if !known {
			k.out.line("! %s: no waiting approval has this id (or more than one starts with it); p lists them", approval.VisibleLine(id))
			return false
		}
		k.mu.Lock()
		k.confirming = confirming{id: id, choice: choice, c: approval.Confirmed{Always: choice == "always", Hidden: hidden}}
		k.mu.Unlock()
		if hidden {
			k.out.line("%s. %s.", r.Hidden(), approval.HiddenWhy)
		}
		what := source.ChoiceLabel(choice)
		if choice == "always" {
			what += " from now on, without asking"
		}
		if hidden {
			what += ", without seeing what Hermes hid"
		}
		k.out.line("%s: %s (%s)? Type yes to confirm.", what, r.CommandFirstLine(), id)
		return false
	}
	k.answer(ctx, id, choice, approval.Confirmed{})
	return false
}

// bareTarget is the request a bare key answers, or explains why there is
// none.
func (k *keys) bareTarget() (string, bool) {
	pend := approvalsOnly(k.in.Pending())
	k.mu.Lock()
	shown, at := k.shown, k.shownAt
	k.mu.Unlock()
	switch {
	case len(pend) == 0:
		if n := len(k.in.Pending()); n > 0 {
			// Only prompts wait: say how to answer them instead.
			k.out.line("No approval is waiting, but %d prompt(s) are: answer a question with its choice number or t YOUR ANSWER, a password or secret with `herald answer ID`; p lists them.", n)
		} else {
			k.out.line("No approval is waiting.")
		}
		return "", false
	case len(pend) > 1:
		k.out.line("Not sent: %d approvals are waiting, so say which one: type the key and its id, e.g. \"o %s\":", len(pend), service.ShortKey(pend[len(pend)-1].Key))
		for _, r := range pend {
			k.out.line("  %s", pendingLine(r, k.now()))
		}
		return "", false
	}
	r := pend[0]
	id := service.ShortKey(r.Key)
	if id != shown {
		// The one waiting is not the one on screen: show it first.
		k.arrival(r)
		k.out.line("Not sent: the request above is the one waiting now; read it, then press the key again.")
		return "", false
	}
	if k.now().Sub(at) < settle {
		k.out.line("Not sent: %s appeared just now; read it, then press the key again.", id)
		return "", false
	}
	return id, true
}

// find is the waiting request whose key or short id starts with id, when
// exactly one does.
func (k *keys) find(id string) (approval.Request, bool) {
	var found []approval.Request
	for _, r := range approvalsOnly(k.in.Pending()) {
		if strings.HasPrefix(service.ShortKey(r.Key), id) || strings.HasPrefix(r.Key, id) {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		return approval.Request{}, false
	}
	return found[0], true
}

// answer sends choice for id and echoes the command's first line.
func (k *keys) answer(ctx context.Context, id, choice string, c approval.Confirmed) {
	r, known := k.find(id)
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := k.in.Answer(actx, id, choice, "terminal", c); err != nil {
		what := approval.VisibleLine(id)
		if known {
			what += " (" + r.CommandFirstLine() + ")"
		}
		k.out.line("! %s: %s", what, surface.Line(err.Error())) // Herald's words; gateway text in them is visible already
		return
	}
	if !known {
		k.out.line("✓ %s %s, confirmed by the gateway", approval.VisibleLine(id), choice)
		return
	}
	k.out.line("✓ %s %s, confirmed by the gateway, for: %s", id, choice, r.CommandFirstLine())
}
