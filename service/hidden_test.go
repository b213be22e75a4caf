package service

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestControlApproveHidden: over the control socket (herald approve), an
// approving answer to a command Hermes masked is refused without
// confirm_hidden, with the reason; with it the answer goes on (here to a
// gateway that is not connected, so it fails there instead).
func TestControlApproveHidden(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0)), Store: approval.NewMemoryStore()})
	defer s.Close()
	s.onEvent(ev(wire.ApprovalRequest, "s1", map[string]any{"command": "GH_TOKEN=*** git push --force origin feature", "choices": []string{"once", "deny"}}))
	key := ShortKey(s.Inbox().Pending()[0].Key)
	path := filepath.Join(t.TempDir(), "herald", "ctl.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.ServeControl(ctx, path); err != nil {
		t.Fatal(err)
	}
	_, err := Control(ctx, path, ControlRequest{Op: "approve", Key: key, Choice: "once"})
	if err == nil || !strings.Contains(err.Error(), "Hermes hid part of this command: the value after GH_TOKEN=") || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("approve without confirm_hidden: %v", err)
	}
	_, err = Control(ctx, path, ControlRequest{Op: "approve", Key: key, Choice: "once", ConfirmHidden: true})
	if err == nil || strings.Contains(err.Error(), "Hermes hid") || !strings.Contains(err.Error(), "not connected") {
		t.Fatalf("approve with confirm_hidden: %v", err)
	}
	if _, err := Control(ctx, path, ControlRequest{Op: "approve", Key: key, Choice: "deny"}); err == nil || strings.Contains(err.Error(), "Hermes hid") {
		t.Fatalf("deny asked for the confirmation: %v", err)
	}
}
