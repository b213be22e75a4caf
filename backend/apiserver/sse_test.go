package apiserver_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net/http/httputil"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
)

// captureDir holds raw HTTP answers recorded from a real Hermes 0.18.2 API
// server (copied from shared/hermes-wire/api-server).
const captureDir = "testdata"

// captureBody returns the body of a raw HTTP capture: headers stripped and,
// for the one capture that kept the HTTP chunk framing (wire_chunked), the
// framing decoded. The other captures keep a "Transfer-Encoding: chunked"
// header over an already de-chunked body.
func captureBody(tb testing.TB, name string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(captureDir, name))
	if err != nil {
		tb.Fatal(err)
	}
	_, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		tb.Fatalf("%s: no end of headers", name)
	}
	if strings.Contains(name, "wire_chunked") {
		body, err = io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(body)))
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
	return body
}

// sseCaptures lists every captured event stream.
func sseCaptures(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(captureDir, "*.raw.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) < 20 {
		tb.Fatalf("only %d stream captures in %s", len(files), captureDir)
	}
	var out []string
	for _, f := range files {
		out = append(out, filepath.Base(f))
	}
	return out
}

// readAll parses a whole stream, returning events, comments and the error
// that ended it (nil for a clean EOF).
func readAll(r io.Reader, max int) ([]apiserver.SSEEvent, []string, error) {
	sr := apiserver.NewSSEReader(r, max)
	var comments []string
	sr.OnComment = func(c string) { comments = append(comments, c) }
	var evs []apiserver.SSEEvent
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return evs, comments, nil
		}
		if err != nil {
			return evs, comments, err
		}
		evs = append(evs, ev)
	}
}

// chunkReader returns its data in chunks of the sizes given (cycled).
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = c.sizes[c.i%len(c.sizes)]
		c.i++
	}
	n = max(1, min(n, len(p), len(c.data)))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func TestSSEReaderRules(t *testing.T) {
	t.Parallel()
	type ev = apiserver.SSEEvent
	tests := []struct {
		name     string
		in       string
		want     []ev
		comments []string
	}{
		{"LF", "data: a\n\ndata: b\n\n", []ev{{Data: "a"}, {Data: "b"}}, nil},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []ev{{Data: "a"}, {Data: "b"}}, nil},
		{"CR", "data: a\r\rdata: b\r\r", []ev{{Data: "a"}, {Data: "b"}}, nil},
		{"mixed endings", "data: a\r\n\rdata: b\n\r\n", []ev{{Data: "a"}, {Data: "b"}}, nil},
		{"BOM", "\xEF\xBB\xBFdata: a\n\n", []ev{{Data: "a"}}, nil},
		{"BOM only once", "\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", nil, nil},
		{"not a BOM", "\xEF\xBBdata: a\n\n", nil, nil},
		{"multi-line data", "data: a\ndata: b\ndata:\n\n", []ev{{Data: "a\nb\n"}}, nil},
		{"one space stripped", "data:  a\ndata:b\n\n", []ev{{Data: " a\nb"}}, nil},
		{"field without colon", "data\n\n", []ev{{Data: ""}}, nil},
		{"event type", "event: approval.request\ndata: {}\n\n", []ev{{Type: "approval.request", Data: "{}"}}, nil},
		{"type resets", "event: x\ndata: 1\n\ndata: 2\n\n", []ev{{Type: "x", Data: "1"}, {Data: "2"}}, nil},
		{"no data no event", "event: x\n\nid: 7\n\ndata: y\n\n", []ev{{Data: "y", ID: "7"}}, nil},
		{"id persists", "id: 1\ndata: a\n\ndata: b\n\n", []ev{{Data: "a", ID: "1", HasID: true}, {Data: "b", ID: "1"}}, nil},
		{"empty id resets", "id: 1\ndata: a\n\nid\ndata: b\n\n", []ev{{Data: "a", ID: "1", HasID: true}, {Data: "b", ID: "", HasID: true}}, nil},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []ev{{Data: "a", ID: "1", HasID: true}, {Data: "b", ID: "1"}}, nil},
		{"retry", "retry: 1500\ndata: a\n\n", []ev{{Data: "a", Retry: 1500 * time.Millisecond}}, nil},
		{"bad retry ignored", "retry: 1.5\ndata: a\n\nretry: -1\ndata: b\n\n", []ev{{Data: "a"}, {Data: "b"}}, nil},
		{"comments", ": keepalive\n\ndata: a\n:stream closed\n\n", []ev{{Data: "a"}}, []string{"keepalive", "stream closed"}},
		{"unknown field", "foo: bar\ndata: a\n\n", []ev{{Data: "a"}}, nil},
		{"partial event at EOF dropped", "data: a\n\ndata: b\n", []ev{{Data: "a"}}, nil},
		{"partial line at EOF dropped", "data: a\n\ndata: b", []ev{{Data: "a"}}, nil},
		{"colon in value", "data: {\"a\": 1}\n\n", []ev{{Data: `{"a": 1}`}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, mode := range []string{"whole", "bytes"} {
				var r io.Reader = strings.NewReader(tt.in)
				if mode == "bytes" {
					r = iotest.OneByteReader(r)
				}
				got, comments, err := readAll(r, 0)
				if err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: events\n got %+v\nwant %+v", mode, got, tt.want)
				}
				if !reflect.DeepEqual(comments, tt.comments) {
					t.Errorf("%s: comments %q, want %q", mode, comments, tt.comments)
				}
			}
		})
	}
}

// TestSSECapturesAnyChunking feeds every captured stream whole, byte by
// byte, in random chunk sizes and with its line endings rewritten to CRLF
// and CR: the events must always be the same.
func TestSSECapturesAnyChunking(t *testing.T) {
	t.Parallel()
	for _, name := range sseCaptures(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := captureBody(t, name)
			want, _, err := readAll(bytes.NewReader(body), 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatal("no events in capture")
			}
			check := func(what string, r io.Reader) {
				t.Helper()
				got, _, err := readAll(r, 0)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: %d events differ from the whole-stream parse (%d)", what, len(got), len(want))
				}
			}
			check("byte by byte", iotest.OneByteReader(bytes.NewReader(body)))
			rng := rand.New(rand.NewPCG(uint64(len(body)), 42))
			for i := 0; i < 20; i++ {
				sizes := make([]int, 1+rng.IntN(8))
				for j := range sizes {
					sizes[j] = 1 + rng.IntN(64)
				}
				check("random chunks", &chunkReader{data: body, sizes: sizes})
			}
			check("data-err reader", iotest.DataErrReader(bytes.NewReader(body)))
			crlf := bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))
			check("CRLF", &chunkReader{data: crlf, sizes: []int{1, 2, 3, 5, 7}})
			cr := bytes.ReplaceAll(body, []byte("\n"), []byte("\r"))
			check("CR", &chunkReader{data: cr, sizes: []int{3, 1, 4, 1, 5}})
			bom := append([]byte("\xEF\xBB\xBF"), body...)
			check("BOM", iotest.OneByteReader(bytes.NewReader(bom)))
		})
	}
}

func TestSSEChunkedWireCapture(t *testing.T) {
	t.Parallel()
	// 18_... kept the HTTP chunk framing, which captureBody removes.
	body := captureBody(t, "18_approval_once.wire_chunked.raw.txt")
	evs, comments, err := readAll(bytes.NewReader(body), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 15 || comments[len(comments)-1] != "stream closed" {
		t.Fatalf("got %d events, comments %q", len(evs), comments)
	}
}

func TestSSEMaxEventSize(t *testing.T) {
	t.Parallel()
	big := "data: " + strings.Repeat("x", 200) + "\n\n"
	tests := []struct {
		name   string
		in     io.Reader
		max    int
		before int // events delivered before the error
	}{
		{"one big event", strings.NewReader("data: ok\n\n" + big), 100, 1},
		{"many small data lines", strings.NewReader("data: ok\n\n" + strings.Repeat("data: 0123456789\n", 20) + "\n"), 100, 1},
		{"endless line", io.MultiReader(strings.NewReader("data: ok\n\ndata: "), endless{}), 4096, 1},
		{"endless comment", io.MultiReader(strings.NewReader(":"), endless{}), 4096, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			evs, _, err := readAll(tt.in, tt.max)
			if !errors.Is(err, apiserver.ErrEventTooLarge) {
				t.Fatalf("err = %v, want ErrEventTooLarge", err)
			}
			if len(evs) != tt.before {
				t.Fatalf("%d events before the error, want %d", len(evs), tt.before)
			}
			if !strings.Contains(err.Error(), "bytes") {
				t.Errorf("error does not say the limit: %v", err)
			}
		})
	}
	// Endless comments between events are not one event: they never add up.
	keepalives := strings.Repeat(": keepalive\n\n", 1000) + "data: ok\n\n"
	evs, _, err := readAll(strings.NewReader(keepalives), 64)
	if err != nil || len(evs) != 1 {
		t.Fatalf("keepalives: %d events, %v", len(evs), err)
	}
}

// endless yields 'a' forever.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

func TestSSEReadErrorAfterEvents(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	sr := apiserver.NewSSEReader(r, 0)
	ev, err := sr.Next()
	if err != nil || ev.Data != "a" {
		t.Fatalf("first: %+v %v", ev, err)
	}
	if _, err := sr.Next(); !errors.Is(err, boom) {
		t.Fatalf("second: %v, want %v", err, boom)
	}
	if !sr.Partial() {
		t.Error("Partial() = false after a cut mid-event")
	}
	if _, err := sr.Next(); !errors.Is(err, boom) {
		t.Fatalf("error is not sticky: %v", err)
	}
}
