package app

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermestest"
)

// Issue 29's clarify: two choices that read the same up to the cut.
var pastTheCut = []string{
	"Remove the temporary build artifacts in ./build, keep the rest (safe)",
	"Remove the temporary build artifacts in ./build, keep the rest (safe) and then also delete ~/projects",
}

func clarify(choices ...string) approval.Request {
	return approval.Request{Key: "lab/srq/q1", Kind: approval.KindClarify, Gateway: "lab", Session: "s1", Question: "Clean up?",
		Choices: choices, ReceivedAt: t0, ExpiresAt: t0.Add(5 * time.Minute), Dialect: approval.DialectServerRequest, State: approval.StatePending}
}

func choiceButtons(n Notification) []string {
	var out []string
	for _, a := range n.Actions {
		if strings.HasPrefix(a[0], "choice:") {
			out = append(out, a[1])
		}
	}
	return out
}

// TestClarifyChoicesOnlyWhole: the notification and the tray offer a
// clarify's choices only when each shows whole and no two read alike;
// otherwise only Open…, and they say why.
func TestClarifyChoicesOnlyWhole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		choices      []string
		notify, tray bool // whether each surface offers the choices
	}{
		{"short and distinct", []string{"dev", "staging", "prod"}, true, true},
		{"past both cuts", pastTheCut, false, false},
		{"alike", []string{"yes", "yes"}, false, false},
		{"fits the notification, not the tray", []string{strings.Repeat("a", 50), "b"}, true, false},
		{"alike only past the notification's cut", []string{strings.Repeat("x", 64) + "1", strings.Repeat("x", 64) + "2"}, false, false},
		{"a long fourth choice the notification does not list", []string{"a", "b", "c", strings.Repeat("d", 80)}, true, false},
	} {
		r := clarify(tc.choices...)
		n := approvalNotification(r, t0)
		got := choiceButtons(n)
		if tc.notify != (len(got) > 0) || !hasAction(n, ActionOpen) {
			t.Errorf("%s: notification buttons %q (want offered: %v)", tc.name, got, tc.notify)
		}
		for i, l := range got {
			if l != approval.VisibleLine(tc.choices[i]) {
				t.Errorf("%s: button %d reads %q, its choice is %q", tc.name, i, l, tc.choices[i])
			}
		}
		if !tc.notify && !strings.Contains(n.Body, choicesNote) {
			t.Errorf("%s: the notification does not say why it offers no choice: %q", tc.name, n.Body)
		}
		ta := trayPrompt(approvalView(r))
		offered := ta.Choices != [trayChoices]string{}
		if tc.tray != offered || (!offered && ta.Note != choicesNote) {
			t.Errorf("%s: tray item %+v (want choices offered: %v)", tc.name, ta, tc.tray)
		}
		for _, c := range ta.Choices {
			if c != "" && trayCut(approval.VisibleLine(c)) != approval.VisibleLine(c) {
				t.Errorf("%s: the tray offers %q cut", tc.name, c)
			}
		}
	}
}

// TestClarifyChoiceActionOnlyWhenOffered: a notification's choice action
// for choices the notification did not offer (a stale or forged one)
// answers nothing and opens the window, in both dialects; the window then
// answers by the full choice.
func TestClarifyChoiceActionOnlyWhenOffered(t *testing.T) {
	for _, dl := range []hermestest.Dialect{hermestest.Legacy, hermestest.Modern} {
		t.Run(dl.String(), func(t *testing.T) {
			d := newPromptDesk(t, dl)
			v, n, done, _ := d.ask(t, hermestest.PromptSpec{Kind: hermestest.PromptClarify, Question: "Clean up?", Choices: pastTheCut})
			if got := choiceButtons(n); len(got) != 0 {
				t.Fatalf("the notification offers %q", got)
			}
			d.act(n.ID, "choice:0")
			d.p.waitFor(t, "the window opened", func(f *fakePlatform) bool { return f.emits[EventOpenApproval] == 1 })
			if r, _ := d.a.Service().Inbox().Get(v.Key); r.State != approval.StatePending {
				t.Fatalf("the question is %s after a button it did not offer", r.State)
			}
			if err := d.a.Answer(v.Key, pastTheCut[0], false); err != nil {
				t.Fatal(err)
			}
			if r := recv(t, done); r.Value != pastTheCut[0] {
				t.Fatalf("agent got %+v", r)
			}
		})
	}
}
