package wire_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// raw turns a literal into a RawMessage; "" means absent (nil).
func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func TestDecodeFrame(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want wire.Frame
	}{
		{
			name: "response with result",
			in:   `{"jsonrpc": "2.0", "id": 1, "result": {"session_id": "7f57f239", "message_count": 0}}`,
			want: wire.Frame{Kind: wire.KindResponse, ID: raw(`1`), Result: raw(`{"session_id": "7f57f239", "message_count": 0}`)},
		},
		{
			name: "response with null result",
			in:   `{"jsonrpc":"2.0","id":2,"result":null}`,
			want: wire.Frame{Kind: wire.KindResponse, ID: raw(`2`), Result: raw(`null`)},
		},
		{
			name: "response with error",
			in:   `{"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "unknown method: gateway.ping"}}`,
			want: wire.Frame{Kind: wire.KindResponse, ID: raw(`2`), Error: &wire.RPCError{Code: wire.CodeMethodNotFound, Message: "unknown method: gateway.ping"}},
		},
		{
			name: "response with error data",
			in:   `{"jsonrpc":"2.0","id":10,"error":{"code":4001,"message":"session not found","data":{"session_id":"nope"}}}`,
			want: wire.Frame{Kind: wire.KindResponse, ID: raw(`10`), Error: &wire.RPCError{Code: 4001, Message: "session not found", Data: raw(`{"session_id":"nope"}`)}},
		},
		{
			name: "parse error response with id null",
			in:   `{"jsonrpc": "2.0", "error": {"code": -32700, "message": "parse error"}, "id": null}`,
			want: wire.Frame{Kind: wire.KindResponse, ID: raw(`null`), Error: &wire.RPCError{Code: wire.CodeParseError, Message: "parse error"}},
		},
		{
			name: "result with id null",
			in:   `{"jsonrpc": "2.0", "id": null, "result": {"output": "ok"}}`,
			want: wire.Frame{Kind: wire.KindResponse, ID: raw(`null`), Result: raw(`{"output": "ok"}`)},
		},
		{
			name: "response with string id",
			in:   `{"jsonrpc":"2.0","id":"abc","result":{}}`,
			want: wire.Frame{Kind: wire.KindResponse, ID: raw(`"abc"`), Result: raw(`{}`)},
		},
		{
			name: "empty method with result is a response",
			in:   `{"jsonrpc":"2.0","id":3,"method":"","result":true}`,
			want: wire.Frame{Kind: wire.KindResponse, ID: raw(`3`), Result: raw(`true`)},
		},
		{
			name: "event notification",
			in:   `{"jsonrpc": "2.0", "method": "event", "params": {"type": "message.delta", "session_id": "d36640c7", "payload": {"text": "tick 1/20 "}}}`,
			want: wire.Frame{Kind: wire.KindNotification, Method: "event", Params: raw(`{"type": "message.delta", "session_id": "d36640c7", "payload": {"text": "tick 1/20 "}}`)},
		},
		{
			name: "request.cancel notification",
			in:   `{"jsonrpc":"2.0","method":"request.cancel","params":{"id":"srq-3f9a1c2b7d4e","reason":"timeout"}}`,
			want: wire.Frame{Kind: wire.KindNotification, Method: wire.RequestCancel, Params: raw(`{"id":"srq-3f9a1c2b7d4e","reason":"timeout"}`)},
		},
		{
			name: "notification without params",
			in:   `{"jsonrpc":"2.0","method":"sessions.changed"}`,
			want: wire.Frame{Kind: wire.KindNotification, Method: wire.SessionsChanged},
		},
		{
			name: "method with id null is a notification",
			in:   `{"jsonrpc":"2.0","id":null,"method":"event","params":{"type":"gateway.ready"}}`,
			want: wire.Frame{Kind: wire.KindNotification, ID: raw(`null`), Method: "event", Params: raw(`{"type":"gateway.ready"}`)},
		},
		{
			name: "server request with srq id",
			in:   `{"jsonrpc":"2.0","id":"srq-3f9a1c2b7d4e","method":"approval","params":{"session_id":"7f57f239","command":"rm -rf x"}}`,
			want: wire.Frame{Kind: wire.KindServerRequest, ID: raw(`"srq-3f9a1c2b7d4e"`), Method: wire.ApprovalServerRequest, Params: raw(`{"session_id":"7f57f239","command":"rm -rf x"}`)},
		},
		{
			name: "server request with numeric id",
			in:   `{"jsonrpc":"2.0","id":0,"method":"clarify","params":[]}`,
			want: wire.Frame{Kind: wire.KindServerRequest, ID: raw(`0`), Method: "clarify", Params: raw(`[]`)},
		},
		{
			name: "server request with empty string id",
			in:   `{"jsonrpc":"2.0","id":"","method":"approval"}`,
			want: wire.Frame{Kind: wire.KindServerRequest, ID: raw(`""`), Method: "approval"},
		},
		{
			name: "unknown fields ignored",
			in:   `{"jsonrpc":"2.0","method":"event","params":{},"seq":7,"extra":[1]}`,
			want: wire.Frame{Kind: wire.KindNotification, Method: "event", Params: raw(`{}`)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := wire.DecodeFrame([]byte(tt.in))
			if err != nil {
				t.Fatalf("DecodeFrame: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodeFrame =\n  %s\nwant\n  %s", dumpFrame(got), dumpFrame(tt.want))
			}
		})
	}
}

func dumpFrame(f wire.Frame) string {
	s := fmt.Sprintf("{Kind:%v ID:%q Method:%q Params:%q Result:%q", f.Kind, f.ID, f.Method, f.Params, f.Result)
	if f.Error != nil {
		s += fmt.Sprintf(" Error:%+v", *f.Error)
	}
	return s + "}"
}

func TestDecodeFrameInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ``},
		{"not JSON", `this is not json`},
		{"truncated", `{"jsonrpc":"2.0","id":1,"result":`},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"result":1} x`},
		{"JSON null", `null`},
		{"JSON array", `[{"jsonrpc":"2.0","id":1,"result":1}]`},
		{"JSON string", `"2.0"`},
		{"jsonrpc missing", `{"id":1,"result":{}}`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"event","params":{}}`},
		{"jsonrpc empty", `{"jsonrpc":"","method":"event"}`},
		{"jsonrpc number", `{"jsonrpc":2.0,"method":"event"}`},
		{"neither method nor result", `{"jsonrpc": "2.0", "id": 99, "params": {}}`},
		{"only jsonrpc", `{"jsonrpc":"2.0"}`},
		{"null error and no result", `{"jsonrpc":"2.0","id":1,"error":null}`},
		{"empty method no result", `{"jsonrpc":"2.0","id":1,"method":""}`},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`},
		{"error not an object", `{"jsonrpc":"2.0","id":1,"error":"boom"}`},
		{"error code not a number", `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := wire.DecodeFrame([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeFrame(%q) = %s, want error", tt.in, dumpFrame(got))
			}
			if !errors.Is(err, wire.ErrNotJSONRPC) {
				t.Errorf("error %v does not wrap ErrNotJSONRPC", err)
			}
			if !reflect.DeepEqual(got, wire.Frame{}) {
				t.Errorf("failed decode returned %s, want zero Frame", dumpFrame(got))
			}
		})
	}
}

func TestFrameKindString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		k    wire.FrameKind
		want string
	}{
		{wire.KindInvalid, "invalid"},
		{wire.KindResponse, "response"},
		{wire.KindNotification, "notification"},
		{wire.KindServerRequest, "server-request"},
		{wire.FrameKind(42), "invalid"},
	}
	for _, tt := range tests {
		if got := tt.k.String(); got != tt.want {
			t.Errorf("FrameKind(%d).String() = %q, want %q", int(tt.k), got, tt.want)
		}
	}
}

func TestSplitFrames(t *testing.T) {
	t.Parallel()
	const a = `{"jsonrpc":"2.0","method":"event","params":{"type":"message.start"}}`
	const b = `{"jsonrpc":"2.0","id":1,"result":{}}`
	const c = `{"jsonrpc":"2.0","method":"event","params":{"type":"message.delta","payload":{"text":"a\nb"}}}`
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"only newlines", "\n\n\r\n", nil},
		{"only whitespace", " \t \n  ", nil},
		{"one frame", a, []string{a}},
		{"one frame trailing newline", a + "\n", []string{a}},
		{"one frame trailing CRLF", a + "\r\n", []string{a}},
		{"one frame surrounded by spaces", "  " + a + "\t ", []string{a}},
		{"two frames LF", a + "\n" + b, []string{a, b}},
		{"three frames LF trailing", a + "\n" + b + "\n" + c + "\n", []string{a, b, c}},
		{"two frames CRLF", a + "\r\n" + b + "\r\n", []string{a, b}},
		{"blank lines between", "\n\n" + a + "\n\n\r\n  \n" + b + "\n\n", []string{a, b}},
		{"escaped newline stays inside frame", c, []string{c}},
		{"not JSON is still a line", "garbage\n" + a, []string{"garbage", a}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			wire.SplitFrames([]byte(tt.in), func(line []byte) { got = append(got, string(line)) })
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SplitFrames(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplitFramesNil(t *testing.T) {
	t.Parallel()
	n := 0
	wire.SplitFrames(nil, func([]byte) { n++ })
	if n != 0 {
		t.Errorf("SplitFrames(nil) yielded %d lines", n)
	}
}

func TestEncodeRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		id         int64
		method     string
		params     any
		wantJSON   string
		wantParams string
	}{
		{
			name: "map params", id: 1, method: "session.create", params: map[string]int{"cols": 100},
			wantJSON:   `{"jsonrpc":"2.0","id":1,"method":"session.create","params":{"cols":100}}`,
			wantParams: `{"cols":100}`,
		},
		{
			name: "struct params", id: 12, method: "prompt.submit",
			params: struct {
				SessionID string `json:"session_id"`
				Text      string `json:"text"`
			}{"d36640c7", "slow 20"},
			wantJSON:   `{"jsonrpc":"2.0","id":12,"method":"prompt.submit","params":{"session_id":"d36640c7","text":"slow 20"}}`,
			wantParams: `{"session_id":"d36640c7","text":"slow 20"}`,
		},
		{
			name: "nil params become an empty object", id: 2, method: "gateway.ping", params: nil,
			wantJSON:   `{"jsonrpc":"2.0","id":2,"method":"gateway.ping","params":{}}`,
			wantParams: `{}`,
		},
		{
			name: "raw params", id: 1 << 40, method: "session.events.since", params: json.RawMessage(`{"session_id":"s","seq":0}`),
			wantJSON:   `{"jsonrpc":"2.0","id":1099511627776,"method":"session.events.since","params":{"session_id":"s","seq":0}}`,
			wantParams: `{"session_id":"s","seq":0}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := wire.EncodeRequest(tt.id, tt.method, tt.params)
			if err != nil {
				t.Fatalf("EncodeRequest: %v", err)
			}
			if string(b) != tt.wantJSON {
				t.Errorf("EncodeRequest = %s\nwant          %s", b, tt.wantJSON)
			}
			// Round trip: a request has an id and a method, so it decodes
			// like a server request would.
			f, err := wire.DecodeFrame(b)
			if err != nil {
				t.Fatalf("DecodeFrame(%s): %v", b, err)
			}
			if f.Kind != wire.KindServerRequest || f.Method != tt.method || wire.IDString(f.ID) != fmt.Sprint(tt.id) || string(f.Params) != tt.wantParams {
				t.Errorf("round trip = %s", dumpFrame(f))
			}
		})
	}
}

func TestEncodeRequestUnencodable(t *testing.T) {
	t.Parallel()
	for _, params := range []any{make(chan int), func() {}, map[string]any{"f": 1i}} {
		if b, err := wire.EncodeRequest(1, "x", params); err == nil {
			t.Errorf("EncodeRequest(%T) = %s, want error", params, b)
		}
	}
}

func TestEncodeResult(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		id         json.RawMessage
		result     any
		wantJSON   string
		wantID     string
		wantResult string
	}{
		{
			name: "srq id", id: raw(`"srq-3f9a1c2b7d4e"`), result: map[string]string{"choice": "once"},
			wantJSON: `{"jsonrpc":"2.0","id":"srq-3f9a1c2b7d4e","result":{"choice":"once"}}`,
			wantID:   `"srq-3f9a1c2b7d4e"`, wantResult: `{"choice":"once"}`,
		},
		{
			name: "numeric id", id: raw(`7`), result: true,
			wantJSON: `{"jsonrpc":"2.0","id":7,"result":true}`,
			wantID:   `7`, wantResult: `true`,
		},
		{
			name: "nil result", id: raw(`"srq-1"`), result: nil,
			wantJSON: `{"jsonrpc":"2.0","id":"srq-1","result":null}`,
			wantID:   `"srq-1"`, wantResult: `null`,
		},
		{
			name: "nil id", id: nil, result: 1,
			wantJSON: `{"jsonrpc":"2.0","id":null,"result":1}`,
			wantID:   `null`, wantResult: `1`,
		},
		{
			name: "id with spaces is compacted", id: raw(` "srq-2" `), result: "ok",
			wantJSON: `{"jsonrpc":"2.0","id":"srq-2","result":"ok"}`,
			wantID:   `"srq-2"`, wantResult: `"ok"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := wire.EncodeResult(tt.id, tt.result)
			if err != nil {
				t.Fatalf("EncodeResult: %v", err)
			}
			if string(b) != tt.wantJSON {
				t.Errorf("EncodeResult = %s\nwant         %s", b, tt.wantJSON)
			}
			f, err := wire.DecodeFrame(b)
			if err != nil {
				t.Fatalf("DecodeFrame(%s): %v", b, err)
			}
			want := wire.Frame{Kind: wire.KindResponse, ID: raw(tt.wantID), Result: raw(tt.wantResult)}
			if !reflect.DeepEqual(f, want) {
				t.Errorf("round trip = %s, want %s", dumpFrame(f), dumpFrame(want))
			}
		})
	}
}

func TestEncodeError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		id       json.RawMessage
		code     int
		msg      string
		wantJSON string
	}{
		{
			name: "method not found", id: raw(`"srq-3f9a1c2b7d4e"`), code: wire.CodeMethodNotFound, msg: "Herald does not handle clarify",
			wantJSON: `{"jsonrpc":"2.0","id":"srq-3f9a1c2b7d4e","error":{"code":-32601,"message":"Herald does not handle clarify"}}`,
		},
		{
			name: "invalid params numeric id", id: raw(`3`), code: wire.CodeInvalidParams, msg: "bad",
			wantJSON: `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}`,
		},
		{
			name: "message needing escapes", id: raw(`"x"`), code: 1, msg: "say \"no\"\n",
			wantJSON: `{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"say \"no\"\n"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := wire.EncodeError(tt.id, tt.code, tt.msg)
			if err != nil {
				t.Fatalf("EncodeError: %v", err)
			}
			if string(b) != tt.wantJSON {
				t.Errorf("EncodeError = %s\nwant        %s", b, tt.wantJSON)
			}
			f, err := wire.DecodeFrame(b)
			if err != nil {
				t.Fatalf("DecodeFrame(%s): %v", b, err)
			}
			want := wire.Frame{Kind: wire.KindResponse, ID: tt.id, Error: &wire.RPCError{Code: tt.code, Message: tt.msg}}
			if !reflect.DeepEqual(f, want) {
				t.Errorf("round trip = %s, want %s", dumpFrame(f), dumpFrame(want))
			}
			if got, want := wire.IsMethodNotFound(f.Error), tt.code == wire.CodeMethodNotFound; got != want {
				t.Errorf("IsMethodNotFound = %v, want %v", got, want)
			}
		})
	}
}

func TestEncodeInvalidID(t *testing.T) {
	t.Parallel()
	for _, id := range []string{`{`, `srq-unquoted`, `1 2`} {
		if b, err := wire.EncodeResult(raw(id), 1); err == nil {
			t.Errorf("EncodeResult(id %q) = %s, want error", id, b)
		}
		if b, err := wire.EncodeError(raw(id), 1, "m"); err == nil {
			t.Errorf("EncodeError(id %q) = %s, want error", id, b)
		}
	}
}

func TestIDString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id   json.RawMessage
		want string
	}{
		{raw(`"srq-3f9a1c2b7d4e"`), "srq-3f9a1c2b7d4e"},
		{raw(`42`), "42"},
		{raw(`-1`), "-1"},
		{raw(`""`), ""},
		{raw(`"a\"b"`), `a"b`},
		{raw(`"caf\u00e9"`), "café"},
		{raw(`null`), ""},
		{nil, ""},
		{raw(`{"k":1}`), `{"k":1}`},
	}
	for _, tt := range tests {
		if got := wire.IDString(tt.id); got != tt.want {
			t.Errorf("IDString(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestIsMethodNotFound(t *testing.T) {
	t.Parallel()
	notFound := &wire.RPCError{Code: wire.CodeMethodNotFound, Message: "unknown method: gateway.ping"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"method not found", notFound, true},
		{"wrapped", fmt.Errorf("client.capabilities: %w", notFound), true},
		{"joined", errors.Join(errors.New("other"), notFound), true},
		{"invalid params", &wire.RPCError{Code: wire.CodeInvalidParams}, false},
		{"gateway code", &wire.RPCError{Code: 4001, Message: "session not found"}, false},
		{"plain error mentioning the code", errors.New("gateway error -32601: unknown method"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := wire.IsMethodNotFound(tt.err); got != tt.want {
				t.Errorf("IsMethodNotFound(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestRPCErrorMessage(t *testing.T) {
	t.Parallel()
	err := &wire.RPCError{Code: 4001, Message: "session not found"}
	if got := err.Error(); !strings.Contains(got, "4001") || !strings.Contains(got, "session not found") {
		t.Errorf("Error() = %q, want code and message", got)
	}
}
