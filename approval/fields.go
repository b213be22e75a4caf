package approval

import (
	"bytes"
	"encoding/json"
	"sort"
)

// Approvals of something other than a command.
//
// Newer Hermes also asks approvals that are not shell commands (Hermes
// Desktop's folder and site requests of a sandbox, 0.23.4's notes); their
// field names are not pinned. Such a request arrives without a command:
// Herald shows every field it carries (Request.Fields, each through
// Visible on every surface) and accepts only deny, since it cannot show
// exactly what an approval would allow (ErrCommandUnseen).

// Field is one field of an approval that carries no command, as the
// gateway sent it (its name, and its value as text: a JSON string's
// text, any other value as compact JSON).
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Bounds on the fields kept of one request.
const (
	maxFields     = 16
	maxFieldName  = 64
	maxFieldValue = 512
)

// envelopeKeys are the fields of an approval event that say nothing of
// what it asks: ids, timing, routing, the choices, what Herald's clients
// add, and the description (shown on its own).
var envelopeKeys = map[string]bool{
	"event": true, "type": true, "run_id": true, "session_id": true, "seq": true, "ts": true, "timestamp": true,
	"message_id": true, "choices": true, "request_id": true, "approval_id": true, "answer_by_order": true,
	"allow_permanent": true, "allow_session": true, "description": true, "command": true, "expires_at": true,
	"synthesized": true, "details_missing": true, "text": true,
}

// approvalFields lists the fields of an approval event's payload that say
// what it asks, sorted by name and bounded (the list says when some were
// left out).
func approvalFields(payload json.RawMessage) []Field {
	var obj map[string]json.RawMessage
	if len(payload) == 0 || json.Unmarshal(payload, &obj) != nil {
		return nil
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		if !envelopeKeys[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var out []Field
	for i, k := range names {
		if i == maxFields {
			out = append(out, Field{Name: "…", Value: "and more fields, not shown"})
			break
		}
		name, cut := Truncate(k, maxFieldName)
		if cut {
			name += "…"
		}
		out = append(out, Field{Name: name, Value: fieldText(obj[k])})
	}
	return out
}

// fieldText is a field's value as text, bounded.
func fieldText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			s = b.String()
		} else {
			s = string(raw)
		}
	}
	v, cut := Truncate(s, maxFieldValue)
	if cut {
		v += "…"
	}
	return v
}
