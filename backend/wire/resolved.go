package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Resolved is the "resolved" count in the reply to an approval answer
// (the dashboard gateway's approval.respond, the API server's run
// approval). Hermes sends the number of approvals it resolved; Hermes
// 0.21.0 answered approval.respond with a bool instead ({"resolved":
// true}, from third-party ledgers of the real 0.21.0; see
// backend/hermestest/PROTOCOL.md), so both are read: true is 1, false is
// 0. Anything else does not decode: the reply was not understood, and the
// answer's outcome is unknown.
type Resolved int

// UnmarshalJSON reads a non-negative integer or a bool.
func (r *Resolved) UnmarshalJSON(b []byte) error {
	switch t := bytes.TrimSpace(b); string(t) {
	case "true":
		*r = 1
		return nil
	case "false":
		*r = 0
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil || n < 0 {
		return fmt.Errorf("resolved is %.40s, not a count or a bool", b)
	}
	*r = Resolved(n)
	return nil
}

// DecodeResolved reads the "resolved" of an answer's reply, which must be
// there.
func DecodeResolved(reply []byte) (int, error) {
	var r struct {
		Resolved *Resolved `json:"resolved"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		return 0, fmt.Errorf("the reply is not a JSON object with resolved (%v)", err)
	}
	if r.Resolved == nil {
		return 0, fmt.Errorf("the reply has no resolved")
	}
	return int(*r.Resolved), nil
}
