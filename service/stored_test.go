package service

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
)

// An API server's stored sessions are listed by name (title, else the
// start of the first message), a prompt to one is a turn on its chat
// stream named as the session is on every surface, and the control
// socket lists them for `herald sessions`.
func TestStoredSessionsNamedAndContinued(t *testing.T) {
	t.Parallel()
	api := apiservertest.NewServer(apiservertest.Options{})
	defer api.Close()
	h := newRunHarness(t)
	if _, err := h.svc.AddSource(SourceConfig{Kind: KindAPIServer, Config: source.Config{Name: "api", URL: api.URL, Secrets: map[string]string{"key": api.Key()}, Clock: clock.Real{}}}); err != nil {
		t.Fatal(err)
	}
	titled := api.AddSession("", "Release checklist", "what is left?", "two steps")
	untitled := api.AddSession("", "", "  why does\nthe build fail on arm64 when the cache is cold and the runner is new?")
	ctx := tctx(t)
	v, err := h.svc.StoredSessions(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, s := range v.Sessions {
		names[s.ID] = s.Name
	}
	if v.Gateway != "api" || names[titled] != "Release checklist" || names[untitled] != "why does the build fail on arm64 when..." {
		t.Fatalf("listing: %+v", v)
	}

	ask, err := h.svc.Ask(ctx, AskRequest{Gateway: "api", Session: titled, Text: "hello there"})
	if err != nil {
		t.Fatal(err)
	}
	if ask.StoredSession != titled || ask.NewSession || !strings.HasPrefix(ask.Session, "run_") || !strings.Contains(ask.Note, "refuses a dangerous command") {
		t.Fatalf("Ask = %+v", ask)
	}
	h.until(t, "the turn's reply", func() bool {
		for _, s := range h.svc.View().Sessions {
			if s.ID == ask.Session && !s.Running && strings.Contains(s.LastText+s.Status, "stub answer: hello there") {
				return true
			}
		}
		return false
	})
	view := h.svc.View()
	n := view.Names()
	if got := n.Of("api", ask.Session, titled, ""); got != "Release checklist" {
		t.Errorf("the turn is named %q", got)
	}
	if got := n.Of("api", untitled, "", ""); !strings.HasPrefix(got, "why does the build") {
		t.Errorf("the untitled session is named %q", got)
	}
	if len(view.Stored) != 1 || view.Stored[0].Note == "" {
		t.Errorf("the kept listing: %+v", view.Stored)
	}

	// Over the control socket (`herald sessions`).
	path := filepath.Join(t.TempDir(), "herald", "ctl.sock")
	if err := h.svc.ServeControl(ctx, path); err != nil {
		t.Fatal(err)
	}
	resp, err := Control(ctx, path, ControlRequest{Op: "sessions"})
	if err != nil || resp.Stored == nil || len(resp.Stored.Sessions) != 2 {
		t.Fatalf("control: %+v %v", resp, err)
	}
	if _, err := Control(ctx, path, ControlRequest{Op: "sessions", Gateway: "nope"}); err == nil || !strings.Contains(err.Error(), `no gateway named "nope"`) {
		t.Errorf("unknown gateway: %v", err)
	}
	// The turn's events went to the view under its run id, with the
	// session as its stored id.
	for _, s := range view.Sessions {
		if s.ID == ask.Session && s.StoredID != titled {
			t.Errorf("turn view: %+v", s)
		}
	}
}
