package app

import (
	"context"
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
	if r.Kind != approval.KindClarify || !strings.HasPrefix(action, "choice:") || err != nil || n < 0 || n >= len(r.Choices) {
		a.openApproval(id)
		return true
	}
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	if err := a.svc.Answer(ctx, id, r.Choices[n], "notification", false); err != nil {
		a.warn(err.Error())
	}
	return true
}

// trayPrompt is a prompt's entry in the tray: clarify choices may be
// picked there; sudo and secret only open the window.
func trayPrompt(r ApprovalView) TrayApproval {
	t := TrayApproval{Key: r.Key, Kind: string(r.Kind)}
	gw := approval.VisibleLine(r.Gateway)
	switch r.Kind {
	case approval.KindClarify:
		t.Label = gw + ": " + trayCut(approval.VisibleLine(r.Question))
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
