package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
)

// TestNotePolicy is the notification policy as a table (docs/notifications.md
// says the same in words): critical only for what waits for the user and
// can be answered here; everything else expires and shares its gateway's
// one slot.
func TestNotePolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind    NoteKind
		name    string
		urgency Urgency
		expire  time.Duration
		waits   bool
		slot    bool
	}{
		{NoteApproval, "an approval that can be allowed", UrgencyCritical, 0, true, false},
		{NotePrompt, "a question, a password or a secret", UrgencyCritical, 0, true, false},
		{NoteApprovals, "a gateway's approvals summed up", UrgencyCritical, 0, true, false},
		{NoteDenyOnly, "an approval Herald can only deny", UrgencyNormal, 0, true, false},
		{NoteAnswered, "what the gateway confirmed of an answer", UrgencyLow, confirmExpire, false, true},
		{NoteStopped, "a stop the gateway confirmed", UrgencyLow, confirmExpire, false, true},
		{NoteFailed, "an answer or a stop that failed, or its outcome unknown", UrgencyNormal, failExpire, false, true},
		{NoteUnseen, "a session Herald cannot see", UrgencyNormal, infoExpire, false, true},
		{NoteElsewhere, "a session another client took", UrgencyNormal, infoExpire, false, true},
		{NoteFlood, "a gateway flooding Herald", UrgencyNormal, infoExpire, false, true},
		{NoteRunFinished, "a finished run", UrgencyLow, infoExpire, false, true},
		{NoteHermes, "Hermes' own notice", UrgencyNormal, infoExpire, false, true},
		{NoteHerald, "Herald's own problem", UrgencyNormal, failExpire, false, false},
	} {
		r := notePolicy(tc.kind)
		if r.Urgency != tc.urgency || r.Expire != tc.expire || r.Waits != tc.waits || r.Slot != tc.slot {
			t.Errorf("%s: %+v, want urgency %v expire %v waits %v slot %v", tc.name, r, tc.urgency, tc.expire, tc.waits, tc.slot)
		}
		// The rule's invariants: critical means it waits; what waits
		// never expires and has no slot.
		if r.Urgency == UrgencyCritical && !r.Waits || r.Waits && (r.Expire != 0 || r.Slot) || !r.Waits && r.Expire == 0 {
			t.Errorf("%s: %+v breaks the policy", tc.name, r)
		}
	}
}

// TestApprovalNotificationUrgency: an approval is critical only when it
// can be allowed here; one Herald can only deny is normal; every prompt is
// critical.
func TestApprovalNotificationUrgency(t *testing.T) {
	t.Parallel()
	allowable := pendingRequest("lab/k1", "git push --force origin main")
	unseen := pendingRequest("lab/k2", "")
	unseen.Choices = []string{approval.ChoiceDeny}
	unbound := pendingRequest("lab/k3", "rm -rf ./build")
	unbound.Unbound = "Herald cannot prove this is the session's oldest"
	onlyDeny := pendingRequest("lab/k4", "rm -rf ./build")
	onlyDeny.Choices = []string{approval.ChoiceDeny}
	question := pendingRequest("lab/k5", "")
	question.Kind, question.Question, question.Choices = approval.KindClarify, "Which branch?", []string{"main", "dev"}
	secret := pendingRequest("lab/k6", "")
	secret.Kind, secret.EnvVar, secret.Choices = approval.KindSecret, "API_KEY", nil
	for _, tc := range []struct {
		name string
		r    approval.Request
		want Urgency
		kind NoteKind
	}{
		{"allowable", allowable, UrgencyCritical, NoteApproval},
		{"command unseen", unseen, UrgencyNormal, NoteDenyOnly},
		{"answer unbound", unbound, UrgencyNormal, NoteDenyOnly},
		{"deny is all it offers", onlyDeny, UrgencyNormal, NoteDenyOnly},
		{"a question", question, UrgencyCritical, NotePrompt},
		{"a secret", secret, UrgencyCritical, NotePrompt},
	} {
		n := approvalNotification(tc.r, t0)
		if n.Urgency != tc.want || n.Kind != tc.kind || n.Expire != 0 || n.Gateway != "lab" {
			t.Errorf("%s: urgency %v kind %v expire %v gateway %q, want %v %v", tc.name, n.Urgency, n.Kind, n.Expire, n.Gateway, tc.want, tc.kind)
		}
	}
}

// screen is what a fake platform shows: the notifications up by id.
func (f *fakePlatform) screen() map[string]Notification {
	f.mu.Lock()
	defer f.mu.Unlock()
	up := map[string]Notification{}
	for k, v := range f.up {
		up[k] = v
	}
	return up
}

func deskRig(t *testing.T) (*desk, *fakePlatform, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(t0)
	d := newDesk(clk)
	p := newFakePlatform()
	d.attach(p)
	t.Cleanup(d.close)
	return d, p, clk
}

func unseenNote(gw, session, name string) Notification {
	return Notification{ID: sessionNotificationID(gw, session), Kind: NoteUnseen, Gateway: gw,
		Title: "A session on " + gw + " runs where Herald cannot see it", Body: name + ": its approvals do not reach Herald.",
		Actions: [][2]string{{ActionFollow, "Follow"}}}
}

// TestDeskOneInformationalPerGateway: informational notifications of a
// gateway replace each other in its one slot, several are summed up, a
// gateway's slot never touches another's, approvals never go in one, and
// the slot goes when its time is up.
func TestDeskOneInformationalPerGateway(t *testing.T) {
	t.Parallel()
	d, p, clk := deskRig(t)
	d.Notify(unseenNote("lab", "s1", "Fix the build"))
	first := p.lastNotified()
	if first.ID != slotPrefix+"lab" || first.Urgency != UrgencyNormal || first.Expire != infoExpire || !hasAction(first, ActionFollow) || !strings.Contains(first.Body, "Fix the build") {
		t.Fatalf("first %+v", first)
	}
	if got := d.resolve(first.ID); got != sessionNotificationID("lab", "s1") {
		t.Fatalf("an action on the slot goes to %q, want the session's", got)
	}
	d.Notify(unseenNote("lab", "s2", "Deploy"))
	d.Notify(unseenNote("lab", "s3", "Nightly"))
	d.Notify(unseenNote("lab", "s3", "Nightly")) // the same session again: said already
	d.Notify(unseenNote("prod", "s9", "Other"))
	if len(p.notified) != 4 {
		t.Fatalf("%d notifications, want 4 (the repeat unsaid)", len(p.notified))
	}
	sum := p.notified[2]
	if sum.ID != slotPrefix+"lab" || sum.Title != "3 sessions on lab run where Herald cannot see them" || hasAction(sum, ActionFollow) {
		t.Fatalf("summed %+v", sum)
	}
	if got := d.resolve(sum.ID); got != sum.ID {
		t.Fatalf("a summed slot resolves to %q", got)
	}
	// Approvals stand on their own, critical, never in a slot.
	appr := approvalNotification(pendingRequest("lab/a1", "ls -la"), t0)
	d.Notify(appr)
	if got := p.lastNotified(); got.ID != "lab/a1" || got.Urgency != UrgencyCritical {
		t.Fatalf("approval %+v", got)
	}
	up := p.screen()
	info := map[string]int{}
	for _, n := range up {
		if n.Urgency != UrgencyCritical {
			info[n.Gateway]++
		}
	}
	if len(up) != 3 || info["lab"] != 1 || info["prod"] != 1 {
		t.Fatalf("on screen %v", up)
	}
	// A confirmation joins the slot and names it; the rest is a line.
	d.Notify(Notification{ID: "herald-answered:x", Kind: NoteAnswered, Gateway: "lab", Title: "Allowed once: ls -la", Body: "Confirmed by lab."})
	got := p.lastNotified()
	if got.ID != slotPrefix+"lab" || got.Title != "Allowed once: ls -la" || !strings.Contains(got.Body, "Also: 3 sessions on lab run where Herald cannot see them") || got.Urgency != UrgencyNormal {
		t.Fatalf("confirmation in the slot %+v", got)
	}
	// Time up: the slots go with what is in them; the approval stays.
	clk.BlockUntil(2)
	clk.Advance(infoExpire)
	p.waitFor(t, "the slots withdrawn", func(f *fakePlatform) bool { return len(f.withdrawn) == 2 })
	if up := p.screen(); len(up) != 1 || up["lab/a1"].ID == "" {
		t.Fatalf("after expiry %v", up)
	}
	d.Notify(unseenNote("lab", "s4", "Later"))
	if got := p.lastNotified(); got.Title != "A session on lab runs where Herald cannot see it" {
		t.Fatalf("a new slot after expiry still sums the old: %+v", got)
	}
}

// TestDeskWithdrawLeavesTheRest: a withdrawn item leaves its slot, which
// then shows what else is in it, or goes.
func TestDeskWithdrawLeavesTheRest(t *testing.T) {
	t.Parallel()
	d, p, _ := deskRig(t)
	d.Notify(Notification{ID: "hermes-notice:1", Kind: NoteHermes, Gateway: "lab", Title: "Hermes warning on lab", Body: "used $9"})
	d.Notify(unseenNote("lab", "s1", "Fix the build"))
	d.Withdraw("hermes-notice:1")
	if got := p.lastNotified(); got.Title != "A session on lab runs where Herald cannot see it" || strings.Contains(got.Body, "Hermes") {
		t.Fatalf("after the notice was cleared %+v", got)
	}
	d.Withdraw(sessionNotificationID("lab", "s1"))
	if len(p.withdrawn) != 1 || p.withdrawn[0] != slotPrefix+"lab" {
		t.Fatalf("withdrawn %v", p.withdrawn)
	}
	// An id in no slot is withdrawn as it is.
	d.Withdraw("lab/a1")
	if p.withdrawn[1] != "lab/a1" {
		t.Fatalf("withdrawn %v", p.withdrawn)
	}
}

// TestDeskPauseAndDoNotDisturb: Herald's pause holds back everything; the
// desktop's do not disturb holds back what is informational (and takes
// the slots up down), never what waits for the user.
func TestDeskPauseAndDoNotDisturb(t *testing.T) {
	t.Parallel()
	d, p, _ := deskRig(t)
	d.Notify(unseenNote("lab", "s1", "a"))
	d.setDoNotDisturb(true)
	if len(p.withdrawn) != 1 {
		t.Fatalf("do not disturb left the slot up: %v", p.withdrawn)
	}
	d.Notify(unseenNote("lab", "s2", "b"))
	d.Notify(approvalNotification(pendingRequest("lab/a1", "ls"), t0))
	if len(p.notified) != 2 || p.lastNotified().ID != "lab/a1" {
		t.Fatalf("under do not disturb: %+v", p.notified)
	}
	d.setDoNotDisturb(false)
	d.setPaused(true)
	d.Notify(approvalNotification(pendingRequest("lab/a2", "ls"), t0))
	d.Notify(unseenNote("lab", "s3", "c"))
	if len(p.notified) != 2 {
		t.Fatalf("paused: %+v", p.notified)
	}
}

// TestApprovalsSummedPastAFew: approvals never replace each other; past
// approvalNotesMax of a gateway at once one summary replaces them, counts
// them ("1 approval", never "1 approvals") and goes with the last.
func TestApprovalsSummedPastAFew(t *testing.T) {
	t.Parallel()
	d, p, _ := deskRig(t)
	n := newNotifier(clock.NewFake(t0), nil)
	n.attach(d)
	var rs []approval.Request
	for i := range 5 {
		r := pendingRequest(fmt.Sprintf("lab/k%d", i), fmt.Sprintf("rm -rf ./b%d", i))
		rs = append(rs, r)
		n.approval(approval.Change{Kind: approval.ChangeArrived, Request: r})
	}
	other := pendingRequest("prod/k", "ls")
	other.Gateway = "prod"
	n.approval(approval.Change{Kind: approval.ChangeArrived, Request: other})
	up := p.screen()
	if len(up) != 2 || up["prod/k"].ID == "" {
		t.Fatalf("on screen %v", up)
	}
	sum := up[approvalsSummaryID("lab")]
	if sum.Title != "5 approvals wait on lab" || sum.Urgency != UrgencyCritical || sum.Expire != 0 {
		t.Fatalf("summary %+v", sum)
	}
	if p.notified[0].ID != "lab/k0" || p.notified[2].ID != "lab/k2" || len(p.withdrawn) != 3 {
		t.Fatalf("the first %d show on their own, then go: notified %d withdrawn %v", approvalNotesMax, len(p.notified), p.withdrawn)
	}
	for i, r := range rs {
		r.State = approval.StateResolved
		n.approval(approval.Change{Kind: approval.ChangeUpdated, Request: r})
		if i == 3 {
			if got := p.screen()[approvalsSummaryID("lab")].Title; got != "1 approval waits on lab" {
				t.Fatalf("with one left: %q", got)
			}
		}
	}
	if up := p.screen(); len(up) != 1 || up["prod/k"].ID == "" {
		t.Fatalf("after all answered %v", up)
	}
}

// TestPauseHoldsApprovalsUntilItEnds: approvals that arrive while paused
// are shown when the pause ends, if they still wait.
func TestPauseHoldsApprovalsUntilItEnds(t *testing.T) {
	t.Parallel()
	n := newNotifier(clock.NewFake(t0), nil)
	p := newFakePlatform()
	n.attach(p)
	n.setPaused(true)
	a, b := pendingRequest("lab/a", "ls"), pendingRequest("lab/b", "ls -l")
	n.approval(approval.Change{Kind: approval.ChangeArrived, Request: a})
	n.approval(approval.Change{Kind: approval.ChangeArrived, Request: b})
	if len(p.notified) != 0 {
		t.Fatalf("shown while paused: %+v", p.notified)
	}
	n.setPaused(false)
	b.State = approval.StateExpired
	n.resume([]approval.Request{a, b})
	if len(p.notified) != 1 || p.notified[0].ID != "lab/a" {
		t.Fatalf("after the pause: %+v", p.notified)
	}
}

// TestAnswerNoteSaysWhatHappened: after an answer from a notification or
// the tray, a short notification says what the gateway confirmed, or
// what failed and what to do.
func TestAnswerNoteSaysWhatHappened(t *testing.T) {
	t.Parallel()
	r := pendingRequest("lab/k", "git push --force origin main")
	n := answerNote(r, r.Key, approval.ChoiceOnce, nil)
	if n.Kind != NoteAnswered || n.Title != "Allowed once: git push --force origin main" || n.Body != "Confirmed by lab." {
		t.Fatalf("confirmed %+v", n)
	}
	long := pendingRequest("lab/k", strings.Repeat("x", 200))
	if n := answerNote(long, long.Key, approval.ChoiceDeny, nil); !strings.HasPrefix(n.Title, "Denied: xxx") || !strings.HasSuffix(n.Title, "…") || len(n.Title) > 100 {
		t.Fatalf("long %+v", n)
	}
	unknown := &approval.UnknownOutcomeError{Gateway: "lab", Choice: "deny", Err: errors.New("link dropped")}
	if n := answerNote(r, r.Key, approval.ChoiceDeny, unknown); n.Kind != NoteFailed || !strings.HasPrefix(n.Title, "Outcome unknown: Denied sent for git push") || !strings.Contains(n.Body, "will not send it again") {
		t.Fatalf("unknown %+v", n)
	}
	sendErr := &approval.SendError{Gateway: "lab", Choice: "once", Err: errors.New("connection refused")}
	if n := answerNote(r, r.Key, approval.ChoiceOnce, sendErr); n.Kind != NoteFailed || !strings.HasPrefix(n.Title, "Not sent: Allowed once for git push") || !strings.Contains(n.Body, "try again") {
		t.Fatalf("not sent %+v", n)
	}
	q := pendingRequest("lab/q", "")
	q.Kind, q.Question = approval.KindClarify, "Which branch?"
	if n := answerNote(q, q.Key, "main", nil); n.Title != "Answered “main”: Which branch?" {
		t.Fatalf("question %+v", n)
	}
}

// TestPolicyDocIsTheTable: docs/notifications.md's table says what
// notePolicy does, row by row.
func TestPolicyDocIsTheTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "docs", "notifications.md"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]NoteKind{
		"approval": NoteApproval, "prompt": NotePrompt, "approvals": NoteApprovals, "deny-only": NoteDenyOnly,
		"answered": NoteAnswered, "stopped": NoteStopped, "failed": NoteFailed, "unseen": NoteUnseen,
		"elsewhere": NoteElsewhere, "flood": NoteFlood, "run-finished": NoteRunFinished, "hermes": NoteHermes, "herald": NoteHerald,
	}
	urgencies := map[string]Urgency{"critical": UrgencyCritical, "normal": UrgencyNormal, "low": UrgencyLow}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 5 {
			continue
		}
		k, ok := kinds[cells[0]]
		if !ok {
			continue
		}
		seen[cells[0]] = true
		r := notePolicy(k)
		expire := "until"
		if r.Expire > 0 {
			expire = fmt.Sprintf("%d s", int(r.Expire/time.Second))
		}
		if urgencies[cells[2]] != r.Urgency || !strings.HasPrefix(cells[3], expire) || (cells[4] == "yes") != r.Slot {
			t.Errorf("docs row %q, the policy says %+v", line, r)
		}
	}
	for name := range kinds {
		if !seen[name] {
			t.Errorf("docs/notifications.md has no row for %q", name)
		}
	}
}

// TestDeskSaysASessionOnce: a session another client drives is offered at
// each of its turns; its notification says so once (and again when what
// it says changes, e.g. it now waits), not at every turn, until
// renoticeAfter has passed.
func TestDeskSaysASessionOnce(t *testing.T) {
	t.Parallel()
	d, p, clk := deskRig(t)
	d.Notify(unseenNote("lab", "s1", "Fix the build"))
	d.Notify(unseenNote("lab", "s1", "Fix the build")) // its next turn
	if len(p.notified) != 1 {
		t.Fatalf("the same session's next turn notified again: %d", len(p.notified))
	}
	waits := unseenNote("lab", "s1", "Fix the build")
	waits.Title = "A session on lab waits for an answer Herald cannot see"
	d.Notify(waits)
	if len(p.notified) != 2 || p.lastNotified().Title != waits.Title {
		t.Fatalf("what changed was not said: %+v", p.notified)
	}
	d.Notify(unseenNote("lab", "s1", "Fix the build")) // running again: said before
	if len(p.notified) != 2 {
		t.Fatalf("said again: %+v", p.lastNotified())
	}
	clk.Advance(renoticeAfter)
	d.Notify(unseenNote("lab", "s1", "Fix the build"))
	if len(p.notified) != 3 {
		t.Fatalf("not said again after %s", renoticeAfter)
	}
	// Other kinds are not held back: a second stop of the same run.
	stop := Notification{ID: "herald-stop:x", Kind: NoteStopped, Gateway: "lab", Title: "Run stopped"}
	d.Notify(stop)
	d.Notify(stop)
	if len(p.notified) != 5 {
		t.Fatalf("a stop was held back: %d notified", len(p.notified))
	}
}
