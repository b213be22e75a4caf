package app

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
)

// TestTrayIsNeverGreenWhileASessionRunsUnseen: a session running or
// waiting in another client, whose events Herald does not receive, keeps
// the tray off green and off "No approvals pending"; the tooltip and a
// menu item name it, with Follow.
func TestTrayIsNeverGreenWhileASessionRunsUnseen(t *testing.T) {
	t.Parallel()
	s := Snapshot{Gateways: []GatewayView{{Name: "lab", State: "connected"}}}
	if m := trayModel(s); m.State != TrayConnected || len(m.Unseen) != 0 {
		t.Fatalf("idle: %+v", m)
	}
	for _, l := range []LiveSessionView{
		{ID: "a1", Name: "Fix the build", Status: "working"},
		{ID: "a2", Name: "Deploy", Status: "waiting", Followed: true, Elsewhere: true},
	} {
		s.Live = []LiveGatewayView{{Gateway: "lab", Sessions: []LiveSessionView{l}}}
		m := trayModel(s)
		// Its own state: Herald cannot see something (not "waiting for
		// you": nothing here can answer it).
		if m.State != TrayBlind || len(m.Unseen) != 1 || !strings.Contains(m.Tooltip, "lab · "+l.Name) || !strings.Contains(m.Tooltip, "cannot reach Herald") || !strings.Contains(m.Tooltip, "or none") {
			t.Fatalf("%s: %+v", l.Name, m)
		}
		if !strings.HasPrefix(m.Unseen[0].Label, "lab · "+l.Name+": ") || m.Unseen[0].ID != l.ID {
			t.Fatalf("menu item %+v", m.Unseen[0])
		}
	}
	// Followed and receiving: nothing to say.
	s.Live = []LiveGatewayView{{Gateway: "lab", Sessions: []LiveSessionView{{ID: "a3", Name: "x", Status: "working", Followed: true}}}}
	if m := trayModel(s); m.State != TrayConnected || len(m.Unseen) != 0 {
		t.Fatalf("followed: %+v", m)
	}
}

// TestUnseenApprovalIsTitledForWhatItIs: an approval whose command Herald
// never saw is "GW · SESSION: may be waiting for approval" on the
// notification, the tray and the window, with the session's one name, no
// command, deny only, expiry unknown.
func TestUnseenApprovalIsTitledForWhatItIs(t *testing.T) {
	t.Parallel()
	r := pendingRequest("lab/u", "")
	r.Kind, r.Choices, r.StoredSession = approval.KindApproval, []string{"deny"}, "20261203_101500_c98c38"
	n := approvalNotification(r, t0)
	if n.Title != "lab · Untitled session: may be waiting for approval" || strings.Contains(n.Title, "Approve") || !strings.Contains(n.Body, "unknown") || hasAction(n, approval.ChoiceOnce) || !hasAction(n, approval.ChoiceDeny) {
		t.Fatalf("notification %+v", n)
	}
	v := approvalViewIn(r, "Fix the build")
	want := "lab · Fix the build: may be waiting for approval"
	if !v.Display.Unseen || v.Display.Title != want || v.Display.ExpiryKnown || v.Display.Session != "Fix the build" {
		t.Fatalf("window %+v", v.Display)
	}
	s := Snapshot{Gateways: []GatewayView{{Name: "lab", State: "connected"}}, Approvals: []ApprovalView{v}}
	if m := trayModel(s); len(m.Pending) != 1 || !strings.HasPrefix(want, strings.TrimSuffix(m.Pending[0].Label, "…")) || !strings.HasPrefix(m.Pending[0].Label, "lab · Fix the build: may be") || m.Pending[0].CanOnce {
		t.Fatalf("tray %+v", m.Pending)
	}
	// A seen one keeps its command.
	if d := approvalViewIn(pendingRequest("lab/k", "ls"), "x").Display; d.Unseen || d.Title != "" || !d.ExpiryKnown {
		t.Fatalf("seen %+v", d)
	}
}

func TestSessionNotificationIDRoundTrips(t *testing.T) {
	t.Parallel()
	gw, live, ok := parseSessionID(sessionNotificationID("lab/west", "a1b2"))
	if !ok || gw != "lab/west" || live != "a1b2" {
		t.Fatalf("%q %q %v", gw, live, ok)
	}
	if _, _, ok := parseSessionID("lab/srq/srq-1"); ok {
		t.Fatal("an approval key read as a session")
	}
}

// TestApprovalOfSomethingElseShowsWhatItAsks: an approval that carries no
// command but fields (a sandbox's folder request) is titled for what it
// is on the notification, the tray and the window, shows its fields made
// safe (masked on the notification), and offers only deny.
func TestApprovalOfSomethingElseShowsWhatItAsks(t *testing.T) {
	t.Parallel()
	r := pendingRequest("lab/f", "")
	r.Kind, r.Choices = approval.KindApproval, []string{"deny"}
	r.Fields = []approval.Field{{Name: "kind", Value: "folder"}, {Name: "path", Value: "/home/ana\x1b[2J"}, {Name: "token", Value: "API_KEY=sk-abcdef0123456789abcdef"}}
	n := approvalNotification(r, t0)
	if !strings.Contains(n.Title, "asks to approve something other than a command") || !strings.Contains(n.Body, "kind: folder") ||
		strings.ContainsRune(n.Body, '\x1b') || strings.Contains(n.Body, "sk-abcdef0123456789abcdef") || !strings.Contains(n.Body, "Only deny") ||
		strings.Contains(n.Body, "Expires: unknown") || hasAction(n, approval.ChoiceOnce) {
		t.Fatalf("notification %+v", n)
	}
	v := approvalViewIn(r, "Sandbox")
	if !v.Display.Unseen || !v.Display.ExpiryKnown || len(v.Display.Fields) != 3 || strings.ContainsRune(v.Display.Fields[1].Value, '\x1b') ||
		v.Display.Title != "lab · Sandbox: asks to approve something other than a command" {
		t.Fatalf("window %+v", v.Display)
	}
	s := Snapshot{Gateways: []GatewayView{{Name: "lab", State: "connected"}}, Approvals: []ApprovalView{v}}
	if m := trayModel(s); len(m.Pending) != 1 || m.Pending[0].CanOnce {
		t.Fatalf("tray %+v", m.Pending)
	}
}
