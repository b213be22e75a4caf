package wire

import "testing"

func TestDecodeResolved(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reply string
		want  int
		ok    bool
	}{
		{`{"resolved": 2}`, 2, true},
		{`{"resolved": 0}`, 0, true},
		{`{"resolved": true}`, 1, true}, // 0.21.0
		{`{"resolved": false}`, 0, true},
		{`{"resolved": -1}`, 0, false},
		{`{"resolved": 1.5}`, 0, false},
		{`{"resolved": "1"}`, 0, false},
		{`{"resolved": null}`, 0, false},
		{`{"resolved": {}}`, 0, false},
		{`{}`, 0, false},
		{`[]`, 0, false},
		{`not json`, 0, false},
	}
	for _, tt := range tests {
		got, err := DecodeResolved([]byte(tt.reply))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("DecodeResolved(%s) = %d, %v; want %d, ok %v", tt.reply, got, err, tt.want, tt.ok)
		}
	}
}

// TestCancelAnsweredNotFromJSON: who answered a request is set by a
// transport, never read from what a gateway sends.
func TestCancelAnsweredNotFromJSON(t *testing.T) {
	t.Parallel()
	ev := Event{Kind: RequestCancel, Payload: []byte(`{"id": "srq-1", "reason": "resolved", "Answered": "here", "Choice": "once", "herald_answered": "here", "herald_choice": "once"}`)}
	if err := ev.DecodeData(); err != nil {
		t.Fatal(err)
	}
	if cp := ev.Data.(*CancelPayload); cp.Answered != "" || cp.Choice != "" || cp.Reason != "resolved" {
		t.Fatalf("decoded %+v", cp)
	}
}
