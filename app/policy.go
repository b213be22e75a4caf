package app

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
)

// Herald's notification policy (docs/notifications.md; TestNotePolicy is
// its table). One rule decides how loud a notification is, how long it
// stays and what it replaces, from what it is about (NoteKind):
//
//   - Critical urgency only for what waits for the user and can be
//     answered here: an approval that can be allowed, a question, a
//     password or secret. It stays until answered or ended. A deny-only
//     approval waits too, at normal urgency.
//   - Everything else is informational: normal or low urgency, it
//     expires, and it shares its gateway's one slot (the desk below): a
//     new one replaces the one on screen (the same notification id, so
//     the server's replaces_id), and several at once are summed up ("3
//     sessions on lab run where Herald cannot see them"). There is never
//     more than one informational notification per gateway on screen.
//   - Approvals never replace each other; past approvalNotesMax of a
//     gateway at once, one summary ("5 approvals wait on lab") replaces
//     them (notifier.approval).
//   - Herald's "Pause notifications" holds everything back; the
//     desktop's do not disturb (where the server says so) holds back
//     everything informational. The tray still counts what waits.

// NoteKind is what a notification is about; notePolicy decides the rest.
type NoteKind int

// What a notification can be about.
const (
	// NoteUnset: no policy applied yet (the desk applies one to
	// everything it shows). A platform shows one with buttons as one
	// that waits: the safe side.
	NoteUnset NoteKind = iota
	// NoteHerald is about Herald itself (its window cannot open).
	NoteHerald
	// NoteApproval is an approval that can be allowed here.
	NoteApproval
	// NoteDenyOnly is an approval Herald can only deny (it could not
	// see or bind the command).
	NoteDenyOnly
	// NotePrompt is a question, a password or a secret asked.
	NotePrompt
	// NoteApprovals sums up a gateway's approvals past approvalNotesMax.
	NoteApprovals
	// NoteAnswered says what the gateway confirmed of an answer given in
	// a notification or the tray.
	NoteAnswered
	// NoteFailed says that an answer or a stop given in a notification
	// or the tray failed, or that its outcome is unknown, and what to do.
	NoteFailed
	// NoteUnseen is a session Herald cannot see (another client's).
	NoteUnseen
	// NoteElsewhere is a followed session another client took.
	NoteElsewhere
	// NoteFlood is a gateway sending more approvals than Herald takes.
	NoteFlood
	// NoteRunFinished is a finished turn (off unless the user asks).
	NoteRunFinished
	// NoteStopped is a run stopped from the tray, as the gateway
	// confirmed it.
	NoteStopped
	// NoteHermes is Hermes' own notice (notification.show).
	NoteHermes
)

// Rule is how notifications of one kind behave.
type Rule struct {
	Urgency Urgency
	// Expire is how long it stays on screen; 0: until it is answered,
	// ends or is withdrawn.
	Expire time.Duration
	// Waits: it waits for the user. Shown under the desktop's do not
	// disturb too (the server holds it), never replaced by another.
	Waits bool
	// Slot: informational, in its gateway's one slot.
	Slot bool
}

// How long informational notifications stay.
const (
	// confirmExpire: an answer's confirmation, a stop's.
	confirmExpire = 6 * time.Second
	// infoExpire: sessions, floods, finished runs, Hermes' notices.
	infoExpire = 10 * time.Second
	// failExpire: what failed and what to do takes longer to read.
	failExpire = 20 * time.Second
)

// notePolicy is the rule for kind.
func notePolicy(kind NoteKind) Rule {
	switch kind {
	case NoteApproval, NotePrompt, NoteApprovals:
		return Rule{Urgency: UrgencyCritical, Waits: true}
	case NoteDenyOnly:
		return Rule{Urgency: UrgencyNormal, Waits: true}
	case NoteAnswered, NoteStopped:
		return Rule{Urgency: UrgencyLow, Expire: confirmExpire, Slot: true}
	case NoteFailed:
		return Rule{Urgency: UrgencyNormal, Expire: failExpire, Slot: true}
	case NoteUnseen, NoteElsewhere, NoteFlood:
		return Rule{Urgency: UrgencyNormal, Expire: infoExpire, Slot: true}
	case NoteRunFinished:
		return Rule{Urgency: UrgencyLow, Expire: infoExpire, Slot: true}
	case NoteHermes:
		// Its level decides normal or low (hermesUrgency).
		return Rule{Urgency: UrgencyNormal, Expire: infoExpire, Slot: true}
	}
	return Rule{Urgency: UrgencyNormal, Expire: failExpire}
}

// approvalKind is the kind of a request's notification.
func approvalKind(r approval.Request) NoteKind {
	switch {
	case r.Kind.IsPrompt():
		return NotePrompt
	case answerable(r):
		return NoteApproval
	}
	return NoteDenyOnly
}

// answerable reports whether a request waits for the user and can be
// answered here with more than a deny: a prompt, or an approval whose
// command Herald showed and can bind an answer to.
func answerable(r approval.Request) bool {
	if r.Kind.IsPrompt() {
		return true
	}
	return r.DenyOnly() == "" && slices.ContainsFunc(r.Choices, func(c string) bool { return c != approval.ChoiceDeny })
}

// withRule is n with its kind's urgency and expiry. A Hermes notice
// keeps the urgency its level gave it, at most normal.
func withRule(n Notification) Notification {
	r := notePolicy(n.Kind)
	if n.Kind == NoteHermes && n.Urgency == UrgencyLow {
		r.Urgency = UrgencyLow
	}
	n.Urgency, n.Expire = r.Urgency, r.Expire
	return n
}

// slotPrefix names a gateway's informational notification.
const slotPrefix = "herald-info:"

// slotPriority orders the kinds of one slot: the first present names
// the notification, the others are a line each.
var slotPriority = []NoteKind{NoteFailed, NoteAnswered, NoteStopped, NoteFlood, NoteElsewhere, NoteUnseen, NoteHermes, NoteRunFinished}

// slotItemsMax bounds what a slot remembers (a gateway's hostile flood
// of notices cannot grow it).
const slotItemsMax = 32

// desk is the one way notifications reach the desktop. It applies the
// policy to each (withRule), keeps one informational notification per
// gateway (its slot) and sums up what is in it, and holds back what must
// not show now: nothing while the user paused notifications, nothing
// informational under the desktop's do not disturb. It is a noteSink,
// like the platform it wraps.
type desk struct {
	clk clock.Clock

	mu       sync.Mutex
	platform Platform
	paused   bool
	dnd      bool
	slots    map[string]*slot // by gateway
	gen      uint64
	// said remembers what each session's notification (unseen, taken
	// elsewhere) said and when: the same thing is not said again within
	// renoticeAfter (a session another client drives is offered again at
	// each of its turns; the tray lists it all along).
	said      map[string][]saidNote
	saidOrder []string
}

// saidNote is what an informational notification said, and when.
type saidNote struct {
	title string
	at    time.Time
}

// renoticeAfter is how long an informational notification that said the
// same thing before stays unsaid; saidMax bounds the ids remembered.
const (
	renoticeAfter = 10 * time.Minute
	saidMax       = 256
)

// slot is one gateway's informational notification.
type slot struct {
	items []slotItem // oldest first
	gen   uint64
	timer clock.Timer
	done  chan struct{}
	// actions: the one item whose actions the slot shows (its id).
	actions string
}

type slotItem struct {
	n     Notification
	until time.Time
}

func newDesk(clk clock.Clock) *desk { return &desk{clk: clk, slots: map[string]*slot{}} }

func (d *desk) attach(p Platform) {
	d.mu.Lock()
	d.platform = p
	d.mu.Unlock()
}

func (d *desk) setPaused(on bool) {
	d.mu.Lock()
	d.paused = on
	d.mu.Unlock()
}

// setDoNotDisturb records the desktop's do not disturb; turned on, the
// informational notifications up go.
func (d *desk) setDoNotDisturb(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dnd = on
	if on {
		for gw := range d.slots {
			d.dropSlotLocked(gw)
		}
	}
}

// Notify shows n as the policy says.
func (d *desk) Notify(n Notification) error {
	n = withRule(n)
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.platform
	rule := notePolicy(n.Kind)
	switch {
	case p == nil, d.paused, d.dnd && !rule.Waits:
		return nil
	case !rule.Slot:
		return p.Notify(n)
	}
	now := d.clk.Now()
	if (n.Kind == NoteUnseen || n.Kind == NoteElsewhere) && d.saidLocked(n, now) {
		return nil // said already: the tray and the window still show it
	}
	s := d.slots[n.Gateway]
	if s == nil {
		s = &slot{}
		d.slots[n.Gateway] = s
	}
	s.items = slices.DeleteFunc(s.items, func(it slotItem) bool { return it.n.ID == n.ID || !now.Before(it.until) })
	s.items = append(s.items, slotItem{n: n, until: now.Add(n.Expire)})
	if len(s.items) > slotItemsMax {
		s.items = s.items[len(s.items)-slotItemsMax:]
	}
	return d.showSlotLocked(n.Gateway, s, now)
}

// saidLocked reports whether n says what its id said within
// renoticeAfter, and remembers that it says it now.
func (d *desk) saidLocked(n Notification, now time.Time) bool {
	if d.said == nil {
		d.said = map[string][]saidNote{}
	}
	prev, known := d.said[n.ID]
	for _, p := range prev {
		if p.title == n.Title && now.Sub(p.at) < renoticeAfter {
			return true
		}
	}
	kept := slices.DeleteFunc(slices.Clone(prev), func(p saidNote) bool { return p.title == n.Title || now.Sub(p.at) >= renoticeAfter })
	d.said[n.ID] = append(kept, saidNote{title: n.Title, at: now})
	if !known {
		d.saidOrder = append(d.saidOrder, n.ID)
		for len(d.saidOrder) > saidMax {
			delete(d.said, d.saidOrder[0])
			d.saidOrder = d.saidOrder[1:]
		}
	}
	return false
}

// Withdraw takes a notification down; an informational one leaves its
// slot (which shows what else is in it, or goes).
func (d *desk) Withdraw(id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.platform
	if p == nil {
		return nil
	}
	for gw, s := range d.slots {
		i := slices.IndexFunc(s.items, func(it slotItem) bool { return it.n.ID == id })
		if i < 0 {
			continue
		}
		s.items = slices.Delete(s.items, i, i+1)
		now := d.clk.Now()
		s.items = slices.DeleteFunc(s.items, func(it slotItem) bool { return !now.Before(it.until) })
		if len(s.items) == 0 {
			d.dropSlotLocked(gw)
			return nil
		}
		return d.showSlotLocked(gw, s, now)
	}
	return p.Withdraw(id)
}

// resolve is the notification an action on id is for: the item whose
// actions a slot shows, or id itself.
func (d *desk) resolve(id string) string {
	gw, ok := strings.CutPrefix(id, slotPrefix)
	if !ok {
		return id
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if s := d.slots[gw]; s != nil && s.actions != "" {
		return s.actions
	}
	return id
}

// showSlotLocked shows a gateway's slot: the first kind present by
// slotPriority names it (summed up when there are several of it), each
// other kind adds a line. It stays as long as its newest item's rule
// says, then goes with everything in it.
func (d *desk) showSlotLocked(gw string, s *slot, now time.Time) error {
	byKind := map[NoteKind][]Notification{}
	var last time.Time
	for _, it := range s.items {
		byKind[it.n.Kind] = append(byKind[it.n.Kind], it.n)
		if it.until.After(last) {
			last = it.until
		}
	}
	kinds := append([]NoteKind(nil), slotPriority...)
	for k := range byKind {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	out := Notification{ID: slotPrefix + gw, Gateway: gw, Urgency: UrgencyLow, Expire: last.Sub(now)}
	var also []string
	s.actions = ""
	for _, k := range kinds {
		ns := byKind[k]
		if len(ns) == 0 {
			continue
		}
		for _, n := range ns {
			if n.Urgency == UrgencyNormal {
				out.Urgency = UrgencyNormal
			}
		}
		title, body := summed(k, gw, ns)
		if out.Title == "" {
			out.Kind, out.Title, out.Body = k, title, body
			if len(ns) == 1 && len(s.items) == 1 {
				out.Actions, s.actions = ns[0].Actions, ns[0].ID
			}
			continue
		}
		also = append(also, title)
	}
	if len(also) > 0 {
		out.Body = strings.TrimSpace(out.Body + "\nAlso: " + strings.Join(also, "; ") + ".")
	}
	if len(out.Actions) == 0 {
		out.Actions = [][2]string{{ActionOpen, "Open Herald"}}
	}
	d.armSlotLocked(gw, s, out.Expire)
	return d.platform.Notify(out)
}

// summed is the title and body of ns, all of kind k on gateway gw: one
// is itself, several are counted.
func summed(k NoteKind, gw string, ns []Notification) (title, body string) {
	if len(ns) == 1 {
		return ns[0].Title, ns[0].Body
	}
	g := clipLine(gw, notifyTitleMax)
	var what string
	switch k {
	case NoteUnseen:
		what = fmt.Sprintf("%d sessions on %s run where Herald cannot see them", len(ns), g)
		body = "Herald does not receive their approvals: follow them in Herald's Sessions to see them here."
	case NoteElsewhere:
		what = fmt.Sprintf("%d sessions on %s were taken by another client", len(ns), g)
		body = "Their approvals go there now: take them back in Herald's Sessions."
	case NoteAnswered:
		what = fmt.Sprintf("%d answers confirmed by %s", len(ns), g)
	case NoteFailed:
		what = fmt.Sprintf("%d answers or stops on %s did not go through", len(ns), g)
		body = "Open Herald to see what happened to each and what to do."
	case NoteRunFinished:
		what = fmt.Sprintf("%d runs finished on %s", len(ns), g)
	case NoteStopped:
		what = fmt.Sprintf("%d runs stopped on %s", len(ns), g)
	case NoteHermes:
		what = fmt.Sprintf("%d notices from Hermes on %s", len(ns), g)
	default:
		what = fmt.Sprintf("%s (and %d more like it)", ns[len(ns)-1].Title, len(ns)-1)
		body = ns[len(ns)-1].Body
	}
	if body == "" {
		var lines []string
		for i := len(ns) - 1; i >= 0 && len(lines) < 3; i-- {
			lines = append(lines, ns[i].Title)
		}
		sort.Strings(lines)
		body = strings.Join(lines, "\n")
	}
	return what, body
}

// armSlotLocked (re)starts the slot's timer: when it fires the slot goes
// with everything in it (the server closed it at the same time).
func (d *desk) armSlotLocked(gw string, s *slot, after time.Duration) {
	d.stopSlotLocked(s)
	d.gen++
	s.gen, s.done = d.gen, make(chan struct{})
	s.timer = d.clk.NewTimer(max(after, 0))
	go d.expire(gw, s, s.gen, s.timer, s.done)
}

func (d *desk) expire(gw string, s *slot, gen uint64, t clock.Timer, done chan struct{}) {
	select {
	case <-t.C():
	case <-done:
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.slots[gw] != s || s.gen != gen {
		return
	}
	d.stopSlotLocked(s)
	delete(d.slots, gw)
	if d.platform != nil {
		d.platform.Withdraw(slotPrefix + gw)
	}
}

func (d *desk) stopSlotLocked(s *slot) {
	if s.done != nil {
		close(s.done)
		s.done = nil
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// dropSlotLocked takes a gateway's slot down with everything in it.
func (d *desk) dropSlotLocked(gw string) {
	s := d.slots[gw]
	if s == nil {
		return
	}
	d.stopSlotLocked(s)
	delete(d.slots, gw)
	if d.platform != nil {
		d.platform.Withdraw(slotPrefix + gw)
	}
}

// close releases every slot's timer.
func (d *desk) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.slots {
		d.stopSlotLocked(s)
	}
	d.slots = map[string]*slot{}
}

// plural is "1 approval" or "3 approvals".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
