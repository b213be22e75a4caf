// Package wire decodes and encodes the JSON-RPC 2.0 frames that a Hermes
// gateway speaks on /api/ws, and defines Herald's normalized event model.
//
// It is pure data handling: no sockets, no goroutines, no clocks. The
// gateway package feeds it bytes and gets typed values back.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// FrameKind classifies a decoded JSON-RPC frame.
type FrameKind int

const (
	// KindInvalid is a frame that is not JSON-RPC 2.0 we understand.
	KindInvalid FrameKind = iota
	// KindResponse answers a request the client sent (result or error).
	KindResponse
	// KindNotification is a server message without an id (event, request.cancel).
	KindNotification
	// KindServerRequest is a server-initiated request that expects a response.
	KindServerRequest
)

func (k FrameKind) String() string {
	switch k {
	case KindResponse:
		return "response"
	case KindNotification:
		return "notification"
	case KindServerRequest:
		return "server-request"
	}
	return "invalid"
}

// Frame is one decoded JSON-RPC 2.0 message.
type Frame struct {
	Kind   FrameKind
	ID     json.RawMessage // raw id (number or string) for responses and server requests
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *RPCError
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("gateway error %d: %s", e.Code, e.Message)
}

// Well-known JSON-RPC error codes used by Hermes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
)

// IsMethodNotFound reports whether err is the gateway saying it does not
// know a method (older gateways answer -32601 to newer calls).
func IsMethodNotFound(err error) bool {
	var re *RPCError
	return errors.As(err, &re) && re != nil && re.Code == CodeMethodNotFound
}

type rawFrame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *RPCError       `json:"error"`
}

// ErrNotJSONRPC is wrapped by DecodeFrame for input that is not a JSON-RPC
// 2.0 message.
var ErrNotJSONRPC = errors.New("not a JSON-RPC 2.0 frame")

// DecodeFrame decodes one JSON-RPC frame.
func DecodeFrame(b []byte) (Frame, error) {
	var r rawFrame
	if err := json.Unmarshal(b, &r); err != nil {
		return Frame{}, fmt.Errorf("%w: %v", ErrNotJSONRPC, err)
	}
	if r.JSONRPC != "2.0" {
		return Frame{}, fmt.Errorf("%w: jsonrpc=%q", ErrNotJSONRPC, r.JSONRPC)
	}
	f := Frame{ID: r.ID, Params: r.Params, Result: r.Result, Error: r.Error}
	hasID := len(r.ID) > 0 && !bytes.Equal(r.ID, []byte("null"))
	switch {
	case r.Method != nil && *r.Method != "":
		f.Method = *r.Method
		if hasID {
			f.Kind = KindServerRequest
		} else {
			f.Kind = KindNotification
		}
	case r.Result != nil || r.Error != nil:
		f.Kind = KindResponse
	default:
		return Frame{}, fmt.Errorf("%w: neither method nor result/error", ErrNotJSONRPC)
	}
	return f, nil
}

// SplitFrames splits one WebSocket text message into JSON frames. Hermes
// sends one frame per message, but a message may also carry several frames
// separated by newlines; blank lines are skipped.
func SplitFrames(msg []byte, fn func([]byte)) {
	for len(msg) > 0 {
		i := bytes.IndexByte(msg, '\n')
		var line []byte
		if i < 0 {
			line, msg = msg, nil
		} else {
			line, msg = msg[:i], msg[i+1:]
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			fn(line)
		}
	}
}

// Request is an outgoing JSON-RPC request.
type Request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// EncodeRequest encodes a client request.
func EncodeRequest(id int64, method string, params any) ([]byte, error) {
	if params == nil {
		params = struct{}{}
	}
	return json.Marshal(Request{JSONRPC: "2.0", ID: id, Method: method, Params: params})
}

// EncodeResult encodes a response to a server request.
func EncodeResult(id json.RawMessage, result any) ([]byte, error) {
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
}

// EncodeError encodes an error response to a server request.
func EncodeError(id json.RawMessage, code int, msg string) ([]byte, error) {
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   RPCError        `json:"error"`
	}{"2.0", id, RPCError{Code: code, Message: msg}})
}

// IDString returns a server request id as a plain string (quotes removed).
func IDString(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return string(id)
}

// ErrRequestSettled is what answering a server request returns when the
// gateway says the request no longer waits (request.answer → expired):
// another client answered it first, or it timed out or was withdrawn.
// It is never a success.
var ErrRequestSettled = errors.New("already answered elsewhere: the gateway no longer waits for this request (another client answered it first, or it ended)")
