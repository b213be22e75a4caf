package app

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/service"
)

// issue29Masked is issue 29's command as the real 0.18.2 and 0.19.0
// gateways send it (Hermes masked the $(curl …|sh) after GH_TOKEN=).
const (
	issue29Masked = "GH_TOKEN=*** git push --force origin feature"
	issue29Marker = "Hermes hid part of this command: the value after GH_TOKEN="
)

// TestHiddenOnDesktopSurfaces: the notification, the tray, the window's
// view and the history say what Hermes hid; neither the notification nor
// the tray offers a one-click approval.
func TestHiddenOnDesktopSurfaces(t *testing.T) {
	t.Parallel()
	r := pendingRequest("lab/srq/srq-1", issue29Masked)
	n := approvalNotification(r, t0)
	if hasAction(n, approval.ChoiceOnce) || !hasAction(n, ActionOpen) || !hasAction(n, approval.ChoiceDeny) || !strings.Contains(n.Body, issue29Marker) {
		t.Errorf("notification %+v: want the marker, Open and Deny, no Approve once", n)
	}
	ta := trayApproval(r)
	if ta.CanOnce || !strings.Contains(ta.Note, issue29Marker) {
		t.Errorf("tray item %+v: want the marker as its note and no Allow once", ta)
	}
	var view struct {
		Display approval.Display `json:"display"`
	}
	b, _ := json.Marshal(approvalView(r))
	if err := json.Unmarshal(b, &view); err != nil || view.Display.Hidden != issue29Marker || view.Display.Command != issue29Masked {
		t.Errorf("window view %+v (%v)", view.Display, err)
	}
	h := historyEntry(service.LogEntry{Entry: approval.Entry{At: t0, Key: r.Key, Gateway: "lab", Command: issue29Masked, State: approval.StateResolved, Choice: "once"}})
	if h.DisplayHidden != issue29Marker {
		t.Errorf("history entry %+v", h)
	}
	if plain := trayApproval(pendingRequest("lab/srq/srq-2", "git push --force origin feature")); !plain.CanOnce || plain.Note != "" {
		t.Errorf("a plain command lost its one-click approval: %+v", plain)
	}
}

// TestHiddenAnsweredFromTheDesktop: a notification's or the tray's "once"
// on a command Hermes partly hid only opens the window; the window's
// answer needs the confirmation and says why without it.
func TestHiddenAnsweredFromTheDesktop(t *testing.T) {
	a, p, srv, live := desktop(t)
	_, agent, _ := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: issue29Masked})
	p.waitFor(t, "pending in snapshot", func(f *fakePlatform) bool { return len(f.last.Approvals) == 1 && len(f.notified) == 1 })
	key := a.Snapshot().Approvals[0].Key
	p.mu.Lock()
	act := p.action
	p.mu.Unlock()
	act(key, approval.ChoiceOnce) // a stale or forged "once" action
	p.waitFor(t, "the sheet opened", func(f *fakePlatform) bool { return f.emits[EventOpenApproval] == 1 })
	a.TrayAnswer(key, approval.ChoiceOnce)
	p.waitFor(t, "the sheet opened again", func(f *fakePlatform) bool { return f.emits[EventOpenApproval] == 2 })
	if n := len(srv.Answers()); n != 0 {
		t.Fatalf("%d answers sent from one-click surfaces", n)
	}
	w := a.WindowAPI()
	err := w.AnswerConfirmed(key, approval.ChoiceOnce, approval.Confirmed{})
	if err == nil || !strings.Contains(err.Error(), issue29Marker) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("window answer without the confirmation: %v", err)
	}
	if err := w.Answer(key, approval.ChoiceOnce, false); !errors.Is(err, approval.ErrHidden) && (err == nil || !strings.Contains(err.Error(), issue29Marker)) {
		t.Fatalf("window answer without the confirmation: %v", err)
	}
	if err := w.AnswerConfirmed(key, approval.ChoiceOnce, approval.Confirmed{Hidden: true}); err != nil {
		t.Fatal(err)
	}
	if c := <-agent; c != "once" {
		t.Fatalf("gateway got %q", c)
	}
}
