package service

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestControlLongLists: `herald pending` and `herald log` with 50 open
// 60 KB commands. Each command's characters escape to six bytes in JSON,
// so one response line would be ~18 MB, past what a line may hold; the
// lists come in chunks and arrive whole, in order.
func TestControlLongLists(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0)), Store: approval.NewMemoryStore()})
	defer s.Close()
	const n = 50
	cmds := make([]string, n)
	for i := range cmds {
		body := strings.Repeat("<", 60<<10)
		cmds[i] = fmt.Sprintf("echo %02d %s", i, body[:60<<10-8])
		s.onEvent(ev(wire.ApprovalServerRequest, "s1", map[string]any{"session_id": "s1", "command": cmds[i], "choices": []string{"once", "deny"}, "request_id": fmt.Sprint("q", i)}))
	}
	path := filepath.Join(t.TempDir(), "herald", "ctl.sock")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.ServeControl(ctx, path); err != nil {
		t.Fatal(err)
	}
	resp, err := Control(ctx, path, ControlRequest{Op: "pending"})
	if err != nil {
		t.Fatalf("pending: %v", err)
	}
	if len(resp.Pending) != n {
		t.Fatalf("%d pending, want %d", len(resp.Pending), n)
	}
	for i, r := range resp.Pending {
		if r.Command != cmds[i] {
			t.Fatalf("pending %d: %d bytes %.20q, want command %d whole", i, len(r.Command), r.Command, i)
		}
	}
	resp, err = Control(ctx, path, ControlRequest{Op: "log"})
	if err != nil {
		t.Fatalf("log: %v", err)
	}
	got := 0
	for _, e := range resp.Log {
		if e.Kind == approval.ChangeArrived {
			if e.Command != cmds[got] {
				t.Fatalf("log entry %d is not command %d whole", got, got)
			}
			got++
		}
	}
	if got != n {
		t.Fatalf("%d arrivals in the log, want %d", got, n)
	}
}
