package gateway

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// TestUnreadableFramesNotDropped: a frame encoding/json refuses (nested
// past 10,000 levels, a seq out of range) is never dropped silently: an
// approval in it arrives deny-only (no command, a description saying
// why, its id and session where recoverable); another frame of a known
// session marks the session as possibly missing events.
func TestUnreadableFramesNotDropped(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	tests := []struct {
		name    string
		frame   string
		kind    string
		session string
		id      string
		why     string
	}{
		{"server request nested deep", `{"jsonrpc":"2.0","id":"srq-7","method":"approval","params":{"session_id":"s1","command":"rm -rf ./a","x":` + deep + `}}`,
			wire.ApprovalServerRequest, "s1", "srq-7", "nested deeper than the 10,000 levels"},
		{"event approval, seq out of range", `{"jsonrpc":"2.0","method":"event","params":{"type":"approval.request","session_id":"s2","seq":18446744073709551616,"payload":{"command":"rm -rf ./b"}}}`,
			wire.ApprovalRequest, "s2", "", "sequence number (seq) is out of range"},
		{"event approval nested deep", `{"jsonrpc":"2.0","method":"event","params":{"type":"approval.request","seq":3,"payload":{"session_id":"s3","command":"ls","x":` + deep + `}}}`,
			wire.ApprovalRequest, "s3", "", "nested deeper"},
		{"delta, seq out of range", `{"jsonrpc":"2.0","method":"event","params":{"type":"message.delta","session_id":"s4","seq":1e30,"payload":{"text":"hi"}}}`,
			wire.Resync, "s4", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(Config{URL: "ws://127.0.0.1:1", Name: "gw"})
			if err != nil {
				t.Fatal(err)
			}
			ready := true
			c.handleRaw(nil, []byte(tt.frame), &ready, nil)
			c.out.Close()
			ev, ok := c.out.Pop()
			if !ok {
				t.Fatal("the frame was dropped")
			}
			if ev.Kind != tt.kind || ev.Session != tt.session || ev.RequestID != tt.id || ev.Seq != 0 {
				t.Fatalf("event %s session %q id %q seq %d, want %s %q %q 0", ev.Kind, ev.Session, ev.RequestID, ev.Seq, tt.kind, tt.session, tt.id)
			}
			if tt.kind == wire.Resync {
				if p, ok := ev.Data.(*wire.ResyncPayload); !ok || p.Reason != "unreadable-frame" {
					t.Fatalf("resync %+v", ev.Data)
				}
			} else {
				a, ok := ev.Approval()
				if !ok || a.Command != "" || !strings.Contains(a.Description, tt.why) || !strings.Contains(a.Description, "only deny") {
					t.Fatalf("approval %+v", ev.Data)
				}
				t.Logf("user sees: %s", a.Description)
			}
			if n := c.Status().InvalidFrames; n != 1 {
				t.Fatalf("InvalidFrames %d", n)
			}
		})
	}
}
