package gateway

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestApprovalRespondReplies: approval.respond's reply is read leniently
// where Hermes is known to differ (0.21.0 answered {"resolved": true}, a
// bool, by third-party ledgers: see hermestest/PROTOCOL.md), and any
// other reply that Herald cannot read, once the answer was written, is an
// unknown outcome (the gateway took the answer), never "not sent, still
// pending, try again".
func TestApprovalRespondReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		asBool   bool
		reply    string // Faults.RespondReply
		resolved int
		unknown  bool
	}{
		{"a count", false, "", 1, false},
		{"a bool (0.21.0)", true, "", 1, false},
		{"a string", false, `{"resolved": "yes"}`, 0, true},
		{"a fraction", false, `{"resolved": 1.5}`, 0, true},
		{"no resolved", false, `{"ok": true}`, 0, true},
		{"null", false, `{"resolved": null}`, 0, true},
		{"not an object", false, `[1]`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy, ResolvedAsBool: tt.asBool})
			defer srv.Close()
			if tt.reply != "" {
				srv.SetFaults(hermestest.Faults{RespondReply: json.RawMessage(tt.reply)})
			}
			h := start(t, srv, nil)
			h.rec.waitState(t, source.StateConnected)
			ref, err := h.client.CreateSession(ctxT(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.client.Call(ctxT(t), "prompt.submit", map[string]any{"session_id": ref.ID, "text": "approve-me: rm -rf ./A-build-cache"}, nil); err != nil {
				t.Fatal(err)
			}
			h.rec.waitFor(t, "approval", func(evs []wire.Event, _ []source.Status) bool { return len(approvals(evs)) > 0 })
			n, err := h.client.RespondApproval(ctxT(t), ref.ID, "once", "")
			switch {
			case tt.unknown:
				if !errors.Is(err, wire.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "did not decode") || strings.Contains(err.Error(), "try again") {
					t.Fatalf("reply %s: %v, want an unknown outcome", tt.reply, err)
				}
			case err != nil || n != tt.resolved:
				t.Fatalf("resolved %d, %v; want %d", n, err, tt.resolved)
			}
			if a := srv.Answers(); len(a) != 1 || a[0].Choice != "once" {
				t.Fatalf("the gateway took %+v", a)
			}
		})
	}
}

// TestApprovalRespondBoolNothingPending: a bool reply of false (0.21.0's
// "nothing was pending") is 0 resolved, as the count 0 is.
func TestApprovalRespondBoolNothingPending(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy, ResolvedAsBool: true})
	defer srv.Close()
	h := start(t, srv, nil)
	h.rec.waitState(t, source.StateConnected)
	ref, err := h.client.CreateSession(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := h.client.RespondApproval(ctxT(t), ref.ID, "deny", ""); n != 0 || err != nil {
		t.Fatalf("nothing pending: %d, %v", n, err)
	}
}
