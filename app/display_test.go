package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/spooftest"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

var t0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

func pendingRequest(key, cmd string) approval.Request {
	return approval.Request{
		Key: key, Gateway: "lab", Session: "s1", Command: cmd, Description: "why\x1b[2K",
		Choices: []string{"once", "session", "always", "deny"}, ReceivedAt: t0, ExpiresAt: t0.Add(5 * time.Minute),
		Dialect: approval.DialectServerRequest, State: approval.StatePending,
	}
}

var markupEntity = regexp.MustCompile(`&(amp|lt|gt|quot|#39);`)

func hasAction(n Notification, id string) bool {
	return slices.ContainsFunc(n.Actions, func(a [2]string) bool { return a[0] == id })
}

// TestSpoofingDesktop: every hostile command on every desktop surface
// (notification title and body, tray label, the window's snapshot
// fields, the history view) holds no raw control or invisible character
// and shows the dangerous part; where a one-line surface cannot show all
// of it exactly, it says so and offers no one-click approval.
func TestSpoofingDesktop(t *testing.T) {
	t.Parallel()
	for i, c := range spooftest.Cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			r := pendingRequest(fmt.Sprintf("lab/srq/srq-%d", i), c.Command)

			// Notification.
			n := approvalNotification(r, t0)
			if _, ok := spooftest.Raw(n.Title, false); ok {
				t.Errorf("notification title %q holds a raw character", n.Title)
			}
			cmdLine, _, _ := strings.Cut(n.Body, "\n")
			if _, ok := spooftest.Raw(n.Body, true); ok {
				t.Errorf("notification body %q holds a raw character", n.Body)
			}
			if c.Long {
				if !strings.Contains(n.Body, truncatedNote) || hasAction(n, approval.ChoiceOnce) || !hasAction(n, ActionOpen) {
					t.Errorf("long command: notification %+v must say it was truncated, offer Open and no one-click approval", n)
				}
			} else if err := spooftest.Check(cmdLine, c, false); err != nil {
				t.Errorf("notification body %v: %q", err, n.Body)
			}
			if hasAction(n, approval.ChoiceOnce) && (approval.HasMarkers(c.Command) || strings.Contains(c.Command, "\n")) {
				t.Errorf("notification offers one-click approval for a command it shows with markers: %+v", n)
			}
			if c.Hidden != "" && (hasAction(n, approval.ChoiceOnce) || !strings.Contains(n.Body, c.Hidden)) {
				t.Errorf("notification for a command Hermes partly hid must say %q and offer no one-click approval: %+v", c.Hidden, n)
			}
			// As the notification server gets it (Pango markup).
			if markup := surface.Pango(n.Body); strings.ContainsAny(markupEntity.ReplaceAllString(markup, ""), "<>&") || html.UnescapeString(markup) != n.Body {
				t.Errorf("notification body as markup %q does not read back as %q", markup, n.Body)
			}

			// Tray.
			ta := trayApproval(r)
			if _, ok := spooftest.Raw(ta.Label, false); ok {
				t.Errorf("tray label %q holds a raw character", ta.Label)
			}
			if err := spooftest.Check(ta.Label, c, false); err != nil {
				if ta.CanOnce || ta.Note == "" {
					t.Errorf("tray label %v, yet it offers one-click approval or no note: %+v", err, ta)
				}
			}
			if ta.CanOnce && (approval.HasMarkers(c.Command) || strings.Contains(c.Command, "\n")) {
				t.Errorf("tray offers one-click approval for a command it shows with markers: %+v", ta)
			}
			if c.Hidden != "" && (ta.CanOnce || !strings.Contains(ta.Note, c.Hidden)) {
				t.Errorf("tray item for a command Hermes partly hid must say %q and offer no one-click approval: %+v", c.Hidden, ta)
			}
			// As dbusmenu gets it: "_" is a mnemonic unless doubled.
			label := surface.DBusMenu(ta.Label)
			if strings.Contains(strings.ReplaceAll(label, "__", ""), "_") || strings.ReplaceAll(label, "__", "_") != ta.Label {
				t.Errorf("tray label as dbusmenu %q does not read back as %q", label, ta.Label)
			}
			if ta.CanOnce {
				if err := spooftest.Check(strings.ReplaceAll(label, "__", "_"), c, false); err != nil {
					t.Errorf("tray label as dbusmenu %v, yet it offers one-click approval: %q", err, label)
				}
			}

			// Window: what the frontend renders, after the JSON round trip.
			var view struct {
				DisplayCommand string           `json:"display_command"`
				Display        approval.Display `json:"display"`
			}
			b, _ := json.Marshal(approvalView(r))
			if err := json.Unmarshal(b, &view); err != nil {
				t.Fatal(err)
			}
			for surface, text := range map[string]string{"display_command": view.DisplayCommand, "display.command": view.Display.Command, "display.masked": view.Display.Masked} {
				if err := spooftest.Check(text, c, true); err != nil {
					t.Errorf("window %s %v:\n%s", surface, err, text)
				}
			}
			if _, ok := spooftest.Raw(view.Display.Description+view.Display.Gateway+view.Display.Session+view.Display.FirstLine+view.Display.Hidden, true); ok {
				t.Errorf("window display fields hold a raw character: %+v", view.Display)
			}
			if view.Display.Hidden != c.Hidden {
				t.Errorf("window display.hidden = %q, want %q", view.Display.Hidden, c.Hidden)
			}

			// History.
			var h struct {
				DisplayCommand string `json:"display_command"`
				DisplayHidden  string `json:"display_hidden"`
			}
			b, _ = json.Marshal(historyEntry(service.LogEntry{Entry: approval.Entry{At: t0, Key: r.Key, Gateway: "lab", Command: r.Command, Kind: approval.ChangeArrived}}))
			if err := json.Unmarshal(b, &h); err != nil {
				t.Fatal(err)
			}
			if err := spooftest.Check(h.DisplayCommand, c, true); err != nil {
				t.Errorf("history %v:\n%s", err, h.DisplayCommand)
			}
			if h.DisplayHidden != c.Hidden {
				t.Errorf("history display_hidden = %q, want %q", h.DisplayHidden, c.Hidden)
			}
		})
	}
}

func TestNotificationText(t *testing.T) {
	t.Parallel()
	t.Run("one click only for a short plain command", func(t *testing.T) {
		n := approvalNotification(pendingRequest("k", "git push --force"), t0)
		if !hasAction(n, approval.ChoiceOnce) || !strings.HasPrefix(n.Body, "git push --force\n") {
			t.Fatalf("%+v", n)
		}
		r := pendingRequest("k", "git push --force")
		r.Choices = []string{"deny"}
		if n := approvalNotification(r, t0); hasAction(n, approval.ChoiceOnce) || !hasAction(n, approval.ChoiceDeny) {
			t.Fatalf("offers what the gateway does not: %+v", n)
		}
	})
	t.Run("masks secrets, never code", func(t *testing.T) {
		n := approvalNotification(pendingRequest("k", "GITHUB_TOKEN=ghp_abcdefghij0123456789 git push"), t0)
		if strings.Contains(n.Body, "ghp_abcdefghij") || !strings.Contains(n.Body, "GITHUB_TOKEN=•••• git push") {
			t.Fatalf("%q", n.Body)
		}
	})
	t.Run("utf-8 safe truncation", func(t *testing.T) {
		cmd := "echo " + strings.Repeat("日本語", 200)
		for cut := 0; cut < 3; cut++ {
			n := approvalNotification(pendingRequest("k", cmd[:len(cmd)-cut]), t0)
			if !utf8.ValidString(n.Body) || !strings.Contains(n.Body, "…\n"+truncatedNote) {
				t.Fatalf("body %q", n.Body)
			}
		}
		long := strings.Repeat("ü", 200)
		if got := runText(long); !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
			t.Fatalf("run text %q", got)
		}
	})
	t.Run("countdown is the request's own timeout", func(t *testing.T) {
		for _, d := range []time.Duration{90 * time.Second, 10 * time.Minute} {
			r := pendingRequest("k", "ls")
			r.ExpiresAt = t0.Add(d)
			if n := approvalNotification(r, t0); !strings.Contains(n.Body, fmt.Sprintf("(in %s)", d)) {
				t.Fatalf("timeout %s: %q", d, n.Body)
			}
		}
	})
	t.Run("a prompt never offers one click", func(t *testing.T) {
		r := pendingRequest("k", "")
		r.Kind, r.Question, r.Choices = approval.KindClarify, "Pick\x1b[2K one", []string{"once", "deny"}
		n := approvalNotification(r, t0)
		if hasAction(n, approval.ChoiceOnce) || !hasAction(n, ActionOpen) || !strings.Contains(n.Body, "Pick␛[2K one") || oneClick(r, trayLabelMax) {
			t.Fatalf("%+v", n)
		}
	})
}

// failingPlatform fails every notification call.
type failingPlatform struct{ *fakePlatform }

func (failingPlatform) Notify(Notification) error { return errors.New("no notification server") }
func (failingPlatform) Withdraw(string) error     { return errors.New("no notification server") }

func TestNotifierWithdrawsOnAnswerAndLogsErrors(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	n := newNotifier(clock.NewFake(t0), slog.New(slog.NewTextHandler(&logs, nil)))
	p := newFakePlatform()
	n.attach(p)
	r := pendingRequest("k", "ls")
	n.approval(approval.Change{Kind: approval.ChangeArrived, Request: r})
	r.State = approval.StateAnswering // an answer from any surface is on its way
	n.approval(approval.Change{Kind: approval.ChangeUpdated, Request: r})
	if len(p.notified) != 1 || !slices.Equal(p.withdrawn, []string{"k"}) {
		t.Fatalf("notified %d, withdrawn %v", len(p.notified), p.withdrawn)
	}
	r.State = approval.StateResolved
	n.approval(approval.Change{Kind: approval.ChangeUpdated, Request: r})
	if len(p.withdrawn) != 1 {
		t.Fatalf("withdrawn twice: %v", p.withdrawn)
	}

	n.attach(failingPlatform{newFakePlatform()})
	r2 := pendingRequest("k2", "ls")
	n.approval(approval.Change{Kind: approval.ChangeArrived, Request: r2})
	r2.State = approval.StateAnswering
	n.approval(approval.Change{Kind: approval.ChangeUpdated, Request: r2})
	if s := logs.String(); !strings.Contains(s, "could not be shown") || !strings.Contains(s, "could not be withdrawn") || !strings.Contains(s, "no notification server") {
		t.Fatalf("logs %q", s)
	}
}

// TestNotificationActionsOnTheDesktop: dismissing (or clicking the body,
// which Wails cannot tell apart) does not raise the window, "Open…" does;
// "Approve once" on a notification that could not show the whole command
// opens it instead of answering; an answer from the window withdraws the
// notification.
func TestNotificationActionsOnTheDesktop(t *testing.T) {
	a, p, srv, live := desktop(t)
	long := strings.Repeat("echo padding; ", 40) + "rm -rf ~/important"
	_, agent, _ := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: long})
	var n Notification
	p.waitFor(t, "a notification", func(f *fakePlatform) bool {
		if len(f.notified) > 0 {
			n = f.notified[0]
		}
		return len(f.notified) > 0 && len(f.last.Approvals) == 1
	})
	if hasAction(n, approval.ChoiceOnce) {
		t.Fatalf("one-click approval offered for a truncated command: %+v", n)
	}
	a.onNotificationAction(n.ID, ActionClickedOrDismissed) // Wails: a click or a dismissal
	p.mu.Lock()
	shown := p.shown
	p.mu.Unlock()
	if shown != 0 {
		t.Fatal("a new request or dismissing its notification raised the window")
	}
	a.onNotificationAction(n.ID, approval.ChoiceOnce) // e.g. a stale or forged action
	p.mu.Lock()
	shown, opened := p.shown, p.emits[EventOpenApproval]
	p.mu.Unlock()
	if shown != 1 || opened != 1 || len(srv.Answers()) != 0 {
		t.Fatalf("once on a truncated command: shown %d, opened %d, answers %v", shown, opened, srv.Answers())
	}
	if m := trayModel(a.Snapshot()); len(m.Pending) != 1 || m.Pending[0].CanOnce || m.Pending[0].Note != truncatedNote {
		t.Fatalf("tray %+v", m.Pending)
	}
	a.TrayAnswer(n.ID, approval.ChoiceOnce)
	if len(srv.Answers()) != 0 {
		t.Fatal("the tray approved a command it could not show")
	}
	if err := a.Answer(n.ID, approval.ChoiceDeny, false); err != nil { // from the window
		t.Fatal(err)
	}
	if c := <-agent; c != "deny" {
		t.Fatalf("gateway got %q", c)
	}
	p.waitFor(t, "withdrawn", func(f *fakePlatform) bool { return slices.Contains(f.withdrawn, n.ID) })

	// An answer from another surface (the terminal) withdraws it too.
	_, agent2, _ := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "ls"})
	var key string
	p.waitFor(t, "second notification", func(f *fakePlatform) bool {
		if len(f.notified) == 2 {
			key = f.notified[1].ID
		}
		return key != ""
	})
	if err := a.Service().Answer(context.Background(), key, approval.ChoiceOnce, "terminal", false); err != nil {
		t.Fatal(err)
	}
	<-agent2
	p.waitFor(t, "withdrawn after a terminal answer", func(f *fakePlatform) bool { return slices.Contains(f.withdrawn, key) })

	// A real click on the body (the freedesktop default action, which the
	// D-Bus notifier tells apart from a dismissal) opens the request.
	p.mu.Lock()
	before := p.shown
	p.mu.Unlock()
	a.onNotificationAction(key, ActionDefault)
	p.mu.Lock()
	shown = p.shown
	p.mu.Unlock()
	if shown != before+1 {
		t.Fatalf("a click on the body did not raise the window (shown %d, before %d)", shown, before)
	}
}

// The D-Bus notifier offers Open itself (its default action), so the
// headless platform does not add a second one.
func TestHeadlessNotificationHasOneOpen(t *testing.T) {
	t.Parallel()
	notes := &fakeNotes{}
	p := &HeadlessPlatform{Notes: notes, Window: &fakeLauncher{}}
	p.Notify(approvalNotification(pendingRequest("k", "ls"), t0))
	if len(notes.shown) != 1 || !notes.shown[0].Urgent || slices.ContainsFunc(notes.shown[0].Actions, func(a [2]string) bool { return a[0] == ActionOpen }) ||
		!slices.ContainsFunc(notes.shown[0].Actions, func(a [2]string) bool { return a[0] == approval.ChoiceOnce }) {
		t.Fatalf("%+v", notes.shown)
	}
}

func TestDisplaySessions(t *testing.T) {
	t.Parallel()
	in := []service.SessionView{{Gateway: "lab", ID: "s1", Title: "t\u202e", Tool: "terminal: rm -rf ~/x\x1b[2K\rls", Status: "ok\x00", LastText: "a\nb"}}
	got := displaySessions(in, nil)
	if got[0].ID != "s1" || got[0].Tool != "terminal: rm -rf ~/x␛[2K⟦CR⟧ls" || got[0].Title != "t⟦U+202E⟧" || got[0].Status != "ok⟦NUL⟧" || got[0].LastText != "a⏎b" {
		t.Fatalf("%+v", got[0])
	}
	if in[0].Title != "t\u202e" {
		t.Fatal("changed the service's view")
	}
}

// A session whose events carried no title is named as the gateway lists it
// (the Sessions panel's name), never by its stored or live id.
func TestDisplaySessionsNameFromListing(t *testing.T) {
	t.Parallel()
	live := []service.GatewaySessions{{Gateway: "lab", Sessions: []service.LiveSessionView{
		{LiveSession: source.LiveSession{ID: "a1b2c3d4", Key: "20261203_173300_bd19f2", Title: "Nightly\u202e backup"}},
		{LiveSession: source.LiveSession{ID: "e5f6a7b8", Key: "20261203_173301_aaaaaa"}},
	}}}
	in := []service.SessionView{
		{Gateway: "lab", ID: "a1b2c3d4", StoredID: "20261203_173300_bd19f2"},
		{Gateway: "lab", ID: "e5f6a7b8", StoredID: "20261203_173301_aaaaaa"},
		{Gateway: "lab", ID: "f0f0f0f0", Title: "own title"},
		{Gateway: "other", ID: "a1b2c3d4"},
	}
	got := displaySessions(in, service.View{Live: live}.Names())
	want := []string{"Nightly⟦U+202E⟧ backup", "Untitled session", "own title", "Untitled session"}
	if got := displaySessions([]service.SessionView{{ID: "s", Title: "t\u202e"}}, nil)[0].Name; got != "t⟦U+202E⟧" {
		t.Errorf("a title shown twice as VisibleLine: %q", got)
	}
	for i, w := range want {
		if got[i].Name != w {
			t.Errorf("session %d named %q, want %q", i, got[i].Name, w)
		}
	}
	if panel := clipLine(live[0].Sessions[0].DisplayName(), liveTitleMax); got[0].Name != panel {
		t.Errorf("card %q and panel %q disagree", got[0].Name, panel)
	}
}
