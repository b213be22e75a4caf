package wire_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// captureDir holds raw /api/ws traffic recorded against a real Hermes 0.18.2
// gateway (copied from the shared hermes-wire captures).
const captureDir = "testdata/ws-gateway"

// Directions in a capture line.
const (
	fromServer = "<<<"
	fromClient = ">>>"
)

// captureLine is one recorded frame.
type captureLine struct {
	file    string
	line    int
	dir     string // fromServer or fromClient
	payload []byte
}

func (c captureLine) String() string {
	return filepath.Base(c.file) + ":" + strconv.Itoa(c.line)
}

// captureRE matches "+   1.806  C1  <<< {json}" (timestamp, connection,
// direction, raw frame). "---" note lines have the same shape.
var captureRE = regexp.MustCompile(`^\+\s*[0-9.]+\s+\S+\s+(<<<|>>>|---)\s?(.*)$`)

// readCaptures returns every <<< and >>> line of every capture file whose
// payload looks like a JSON object. It fails the test if there are no
// captures at all, so a missing testdata directory cannot pass silently.
func readCaptures(tb testing.TB) []captureLine {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(captureDir, "*.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no capture files in %s", captureDir)
	}
	sort.Strings(files)
	var out []captureLine
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		n := 0
		for sc.Scan() {
			n++
			m := captureRE.FindSubmatch(sc.Bytes())
			if m == nil || string(m[1]) == "---" {
				continue
			}
			payload := bytes.TrimSpace(m[2])
			if !bytes.HasPrefix(payload, []byte("{")) {
				continue // raw HTTP handshakes, deliberate garbage
			}
			out = append(out, captureLine{
				file:    name,
				line:    n,
				dir:     string(m[1]),
				payload: bytes.Clone(payload),
			})
		}
		err = sc.Err()
		fh.Close()
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
	return out
}

// eventParams is the params object of an "event" notification.
type eventParams struct {
	Type      string          `json:"type"`
	SessionID string          `json:"session_id"`
	Payload   json.RawMessage `json:"payload"`
}

// TestCapturedServerFrames decodes every server->client JSON frame a real
// gateway sent and checks that every event with a typed payload decodes into
// it. It fails on the first frame Herald could not understand.
func TestCapturedServerFrames(t *testing.T) {
	t.Parallel()
	lines := readCaptures(t)

	kinds := map[wire.FrameKind]int{}
	events := map[string]int{}
	typed := map[string]int{}
	for _, c := range lines {
		if c.dir != fromServer {
			continue
		}
		f, err := wire.DecodeFrame(c.payload)
		if err != nil {
			t.Errorf("%s: DecodeFrame: %v\n%s", c, err, c.payload)
			continue
		}
		kinds[f.Kind]++

		// A gateway message is one WebSocket text message; splitting it
		// must hand back exactly the frame.
		var split [][]byte
		wire.SplitFrames(c.payload, func(b []byte) { split = append(split, b) })
		if len(split) != 1 || !bytes.Equal(split[0], c.payload) {
			t.Errorf("%s: SplitFrames yielded %d frames, want the message itself", c, len(split))
		}

		switch f.Kind {
		case wire.KindResponse:
			if f.Result == nil && f.Error == nil {
				t.Errorf("%s: response without result or error", c)
			}
		case wire.KindServerRequest:
			if f.Method == "" || wire.IDString(f.ID) == "" {
				t.Errorf("%s: server request without method or id", c)
			}
		case wire.KindNotification:
			if f.Method != "event" {
				continue
			}
			var p eventParams
			if err := json.Unmarshal(f.Params, &p); err != nil {
				t.Errorf("%s: event params: %v", c, err)
				continue
			}
			if p.Type == "" {
				t.Errorf("%s: event without params.type", c)
				continue
			}
			events[p.Type]++
			ev := wire.Event{Kind: p.Type, Session: p.SessionID, Payload: p.Payload}
			if err := ev.DecodeData(); err != nil {
				t.Errorf("%s: %s: DecodeData: %v\n%s", c, p.Type, err, p.Payload)
				continue
			}
			if !bytes.Equal(ev.Payload, p.Payload) {
				t.Errorf("%s: DecodeData changed the payload", c)
			}
			if want, ok := typedKinds[p.Type]; ok {
				typed[p.Type]++
				checkCapturedData(t, c, p.Type, want, ev.Data)
			} else if ev.Data != nil {
				t.Errorf("%s: %s has no typed payload but Data = %T", c, p.Type, ev.Data)
			}
		default:
			t.Errorf("%s: decoded with kind %v", c, f.Kind)
		}
	}

	for k, n := range kinds {
		t.Logf("frames %-14s %4d", k, n)
	}
	names := make([]string, 0, len(events))
	for k := range events {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t.Logf("event %-18s %4d (typed %d)", k, events[k], typed[k])
	}

	// The captures are known to exercise these; if parsing silently skipped
	// everything, the assertions above would prove nothing.
	if kinds[wire.KindResponse] == 0 || kinds[wire.KindNotification] == 0 {
		t.Errorf("captures yielded no responses or notifications: %v", kinds)
	}
	for _, k := range []string{wire.GatewayReady, wire.MessageDelta, wire.MessageComplete, wire.ToolStart, wire.ToolComplete, wire.SessionInfo, wire.ApprovalRequest, wire.ErrorEvent} {
		if events[k] == 0 {
			t.Errorf("captures contain no %s event", k)
		}
	}
}

// checkCapturedData checks that real traffic fills the typed payload's key
// fields, i.e. that the struct tags match what Hermes actually sends.
func checkCapturedData(t *testing.T, c captureLine, kind string, want any, data any) {
	t.Helper()
	if data == nil {
		t.Errorf("%s: %s: Data is nil", c, kind)
		return
	}
	if got, w := typeName(data), typeName(want); got != w {
		t.Errorf("%s: %s: Data is %s, want %s", c, kind, got, w)
		return
	}
	switch d := data.(type) {
	case *wire.CompletePayload:
		if d.Status == "" || d.Usage == nil {
			t.Errorf("%s: message.complete without status or usage: %+v", c, d)
		}
	case *wire.ToolStartPayload:
		if d.ToolID == "" || d.Name == "" {
			t.Errorf("%s: tool.start without tool_id or name: %+v", c, d)
		}
	case *wire.ToolCompletePayload:
		if d.ToolID == "" || d.Name == "" || d.Result == nil {
			t.Errorf("%s: tool.complete without tool_id, name or result: %+v", c, d)
		}
	case *wire.SessionInfoPayload:
		if d.Model == "" || d.Version == "" {
			t.Errorf("%s: session.info without model or version: %+v", c, d)
		}
	case *wire.ClarifyPayload:
		if d.Question == "" || d.RequestID == "" || len(d.Choices) == 0 {
			t.Errorf("%s: clarify.request without question, request_id or choices: %+v", c, d)
		}
	case *wire.ErrorPayload:
		if d.Message == "" {
			t.Errorf("%s: error event without message", c)
		}
	case *wire.ApprovalPayload:
		if d.Command == "" || len(d.Choices) == 0 {
			t.Errorf("%s: approval without command or choices: %+v", c, d)
		}
	}
}
