package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// What the desktop surfaces show of a request. The window gets Go-made
// display text (approval.Display) and renders it as text, never HTML. The
// notification and the tray show one line with secrets masked (masking
// never hides code); when that line cannot show the whole command as it
// is (cut, several lines, holding control or invisible characters shown
// as markers, or partly hidden by Hermes' own masking) they say so and
// offer no one-click approval: the user opens the window, which shows all
// Herald has.

// Notification action ids (besides the choices "once" and "deny").
const (
	// ActionOpen is the notification's "Open…" button.
	ActionOpen = "open"
	// ActionDefault is a click on the notification's body (the
	// freedesktop "default" action): it opens the request, like Open….
	// Dismissing a notification (NotificationClosed) is no action at all.
	ActionDefault = "default"
	// ActionClickedOrDismissed is what the Wails platform reports for
	// Wails' DEFAULT_ACTION: on Linux Wails answers a dismissal (reason 2
	// of NotificationClosed, the close button) with it too
	// (internal/frontend/desktop/linux/notifications.go), so Herald cannot
	// tell a click from a dismissal and does nothing: dismissing must never
	// raise the window. Open… does.
	ActionClickedOrDismissed = "clicked-or-dismissed"
)

// Byte limits of the one-line surfaces (UTF-8-safe, see approval.Truncate).
const (
	notifyCommandMax = 240
	notifyTextMax    = 160
	notifyTitleMax   = 64
	trayLabelMax     = 48
)

// notifyFits reports whether a button label fits a notification whole.
func notifyFits(label string) bool { return len(label) <= notifyTitleMax }

// Notes shown instead of a one-click approval.
const (
	truncatedNote = "Command truncated: open Herald to see all of it."
	markersNote   = "The command holds control, invisible, direction-changing or look-alike characters (shown as ␛ and ⟦…⟧): open Herald to review it."
	linesNote     = "The command has %d lines: open Herald to see them."
)

// hiddenNoteMax bounds the note that says what Hermes hid.
const hiddenNoteMax = 240

// hiddenNote says what Hermes hid in r's command ("" when nothing), for a
// one-line surface: there is no one-click approval then.
func hiddenNote(r approval.Request) string {
	h := r.Hidden()
	if h == "" {
		return ""
	}
	if t, cut := approval.Truncate(h, hiddenNoteMax); cut {
		h = t + "…"
	}
	return h + ". Herald cannot show what runs there: open Herald to review it."
}

// oneLine is what a one-line surface shows of r's command within max
// bytes, whether that is all of it as the gateway sent it and unmasked by
// Hermes (so a one-click approval may be offered), and if not, why.
func oneLine(r approval.Request, max int) (text string, whole bool, note string) {
	text, cut := approval.Truncate(approval.VisibleCommandLine(approval.Redact(r.Command)), max)
	lines := strings.Count(r.Command, "\n") + 1
	switch {
	case r.Hidden() != "":
		if cut {
			text += "…"
		}
		return text, false, hiddenNote(r)
	case cut:
		return text + "…", false, truncatedNote
	case approval.HasMarkers(r.Command):
		return text, false, markersNote
	case lines > 1:
		return text, false, fmt.Sprintf(linesNote, lines)
	}
	return text, true, ""
}

// sessionCut is a session's one name as a notification's title shows it.
func sessionCut(name string) string {
	n, cut := approval.Truncate(approval.VisibleLine(name), notifyTitleMax)
	if cut {
		n += "…"
	}
	return n
}

// choiceButton is a notification button for choice c, labelled from the
// one table of choices (source.ChoiceTable).
func choiceButton(c string) [2]string { return [2]string{c, source.ChoiceLabel(c)} }

// oneClick reports whether a one-line surface showing max bytes may offer
// "Allow once" for r without opening it.
func oneClick(r approval.Request, max int) bool {
	_, whole, _ := oneLine(r, max)
	return whole && !r.Kind.IsPrompt() && r.OneClickApprovable()
}

// approvalNotification is the notification for a new request; its
// countdown is the request's own ExpiresAt (the gateway's timeout). The
// policy gives it its urgency: critical when it can be answered here.
func approvalNotification(r approval.Request, now time.Time) Notification {
	n := approvalNote(r, now)
	n.Kind, n.Gateway = approvalKind(r), r.Gateway
	return withRule(n)
}

func approvalNote(r approval.Request, now time.Time) Notification {
	gw, cut := approval.Truncate(approval.VisibleLine(r.Gateway), notifyTitleMax)
	if cut {
		gw += "…"
	}
	if r.Kind.IsPrompt() {
		return promptNotification(r, gw, now)
	}
	if r.Unseen() {
		return unseenNotification(r)
	}
	cmd, _, note := oneLine(r, notifyCommandMax)
	body := []string{cmd}
	if note != "" {
		body = append(body, note)
	}
	if r.Description != "" {
		d, cut := approval.Truncate(approval.VisibleLine(approval.Redact(r.Description)), notifyTextMax)
		if cut {
			d += "…"
		}
		body = append(body, d)
	}
	if !r.ExpiresAt.IsZero() {
		left := r.ExpiresAt.Sub(now).Round(time.Second)
		body = append(body, fmt.Sprintf("Expires at %s (in %s).", r.ExpiresAt.Local().Format("15:04:05"), max(left, 0)))
	}
	actions := [][2]string{{ActionOpen, "Open…"}}
	if oneClick(r, notifyCommandMax) {
		actions = append(actions, choiceButton(approval.ChoiceOnce))
	}
	if r.Offers(approval.ChoiceDeny) {
		actions = append(actions, choiceButton(approval.ChoiceDeny))
	}
	return Notification{
		ID:      r.Key,
		Title:   fmt.Sprintf("Approve command on %s · %s?", gw, sessionCut(r.RecordedName())),
		Body:    strings.Join(body, "\n"),
		Actions: actions,
	}
}

// unseenNotification is the notification for an approval whose command
// Herald was never shown: titled for what it is, no command, expiry
// unknown, deny only.
// notifyFields is how many fields of an approval that is not a command a
// notification shows.
const notifyFields = 3

func unseenNotification(r approval.Request) Notification {
	d := r.Display()
	title, _ := approval.Truncate(d.Title, notifyTextMax)
	body := []string{runText(r.Description), "Expires: unknown (Herald did not see when it was asked)."}
	if len(r.Fields) > 0 {
		// Not a command: a few of the fields it asks with, masked.
		body = []string{}
		for i, f := range r.Fields {
			if i == notifyFields {
				body = append(body, "… open Herald to see all it asks")
				break
			}
			l, cut := approval.Truncate(approval.VisibleLine(f.Name+": "+approval.Redact(f.Value)), notifyTextMax)
			if cut {
				l += "…"
			}
			body = append(body, l)
		}
		if r.Description != "" {
			body = append(body, runText(r.Description))
		}
		body = append(body, "Only deny is accepted here: Herald cannot show exactly what an approval would allow.")
	}
	actions := [][2]string{{ActionOpen, "Open…"}}
	if r.Offers(approval.ChoiceDeny) {
		actions = append(actions, choiceButton(approval.ChoiceDeny))
	}
	return Notification{ID: r.Key, Title: title, Body: strings.Join(body, "\n"), Actions: actions}
}

// promptNotification is the notification for a clarify, sudo or secret
// prompt: what is asked and "Open…"; a clarify also offers its first
// choices as buttons (choiceAction). A password or secret is never
// entered from a notification: those only open the window.
func promptNotification(r approval.Request, gw string, now time.Time) Notification {
	title, text := "Question from "+gw, r.Question
	switch r.Kind {
	case approval.KindSudo:
		title, text = "Sudo password wanted on "+gw, r.Command
		if text == "" {
			text = "Open Herald to type it."
		}
	case approval.KindSecret:
		env, _ := approval.Truncate(approval.VisibleLine(r.EnvVar), notifyTitleMax)
		title, text = "Secret "+env+" wanted on "+gw, r.Prompt
	}
	body := []string{runText(text)}
	if !r.ExpiresAt.IsZero() {
		body = append(body, fmt.Sprintf("Expires at %s (in %s).", r.ExpiresAt.Local().Format("15:04:05"), max(r.ExpiresAt.Sub(now).Round(time.Second), 0)))
	}
	actions := [][2]string{{ActionOpen, "Open…"}}
	if r.Kind == approval.KindClarify {
		labels := clarifyLabels(r.Choices, notifyChoices)
		if whole(labels, notifyFits) {
			for i, l := range labels {
				actions = append(actions, [2]string{choiceAction(i), l})
			}
		} else {
			body = append(body, choicesNote)
		}
	}
	return Notification{ID: r.Key, Title: title, Body: strings.Join(body, "\n"), Actions: actions}
}

// runText is the text of a run notification.
func runText(s string) string {
	t, cut := approval.Truncate(approval.VisibleLine(approval.Redact(s)), notifyTextMax)
	if cut {
		t += "…"
	}
	return t
}

// trayApproval is a pending request in the tray menu.
func trayApproval(r approval.Request) TrayApproval {
	return trayApprovalIn(r, r.Display())
}

// trayApprovalIn is trayApproval with the display the window uses (the
// session's one name): an unseen approval is labelled by its session.
func trayApprovalIn(r approval.Request, d approval.Display) TrayApproval {
	if d.Unseen {
		return TrayApproval{Key: r.Key, Label: trayCutLabel(d.Title)}
	}
	label, _, note := oneLine(r, trayLabelMax)
	return TrayApproval{Key: r.Key, Label: trayWho(r) + ": " + label, Note: note, CanOnce: oneClick(r, trayLabelMax)}
}

// trayWho names where a request waits in the tray as every surface does:
// "gateway · session" (the session's one name, approval.Naming), each
// bounded so the command keeps its room.
func trayWho(r approval.Request) string {
	cut := func(s string, n int) string {
		if rs := []rune(approval.VisibleLine(s)); len(rs) > n {
			return string(rs[:n]) + "…"
		}
		return approval.VisibleLine(s)
	}
	return cut(r.Gateway, trayWhoMax) + " · " + cut(r.RecordedName(), trayWhoMax)
}

// trayWhoMax bounds the gateway's and the session's name in a tray item.
const trayWhoMax = 32

// displaySessions is the sessions with the gateway's text (title, model,
// tool, status, last text) shown as approval.VisibleLine; ids stay as they
// are, since the window sends them back. Each is named by names (one name
// per session: the Sessions panel and the history use it too).
func displaySessions(ss []service.SessionView, names service.SessionNames) []service.SessionView {
	out := make([]service.SessionView, len(ss))
	for i, s := range ss {
		s.Name = clipLine(names.Of(s.Gateway, s.ID, s.StoredID, s.Title), liveTitleMax) // clipLine shows it as VisibleLine
		s.ShownID = approval.VisibleLine(approval.SessionID(s.StoredID, s.ID))
		v := approval.VisibleLine
		s.Title, s.Model, s.Tool, s.Status, s.LastText = v(s.Title), v(s.Model), v(s.Tool), v(s.Status), v(s.LastText)
		out[i] = s
	}
	return out
}

func trayCutLabel(s string) string {
	t, cut := approval.Truncate(approval.VisibleLine(s), trayLabelMax)
	if cut {
		t += "…"
	}
	return t
}
