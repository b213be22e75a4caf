package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestSalvage: frames encoding/json refuses (nested past its 10,000
// levels, a seq past uint64) still name their method, id, type and
// session.
func TestSalvage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		frame string
		want  Salvaged
		appr  bool
	}{
		{"server request nested deep", `{"jsonrpc":"2.0","id":"srq-7","method":"approval","params":{"session_id":"s1","command":"rm -rf ./a","extra":` + deep(20000) + `}}`,
			Salvaged{Method: "approval", ID: json.RawMessage(`"srq-7"`), Session: "s1"}, true},
		{"numeric id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"approval","params":{"session_id":"s1","x":` + deep(10001) + `}}`,
			Salvaged{Method: "approval", ID: json.RawMessage(`123456789012345678901234567890`), Session: "s1"}, true},
		{"event with seq out of range", `{"jsonrpc":"2.0","method":"event","params":{"type":"approval.request","session_id":"s2","seq":18446744073709551616,"payload":{"command":"ls","request_id":"q1"}}}`,
			Salvaged{Method: "event", Type: "approval.request", Session: "s2", RequestID: "q1"}, true},
		{"session in payload only", `{"jsonrpc":"2.0","method":"event","params":{"payload":{"session_id":"s3","deep":` + deep(12000) + `},"type":"approval.request"}}`,
			Salvaged{Method: "event", Type: "approval.request", Session: "s3"}, true},
		{"cut off after the method", `{"jsonrpc":"2.0","method":"event","params":{"type":"message.delta","session_id":"s4","payload":{"text":"x`,
			Salvaged{Method: "event", Type: "message.delta", Session: "s4"}, false},
		{"a delta", `{"jsonrpc":"2.0","method":"event","params":{"type":"message.delta","session_id":"s5","seq":1e999}}`,
			Salvaged{Method: "event", Type: "message.delta", Session: "s5"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := DecodeFrame([]byte(tt.frame)); err == nil && !strings.Contains(tt.name, "seq") && !strings.Contains(tt.name, "delta") {
				t.Fatalf("encoding/json read the frame: the test does not test salvage")
			}
			got, ok := Salvage([]byte(tt.frame))
			if !ok || got.Method != tt.want.Method || string(got.ID) != string(tt.want.ID) || got.Type != tt.want.Type || got.Session != tt.want.Session || got.RequestID != tt.want.RequestID {
				t.Fatalf("Salvage = %+v %v, want %+v", got, ok, tt.want)
			}
			if got.IsApproval() != tt.appr {
				t.Fatalf("IsApproval = %v", got.IsApproval())
			}
		})
	}
	for _, bad := range []string{``, `[1]`, `"x"`, `{"jsonrpc":"2.0"}`, `{`} {
		if s, ok := Salvage([]byte(bad)); ok {
			t.Errorf("Salvage(%q) = %+v, want nothing", bad, s)
		}
	}
}
