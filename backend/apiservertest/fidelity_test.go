package apiservertest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/testwait"
)

// The captures in testdata come from a real Hermes 0.18.2 API server
// (shared/hermes-wire/api-server). These tests hold the fake to them.

const guard = 20 * time.Second

var epoch = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

var runIDRE = regexp.MustCompile(`run_[0-9a-f]{32}`)

// frame is one parsed SSE frame of a stream.
type frame struct {
	id      string
	data    string
	comment string
}

// keys returns the top-level keys of a JSON object, in order.
func keys(t testing.TB, data string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %q", data)
	}
	var out []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func fields(t testing.TB, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	return m
}

// readFrames parses an SSE body into frames (LF line endings, as Hermes).
func readFrames(r io.Reader) ([]frame, error) { return readFramesTo(r, nil) }

// readFramesTo parses frames, also sending each to ch when ch is not nil.
func readFramesTo(r io.Reader, ch chan<- frame) ([]frame, error) {
	br := bufio.NewReader(r)
	var out []frame
	var cur frame
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return out, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if cur != (frame{}) {
				out = append(out, cur)
				if ch != nil {
					ch <- cur
				}
			}
			cur = frame{}
		case strings.HasPrefix(line, ":"):
			cur.comment = strings.TrimSpace(line[1:])
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		case strings.HasPrefix(line, "retry: "):
			cur.comment = "retry " + line[7:]
		}
	}
}

// captureFrames reads the frames of a captured stream.
func captureFrames(t testing.TB, name string) []frame {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	fr, err := readFrames(bytes.NewReader(body))
	if err != io.EOF {
		t.Fatalf("%s: %v", name, err)
	}
	return fr
}

// captureBodies returns the JSON bodies of a multi-request capture, by the
// "### ..." heading that precedes each.
func captureBodies(t testing.TB, name string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var head string
	for _, line := range strings.Split(strings.ReplaceAll(string(raw), "\r", ""), "\n") {
		switch {
		case strings.HasPrefix(line, "### "):
			head = strings.TrimSpace(line[4:])
		case strings.HasPrefix(line, "{") && head != "":
			if _, dup := out[head]; !dup {
				out[head] = line
			}
		}
	}
	return out
}

type client struct {
	t   testing.TB
	srv *apiservertest.Server
}

func (c client) do(method, path, body string, hdr ...string) (int, http.Header, string) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.srv.URL+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.srv.Key())
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func (c client) start(input string) string {
	c.t.Helper()
	code, _, body := c.do("POST", "/v1/runs", `{"input": "`+input+`"}`)
	if code != http.StatusAccepted {
		c.t.Fatalf("start: %d %s", code, body)
	}
	return fields(c.t, body)["run_id"].(string)
}

// stream opens a run's event stream; frames arrive on the channel, which
// closes when the stream ends.
func (c client) stream(run string, hdr ...string) (<-chan frame, func()) {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.srv.URL+"/v1/runs/"+run+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+c.srv.Key())
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		c.t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := make(chan frame, 256)
	go func() {
		defer close(ch)
		_, _ = readFramesTo(resp.Body, ch)
	}()
	return ch, func() { resp.Body.Close() }
}

// next returns the next frame that carries data, skipping comments.
func next(t testing.TB, ch <-chan frame) frame {
	t.Helper()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for {
		select {
		case f, ok := <-ch:
			if !ok {
				t.Fatal("stream ended")
			}
			if f.data != "" {
				return f
			}
		case <-timer.C:
			t.Fatal("no frame")
		}
	}
}

// rest collects frames until the stream ends.
func rest(t testing.TB, ch <-chan frame) []frame {
	t.Helper()
	var out []frame
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for {
		select {
		case f, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, f)
		case <-timer.C:
			t.Fatal("stream did not end")
		}
	}
}

// sameShape compares a fake stream with a captured one: event names, key
// order and the text fields, ignoring run ids, timestamps and durations.
func sameShape(t *testing.T, got, want []frame) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d frames, capture has %d", len(got), len(want))
	}
	for i := range want {
		if (want[i].data == "") != (got[i].data == "") || want[i].comment != got[i].comment {
			t.Fatalf("frame %d: %+v, capture %+v", i, got[i], want[i])
		}
		if want[i].data == "" {
			continue
		}
		if g, w := keys(t, got[i].data), keys(t, want[i].data); !reflect.DeepEqual(g, w) {
			t.Fatalf("frame %d keys %v, capture %v", i, g, w)
		}
		g, w := fields(t, got[i].data), fields(t, want[i].data)
		for _, k := range []string{"event", "delta", "tool", "preview", "command", "description", "pattern_key", "pattern_keys", "allow_permanent", "choices", "choice", "resolved", "error", "output", "usage"} {
			if !reflect.DeepEqual(g[k], w[k]) {
				t.Fatalf("frame %d %s = %v, capture %v", i, k, g[k], w[k])
			}
		}
	}
}

func TestFakeApproveOnceMatchesCapture(t *testing.T) {
	t.Parallel()
	srv := apiservertest.NewServer(apiservertest.Options{})
	defer srv.Close()
	c := client{t, srv}
	bodies := captureBodies(t, "10_approval_once.txt")
	run := c.start("approve-me: git reset --hard HEAD")
	ch, closeStream := c.stream(run)
	defer closeStream()
	var frames []frame
	for {
		f := next(t, ch)
		frames = append(frames, f)
		if fields(t, f.data)["event"] == "approval.request" {
			break
		}
	}
	_, _, st := c.do("GET", "/v1/runs/"+run, "")
	if m := fields(t, st); m["status"] != "waiting_for_approval" || m["last_event"] != "approval.request" || m["session_id"] != run {
		t.Errorf("status %s", st)
	}
	fix := func(s string) string { return runIDRE.ReplaceAllString(s, run) }
	code, _, body := c.do("POST", "/v1/runs/"+run+"/approval", `{"choice":"maybe"}`)
	if want := fix(bodies[`POST /v1/runs/run_adeb66edf855468085f677bf4e83cde7/approval {"choice":"maybe"}`]); code != 400 || body != want {
		t.Errorf("bad choice: %d %s\nwant %s", code, body, want)
	}
	code, _, body = c.do("POST", "/v1/runs/"+run+"/approval", `{"choice":"once"}`)
	if want := fix(bodies[`POST /v1/runs/run_adeb66edf855468085f677bf4e83cde7/approval {"choice":"once"}`]); code != 200 || body != want {
		t.Errorf("once: %d %s\nwant %s", code, body, want)
	}
	frames = append(frames, rest(t, ch)...)
	sameShape(t, withoutKeepalives(frames), withoutKeepalives(captureFrames(t, "10_approval_once.sse.raw.txt")))

	_, _, st = c.do("GET", "/v1/runs/"+run, "")
	if g, w := keys(t, st), keys(t, bodies["GET /v1/runs/run_adeb66edf855468085f677bf4e83cde7"]); len(g) < 8 || g[0] != w[0] {
		t.Errorf("status keys %v vs %v", g, w)
	}
	if m := fields(t, st); m["status"] != "completed" || !strings.HasPrefix(m["output"].(string), "approved: git reset --hard HEAD\nguard=") {
		t.Errorf("final status %s", st)
	}
	code, _, body = c.do("POST", "/v1/runs/"+run+"/approval", `{"choice":"once"}`)
	if code != 409 || !strings.Contains(body, `"code": "approval_not_active"`) {
		t.Errorf("after completion: %d %s", code, body)
	}
	code, _, body = c.do("GET", "/v1/runs/"+run+"/events", "")
	if want := fix(bodies["GET /v1/runs/run_adeb66edf855468085f677bf4e83cde7/events again after the stream closed"]); code != 404 || body != want {
		t.Errorf("resubscribe: %d %s\nwant %s", code, body, want)
	}
	if got := srv.Approvals(); len(got) != 3 || got[1].Choice != "once" || got[1].Resolved != 1 || got[0].Code != "invalid_approval_choice" || got[2].Code != "approval_not_active" {
		t.Errorf("recorded %+v", got)
	}
}

func withoutKeepalives(fr []frame) []frame {
	var out []frame
	for _, f := range fr {
		if f.comment != "keepalive" {
			out = append(out, f)
		}
	}
	return out
}

func TestFakeScriptsMatchCaptures(t *testing.T) {
	t.Parallel()
	t.Run("hello there", func(t *testing.T) {
		t.Parallel()
		srv := apiservertest.NewServer(apiservertest.Options{})
		defer srv.Close()
		c := client{t, srv}
		run := c.start("hello there")
		ch, done := c.stream(run)
		defer done()
		sameShape(t, rest(t, ch), captureFrames(t, "16_input_hello_there.sse.raw.txt"))
	})
	t.Run("stop during approval", func(t *testing.T) {
		t.Parallel()
		srv := apiservertest.NewServer(apiservertest.Options{})
		defer srv.Close()
		c := client{t, srv}
		run := c.start("approve-me: git reset --hard HEAD")
		ch, done := c.stream(run)
		defer done()
		var frames []frame
		for len(frames) < 7 {
			frames = append(frames, next(t, ch))
		}
		code, _, body := c.do("POST", "/v1/runs/"+run+"/stop", "")
		if code != 200 || body != `{"run_id": "`+run+`", "status": "stopping"}` {
			t.Fatalf("stop: %d %s", code, body)
		}
		frames = append(frames, rest(t, ch)...)
		sameShape(t, frames, captureFrames(t, "15_stop_during_approval.sse.raw.txt"))
		code, _, body = c.do("POST", "/v1/runs/"+run+"/stop", "")
		if code != 404 || !strings.Contains(body, "run_not_found") {
			t.Errorf("second stop: %d %s", code, body)
		}
	})
	t.Run("always then auto-approved", func(t *testing.T) {
		t.Parallel()
		srv := apiservertest.NewServer(apiservertest.Options{})
		defer srv.Close()
		c := client{t, srv}
		run := c.start("approve-me: git reset --hard HEAD")
		ch, done := c.stream(run)
		defer done()
		for fields(t, next(t, ch).data)["event"] != "approval.request" {
		}
		if code, _, _ := c.do("POST", "/v1/runs/"+run+"/approval", `{"choice":"always"}`); code != 200 {
			t.Fatal(code)
		}
		rest(t, ch)
		run2 := c.start("approve-me: git reset --hard HEAD")
		ch2, done2 := c.stream(run2)
		defer done2()
		sameShape(t, rest(t, ch2), captureFrames(t, "30_approval_always.2.sse.raw.txt"))
	})
	t.Run("approval timeout", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(epoch)
		srv := apiservertest.NewServer(apiservertest.Options{Clock: clk, ApprovalTimeout: 3 * time.Second, Keepalive: -1})
		defer srv.Close()
		c := client{t, srv}
		run := c.start("approve-me: git reset --hard HEAD")
		ch, done := c.stream(run)
		defer done()
		var frames []frame
		for len(frames) < 7 {
			frames = append(frames, next(t, ch))
		}
		clk.BlockUntil(1)
		clk.Advance(3 * time.Second)
		frames = append(frames, rest(t, ch)...)
		want := captureFrames(t, "34_approval_timeout_3s_weakkey.sse.raw.txt")
		sameShape(t, frames, want)
		if d := fields(t, frames[7].data)["duration"]; d != 3.0 {
			t.Errorf("duration %v", d)
		}
	})
}

func TestFakeRefusalsMatchCaptures(t *testing.T) {
	t.Parallel()
	srv := apiservertest.NewServer(apiservertest.Options{})
	defer srv.Close()
	c := client{t, srv}
	wrongKey := captureBodies(t, "03_wrong_key_401.txt")
	for head, want := range wrongKey {
		f := strings.Fields(head) // "POST /v1/runs with no Authorization"
		req, _ := http.NewRequest(f[0], srv.URL+f[1], strings.NewReader("{}"))
		if strings.Contains(head, "wrong-key") {
			req.Header.Set("Authorization", "Bearer wrong-key")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || string(b) != want {
			t.Errorf("%s: %d %s\nwant %s", head, resp.StatusCode, b, want)
		}
	}
	bad := captureBodies(t, "17_runs_400.txt")
	for _, tc := range []struct{ method, path, body, head string }{
		{"POST", "/v1/runs", `{"model":"x"}`, `POST /v1/runs {"model":"x"}`},
		{"POST", "/v1/runs", `nope`, `POST /v1/runs nope`},
		{"GET", "/v1/runs/run_doesnotexist", "", `GET /v1/runs/run_doesnotexist`},
		{"GET", "/v1/runs/run_doesnotexist/events", "", `GET /v1/runs/run_doesnotexist/events`},
	} {
		_, _, body := c.do(tc.method, tc.path, tc.body)
		if body != bad[tc.head] {
			t.Errorf("%s: %s\nwant %s", tc.head, body, bad[tc.head])
		}
	}
	// Any Origin: a bare 403 before authentication.
	code, h, body := c.do("GET", "/v1/capabilities", "", "Origin", "http://localhost:3000")
	if code != 403 || body != "" || h.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("origin: %d %q %q", code, body, h.Get("Content-Type"))
	}
	if !srv.OriginSeen() {
		t.Error("OriginSeen missed it")
	}
	_, _, body = c.do("GET", "/v1/capabilities", "")
	raw, _ := os.ReadFile(filepath.Join("testdata", "02_capabilities.txt"))
	if !strings.HasSuffix(string(raw), body) {
		t.Errorf("capabilities differ from the capture")
	}
	if _, _, health := c.do("GET", "/health", ""); health != `{"status": "ok", "platform": "hermes-agent", "version": "0.18.2"}` {
		t.Errorf("health %s", health)
	}
}

func TestFakeSingleConsumer(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	srv := apiservertest.NewServer(apiservertest.Options{Clock: clk, StepDelay: 500 * time.Millisecond, Keepalive: -1})
	defer srv.Close()
	c := client{t, srv}
	run := c.start("slow 8")
	ch, closeStream := c.stream(run)
	if f := next(t, ch); fields(t, f.data)["delta"] != "tick 1/8 " || f.id != "" {
		t.Fatalf("first frame %+v", f)
	}
	closeStream() // like curl --max-time in capture 19b
	waitServer(t, srv, "the reader to go", func() bool { ri, _ := srv.Run(run); return ri.Gone })
	code, _, body := c.do("GET", "/v1/runs/"+run+"/events", "")
	if code != 404 || !strings.Contains(body, "run_not_found") {
		t.Errorf("resubscribe: %d %s", code, body)
	}
	_, _, st := c.do("GET", "/v1/runs/"+run, "")
	if fields(t, st)["status"] != "running" {
		t.Errorf("status %s", st)
	}
}

func TestFakeLastEventID(t *testing.T) {
	t.Parallel()
	srv := apiservertest.NewServer(apiservertest.Options{Dialect: apiservertest.LastEventID})
	defer srv.Close()
	c := client{t, srv}
	run := c.start("approve-me: rm -rf ./build")
	ch, done := c.stream(run)
	defer done()
	var first []frame
	for len(first) < 7 {
		first = append(first, next(t, ch))
	}
	ap := fields(t, first[6].data)
	if ap["request_id"] == nil || first[6].id != "7" {
		t.Fatalf("approval frame %+v", first[6])
	}
	_, _, st := c.do("GET", "/v1/runs/"+run, "")
	if m := fields(t, st); m["approval"] == nil {
		t.Errorf("status without the pending approval: %s", st)
	}
	code, _, body := c.do("POST", "/v1/runs/"+run+"/approval", `{"choice":"once","request_id":"nope"}`)
	if code != 409 || !strings.Contains(body, "approval_not_pending") {
		t.Errorf("wrong request id: %d %s", code, body)
	}
	code, _, body = c.do("POST", "/v1/runs/"+run+"/approval", `{"choice":"once","request_id":"`+ap["request_id"].(string)+`"}`)
	if code != 200 || !strings.Contains(body, `"request_id"`) {
		t.Fatalf("answer: %d %s", code, body)
	}
	all := append(first, rest(t, ch)...)
	// A second reader resuming from id 3 gets exactly the events after it.
	ch2, done2 := c.stream(run, "Last-Event-ID", "3")
	defer done2()
	resumed := rest(t, ch2)
	var want []frame
	for _, f := range all {
		if n, _ := strconv.Atoi(f.id); f.data != "" && n > 3 {
			want = append(want, f)
		}
	}
	var got []frame
	for _, f := range resumed {
		if f.data != "" {
			got = append(got, f)
		}
	}
	if len(want) < 10 || !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed\n%+v\nwant\n%+v", got, want)
	}
	if resumed[0].comment != "retry 1000" || resumed[len(resumed)-1].comment != "stream closed" {
		t.Errorf("stream framing %+v ... %+v", resumed[0], resumed[len(resumed)-1])
	}
	code, _, body = c.do("POST", "/v1/runs/"+run+"/stop", "")
	if code != 200 || fields(t, body)["status"] != "completed" {
		t.Errorf("stop after the end: %d %s", code, body)
	}
}

func TestFakeFaults(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	srv := apiservertest.NewServer(apiservertest.Options{Clock: clk, Keepalive: -1})
	defer srv.Close()
	c := client{t, srv}
	srv.SetFaults(apiservertest.Faults{Path: "POST /v1/runs", RateLimited: 1, Unavailable: 1})
	code, h, body := c.do("POST", "/v1/runs", `{"input": "hi"}`)
	if code != 429 || h.Get("Retry-After") != "1" || !strings.Contains(body, "rate_limit_exceeded") {
		t.Errorf("429: %d %v %s", code, h, body)
	}
	code, h, body = c.do("POST", "/v1/runs", `{"input": "hi"}`)
	if code != 503 || h.Get("Retry-After") != "1" {
		t.Errorf("503: %d %v %s", code, h, body)
	}
	if code, _, _ := c.do("GET", "/v1/capabilities", ""); code != 200 {
		t.Errorf("a fault leaked past its path: %d", code)
	}
	srv.SetFaults(apiservertest.Faults{Path: "GET /v1/capabilities", Delay: 5 * time.Second})
	got := make(chan int)
	go func() { code, _, _ := c.do("GET", "/v1/capabilities", ""); got <- code }()
	clk.BlockUntil(1)
	select {
	case <-got:
		t.Fatal("answered before the delay")
	default:
	}
	clk.Advance(5 * time.Second)
	if code := <-got; code != 200 {
		t.Errorf("after delay: %d", code)
	}
	srv.SetFaults(apiservertest.Faults{RejectKey: true})
	if code, _, _ := c.do("GET", "/v1/capabilities", ""); code != 401 {
		t.Errorf("RejectKey: %d", code)
	}
	if code, _, _ := c.do("GET", "/health", ""); code != 200 {
		t.Errorf("health needs no key: %d", code)
	}
}

func waitServer(t testing.TB, srv *apiservertest.Server, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, guard, what, srv.Changed, cond)
}
