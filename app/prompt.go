package app

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/wire"
)

// AnswerText answers a clarify question with text, or a sudo or secret
// prompt with the password or value typed in the window (an empty value
// declines). The value goes only to the gateway that asked; it is not
// logged, stored or shown, and the inbox wipes its copy once sent.
func (a *App) AnswerText(key, value string) error {
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	return surface.LineError(a.svc.AnswerText(ctx, key, wire.NewSecret([]byte(value)), "window"))
}

// trayChoices is how many clarify choices the tray lists.
const trayChoices = 4

// notifyChoices is how many clarify choices a notification offers as
// buttons (notification servers show few).
const notifyChoices = 3

// whole reports whether every one of labels (a clarify's first choices,
// shown as approval.VisibleLine) fits a one-line surface as it is and no
// two read the same: only then may the surface offer them, each one's
// button answering what it reads. Otherwise the surface offers only
// "Open…", where the window shows every choice whole.
func whole(labels []string, fits func(string) bool) bool {
	for i, l := range labels {
		if !fits(l) || slices.Contains(labels[:i], l) {
			return false
		}
	}
	return true
}

// clarifyLabels are the first n choices of a clarify as a one-line surface
// shows them.
func clarifyLabels(choices []string, n int) []string {
	var out []string
	for i, c := range choices {
		if i == n {
			break
		}
		out = append(out, approval.VisibleLine(c))
	}
	return out
}

// choicesNote is what a one-line surface says instead of a clarify's
// choices that it cannot show whole.
const choicesNote = "Its choices are too long to show here, or read alike: open Herald to see them whole."

// choiceAction is the notification action id of clarify choice i.
func choiceAction(i int) string { return "choice:" + strconv.Itoa(i) }

// promptAction handles a notification action for a prompt: a listed
// clarify choice is answered; anything else on a prompt opens the window
// (a password or secret is never entered from a notification). It
// reports whether id was a prompt.
func (a *App) promptAction(id, action string) bool {
	r, ok := a.svc.Inbox().Get(id)
	if !ok || !r.Kind.IsPrompt() {
		return false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(action, "choice:"))
	if r.Kind != approval.KindClarify || !strings.HasPrefix(action, "choice:") || err != nil || n < 0 || n >= min(len(r.Choices), notifyChoices) ||
		!whole(clarifyLabels(r.Choices, notifyChoices), notifyFits) {
		// Not a button the notification offered (it offers choices only
		// when each reads whole and apart): show them all instead.
		a.openApproval(id)
		return true
	}
	a.answerFrom(id, r.Choices[n], "notification")
	return true
}

// trayPrompt is a prompt's entry in the tray: clarify choices may be
// picked there; sudo and secret only open the window.
func trayPrompt(r ApprovalView) TrayApproval {
	t := TrayApproval{Key: r.Key, Kind: string(r.Kind)}
	gw := trayWho(r.Request)
	switch r.Kind {
	case approval.KindClarify:
		t.Label = gw + ": " + trayCut(approval.VisibleLine(r.Question))
		if !whole(clarifyLabels(r.Choices, trayChoices), func(l string) bool { return trayCut(l) == l }) {
			t.Note = choicesNote
			break
		}
		for i, c := range r.Choices {
			if i == trayChoices {
				break
			}
			t.Choices[i] = c
		}
	case approval.KindSudo:
		t.Label = gw + ": sudo password needed"
	case approval.KindSecret:
		t.Label = gw + ": secret " + trayCut(approval.VisibleLine(r.EnvVar)) + " needed"
	}
	return t
}

func trayCut(s string) string {
	if len([]rune(s)) > 48 {
		return string([]rune(s)[:48]) + "…"
	}
	return s
}
