package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/herald-desktop/herald/app"
	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/service"
)

// TestWatchBesideTheDesktopApp: the desktop app runs (its App and service,
// as the always-on process runs them, without Wails) and `herald watch`
// with no gateway of its own attaches to it instead of stopping with
// "already running": it shows the gateway's state and the approval
// waiting when it attached, then the live events, an approval and a
// question as they come, and answers both from its keyboard; the gateway
// takes the answers, and the app records them as the terminal's. It names
// the session by its one name, as the app's every surface does, never by
// its id. When the app quits, watch says so and ends.
func TestWatchBesideTheDesktopApp(t *testing.T) {
	keyring.MockInit() // process-wide: this test is not parallel
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	live, stored := srv.CreateSession()
	const name = "Fix the flaky build"
	if err := srv.SetTitle(live, name); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	settings, err := app.NewSettingsStore(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	st := app.DefaultSettings()
	st.Gateways = []app.GatewaySettings{{Name: "lab", URL: srv.URL, Kind: "ws", Auth: "token", Sessions: []string{stored}}}
	if err := settings.Save(st); err != nil {
		t.Fatal(err)
	}
	secrets := app.NewSecrets(app.OSKeyring{})
	if err := secrets.Set("lab", "token", srv.Token()); err != nil {
		t.Fatal(err)
	}
	ctl := filepath.Join(dir, "run", "ctl.sock")
	a := app.New(app.Deps{Version: "test", Settings: settings, Secrets: secrets, Store: approval.NewMemoryStore(),
		Autostart: app.Autostart{Dir: t.TempDir()}, Control: ctl})
	closed := false
	defer func() {
		if !closed {
			a.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	arrivals := a.Service().Subscribe(service.WatchApprovals, 0)
	defer arrivals.Close()
	if err := a.StartHeadless(&app.HeadlessPlatform{}); err != nil {
		t.Fatal(err)
	}
	waitServer(t, srv, "the app follows the session", func() bool {
		for _, s := range srv.Sessions() {
			if s.ID == live && s.Attached {
				return true
			}
		}
		return false
	})
	// Waiting before watch attaches: it comes in the running Herald's View.
	_, before, err := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf ./before"})
	if err != nil {
		t.Fatal(err)
	}
	for n, err := arrivals.Next(ctx); ; n, err = arrivals.Next(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if n.Approval.Kind == approval.ChangeArrived {
			break
		}
	}

	w := startWatch(t, "--control", ctl)
	w.waitLine(t, "the app's gateway, connected", func(m map[string]any) bool {
		return m["type"] == "status" && field(m, "status", "gateway") == "lab" && field(m, "status", "state") == "connected"
	})
	first := w.waitLine(t, "the approval that waited", func(m map[string]any) bool {
		return m["type"] == "approval" && m["change"] == "arrived"
	})
	if got := field(first, "request", "command"); got != "rm -rf ./before" {
		t.Fatalf("the waiting approval showed as %v", got)
	}
	if got := field(first, "display", "session"); got != name {
		t.Errorf("the waiting approval's session showed as %v, want its name %q", got, name)
	}

	// Live: an event, an approval and a question, as they come.
	if err := srv.Emit(live, "tool.start", map[string]any{"name": "terminal", "context": "Running make"}); err != nil {
		t.Fatal(err)
	}
	ev := w.waitLine(t, "the live tool event", func(m map[string]any) bool {
		return m["type"] == "event" && field(m, "event", "kind") == "tool.start"
	})
	if got, want := ev["name"], a.Service().SessionName("lab", live, stored); got != name || want != name {
		t.Errorf("the live event's session is named %v in the attached watch, %q in the app; want %q in both", got, want, name)
	}
	_, after, err := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "git push --force"})
	if err != nil {
		t.Fatal(err)
	}
	second := w.waitLine(t, "the live approval", func(m map[string]any) bool {
		return m["type"] == "approval" && m["change"] == "arrived" && field(m, "request", "command") == "git push --force"
	})
	id := second["id"].(string)
	_, asked, err := srv.RequestPrompt(live, hermestest.PromptSpec{Kind: hermestest.PromptClarify, Question: "Deploy now?", Choices: []string{"yes", "later"}})
	if err != nil {
		t.Fatal(err)
	}
	q := w.waitLine(t, "the live question", func(m map[string]any) bool {
		return m["type"] == "approval" && m["change"] == "arrived" && field(m, "request", "kind") == "clarify"
	})

	// Answered from watch's keyboard: two approvals wait, so with its id.
	io.WriteString(w.stdin, "d "+id+"\n")
	w.waitLine(t, "the answer confirmed", func(m map[string]any) bool {
		text, _ := m["text"].(string)
		return m["type"] == "message" && strings.Contains(text, id+" deny, confirmed by the gateway, for: git push --force")
	})
	if c := <-after; c != "deny" {
		t.Fatalf("the gateway took %q for git push --force", c)
	}
	io.WriteString(w.stdin, fmt.Sprintf("2 %s\n", q["id"]))
	if r := <-asked; r.Value != "later" {
		t.Fatalf("the question was answered %+v", r)
	}
	w.waitLine(t, "the question resolved", func(m map[string]any) bool {
		return m["type"] == "approval" && m["id"] == q["id"] && field(m, "request", "state") == "resolved"
	})
	var recorded []string
	for _, r := range a.Service().View().Recent {
		recorded = append(recorded, r.Command+r.Question+" "+r.Outcome.Choice+" via "+r.Outcome.Surface)
	}
	if got := strings.Join(recorded, "; "); !strings.Contains(got, "git push --force deny via terminal") || !strings.Contains(got, "Deploy now? later via terminal") {
		t.Fatalf("the app recorded %q", got)
	}
	select {
	case c := <-before:
		t.Fatalf("the approval nobody answered was answered %q", c)
	default:
	}

	// The app quits: watch says so and ends.
	a.Close()
	closed = true
	if err := w.cmd.Wait(); err == nil || w.cmd.ProcessState.ExitCode() != 1 || !strings.Contains(w.stderr.String(), "the running Herald stopped") {
		t.Fatalf("watch after the app quit: %v, stderr %q", err, w.stderr)
	}
	if out := w.output(); strings.Contains(out, srv.Token()) {
		t.Fatal("watch printed the gateway token")
	}
}
