package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Salvaged is what Salvage recovered from a frame DecodeFrame or the
// event decoder refused: enough to tell what the frame was and whom it
// concerned, never enough to act on its contents.
type Salvaged struct {
	// Method is the frame's JSON-RPC method ("event" for events).
	Method string
	// ID is a server request's id, raw (a JSON string or number).
	ID json.RawMessage
	// Type is an event's type (params.type).
	Type string
	// Session is the session named by params.session_id or
	// params.payload.session_id.
	Session string
	// RequestID is an approval's own id (request_id or approval_id).
	RequestID string
}

// Kind is the event kind the frame would have been: its event type, or
// its method for a server request.
func (s Salvaged) Kind() string {
	if s.Method == "event" {
		return s.Type
	}
	return s.Method
}

// IsApproval reports whether the frame was an approval (event or server
// request).
func (s Salvaged) IsApproval() bool {
	k := s.Kind()
	return k == ApprovalRequest || (k == ApprovalServerRequest && len(s.ID) > 0)
}

// MaxSalvageDepth bounds how deep Salvage follows a frame's nesting
// before it only skips: far past encoding/json's 10,000 levels, so a
// frame refused for its depth can still be named.
const MaxSalvageDepth = 1 << 20

// Salvage reads the few fields that identify a frame (method, id, event
// type, session, request id) from b with a streaming tokenizer, which has
// no nesting limit and does not convert numbers: a frame encoding/json
// refuses (nested past 10,000 levels, a seq out of range) can still be
// shown for what it was. ok is false when b is not a JSON object or names
// no method.
func Salvage(b []byte) (s Salvaged, ok bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return Salvaged{}, false
	}
	err := eachKey(d, func(k string) error {
		switch k {
		case "method":
			s.Method = str(d)
			return nil
		case "id":
			v, err := scalar(d)
			s.ID = v
			return err
		case "params":
			return object(d, func(k string) error {
				switch k {
				case "type":
					s.Type = str(d)
				case "session_id":
					s.Session = first(s.Session, str(d))
				case "request_id", "approval_id":
					s.RequestID = first(s.RequestID, str(d))
				case "payload":
					return object(d, func(k string) error {
						switch k {
						case "session_id":
							s.Session = first(s.Session, str(d))
						case "request_id", "approval_id":
							s.RequestID = first(s.RequestID, str(d))
						default:
							return skip(d)
						}
						return nil
					})
				default:
					return skip(d)
				}
				return nil
			})
		}
		return skip(d)
	})
	if err != nil && !errors.Is(err, io.EOF) && s.Method == "" {
		return Salvaged{}, false
	}
	return s, s.Method != ""
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// eachKey calls fn for each key of the object whose '{' was just read;
// fn must consume the value.
func eachKey(d *json.Decoder, fn func(string) error) error {
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return err
		}
		k, _ := t.(string)
		if err := fn(k); err != nil {
			return err
		}
	}
	_, err := d.Token() // '}'
	return err
}

// object reads an object value with eachKey, or skips a value of any
// other kind.
func object(d *json.Decoder, fn func(string) error) error {
	t, err := d.Token()
	if err != nil {
		return err
	}
	if t == json.Delim('{') {
		return eachKey(d, fn)
	}
	return skipRest(d, t)
}

// str reads a value, returning it if it is a string (else "", skipped).
func str(d *json.Decoder) string {
	t, err := d.Token()
	if err != nil {
		return ""
	}
	if v, ok := t.(string); ok {
		return v
	}
	skipRest(d, t)
	return ""
}

// scalar reads a string or number value as raw JSON (nil for others).
func scalar(d *json.Decoder) (json.RawMessage, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch v := t.(type) {
	case string:
		b, _ := json.Marshal(v)
		return b, nil
	case json.Number:
		return json.RawMessage(v.String()), nil
	}
	return nil, skipRest(d, t)
}

// skip consumes one value.
func skip(d *json.Decoder) error {
	t, err := d.Token()
	if err != nil {
		return err
	}
	return skipRest(d, t)
}

// skipRest consumes the rest of a value whose first token was t.
func skipRest(d *json.Decoder, t json.Token) error {
	if t != json.Delim('{') && t != json.Delim('[') {
		return nil
	}
	for depth := 1; depth > 0; {
		t, err := d.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			if depth++; depth > MaxSalvageDepth {
				return errors.New("nested too deep")
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}
