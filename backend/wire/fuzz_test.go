package wire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// handSeeds are edge cases the captures do not contain.
var handSeeds = []string{
	``,
	`null`,
	`{}`,
	`[]`,
	`"2.0"`,
	`this is not json`,
	`{"jsonrpc":"2.0"}`,
	`{"jsonrpc":"1.0","id":1,"result":1}`,
	`{"jsonrpc":"2.0","id":null,"result":null}`,
	`{"jsonrpc":"2.0","id":"srq-3f9a1c2b7d4e","method":"approval","params":{"command":"rm -rf x"}}`,
	`{"jsonrpc":"2.0","id":"srq-3f9a1c2b7d4e","method":"clarify","params":{}}`,
	`{"jsonrpc":"2.0","id":{"nested":["<&>"]},"method":"x"}`,
	`{"jsonrpc":"2.0","id": null ,"method":"event"}`,
	`{"jsonrpc":"2.0","id":1,"method":"","error":{"code":-32601,"message":"m","data":[1]}}`,
	`{"jsonrpc":"2.0","id":1,"error":null}`,
	`{"jsonrpc":"2.0","id":1,"id":null,"method":"m"}`,
	`{"JSONRPC":"2.0","ID":7,"METHOD":"m"}`,
	`{"jsonrpc":"2.0","method":"request.cancel","params":{"id":"srq-1","reason":"timeout"}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}",
	"a\nb\r\n\n  c  \n",
}

func FuzzDecodeFrame(f *testing.F) {
	for _, c := range readCaptures(f) {
		f.Add(c.payload)
	}
	for _, s := range handSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in := bytes.Clone(b)
		fr, err := wire.DecodeFrame(b)
		if !bytes.Equal(in, b) {
			t.Fatalf("DecodeFrame modified its input")
		}
		if err != nil {
			if !errors.Is(err, wire.ErrNotJSONRPC) {
				t.Fatalf("error %v does not wrap ErrNotJSONRPC", err)
			}
			if !reflect.DeepEqual(fr, wire.Frame{}) {
				t.Fatalf("failed decode returned non-zero frame %s", dumpFrame(fr))
			}
			return
		}
		if !json.Valid(b) {
			t.Fatalf("decoded invalid JSON %q", b)
		}
		hasID := len(fr.ID) > 0 && string(fr.ID) != "null"
		switch fr.Kind {
		case wire.KindResponse:
			if fr.Result == nil && fr.Error == nil {
				t.Fatalf("response without result or error: %s", dumpFrame(fr))
			}
			if fr.Method != "" {
				t.Fatalf("response with method: %s", dumpFrame(fr))
			}
		case wire.KindNotification:
			if fr.Method == "" || hasID {
				t.Fatalf("notification without method or with id: %s", dumpFrame(fr))
			}
		case wire.KindServerRequest:
			if !hasID || fr.Method == "" {
				t.Fatalf("server request without id or method: %s", dumpFrame(fr))
			}
			// Herald answers server requests it cannot serve with -32601;
			// that answer must carry the same id back.
			resp, err := wire.EncodeError(fr.ID, wire.CodeMethodNotFound, "Herald does not handle "+fr.Method)
			if err != nil {
				t.Fatalf("EncodeError(id %q): %v", fr.ID, err)
			}
			back, err := wire.DecodeFrame(resp)
			if err != nil {
				t.Fatalf("DecodeFrame(%s): %v", resp, err)
			}
			if back.Kind != wire.KindResponse || !wire.IsMethodNotFound(back.Error) {
				t.Fatalf("answer decoded as %s", dumpFrame(back))
			}
			if !sameJSON(t, back.ID, fr.ID) {
				t.Fatalf("answer id %s, request id %s", back.ID, fr.ID)
			}
		default:
			t.Fatalf("decoded with kind %v: %s", fr.Kind, dumpFrame(fr))
		}
	})
}

// sameJSON reports whether two JSON values are equal as values.
func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	va, vb := decodeAny(t, a), decodeAny(t, b)
	return reflect.DeepEqual(va, vb)
}

func decodeAny(t *testing.T, b json.RawMessage) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

func FuzzSplitFrames(f *testing.F) {
	var all [][]byte
	for _, c := range readCaptures(f) {
		f.Add(c.payload)
		all = append(all, c.payload)
	}
	// Several frames in one message, with every separator we accept.
	f.Add(bytes.Join(all[:min(len(all), 5)], []byte("\n")))
	f.Add(bytes.Join(all[:min(len(all), 5)], []byte("\r\n\r\n")))
	for _, s := range handSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("\n\n\n"))
	f.Add([]byte(" \t\r\n\v\f\u0085\u00a0x\u2028"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		in := bytes.Clone(msg)
		var got []string
		wire.SplitFrames(msg, func(line []byte) {
			if len(line) == 0 {
				t.Fatalf("yielded an empty line from %q", in)
			}
			if bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("yielded line %q contains a newline", line)
			}
			got = append(got, string(line))
		})
		if !bytes.Equal(in, msg) {
			t.Fatalf("SplitFrames modified its input")
		}
		// Reference: newline-separated, trimmed, blank lines dropped.
		var want []string
		for _, l := range strings.Split(string(in), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				want = append(want, l)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("SplitFrames(%q) = %q, want %q", in, got, want)
		}
	})
}
