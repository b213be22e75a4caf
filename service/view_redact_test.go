package service

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestLiveViewMasksSecretsInToolContext: a running tool's context (the
// command it runs) reaches the window's session list, the tray's Active
// runs and `herald stop`'s list through the live view; a token in it is
// masked there, as `herald watch` masks its tool lines.
func TestLiveViewMasksSecretsInToolContext(t *testing.T) {
	t.Parallel()
	const token = "sk-demo1234567890abcdef"
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer s.Close()
	s.onEvent(ev(wire.MessageStart, "s1", nil))
	s.onEvent(ev(wire.ToolStart, "s1", map[string]any{"name": "terminal", "context": "Running curl -H 'Authorization: Bearer " + token + "' https://example.invalid"}))
	v := s.View()
	if len(v.Sessions) != 1 || !strings.HasPrefix(v.Sessions[0].Tool, "terminal: Running curl -H 'Authorization: Bearer ") {
		t.Fatalf("view: %+v", v.Sessions)
	}
	if strings.Contains(v.Sessions[0].Tool, token) {
		t.Fatalf("the live view shows the token: %q", v.Sessions[0].Tool)
	}
	runs := s.ActiveRuns()
	if len(runs) != 1 || strings.Contains(runs[0].Tool, token) || strings.Contains(runs[0].Label(), token) {
		t.Fatalf("active runs show the token: %+v", runs)
	}
}
