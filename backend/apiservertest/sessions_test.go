package apiservertest_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
)

// sframe is one frame of a session chat stream: its event name and data.
type sframe struct{ event, data string }

func readSessionFrames(r io.Reader, ch chan<- sframe) []sframe {
	br := bufio.NewReader(r)
	var out []sframe
	var cur sframe
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return out
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if cur != (sframe{}) {
				out = append(out, cur)
				if ch != nil {
					ch <- cur
				}
			}
			cur = sframe{}
		case strings.HasPrefix(line, "event: "):
			cur.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
}

func sessionCapture(t *testing.T, name string) []sframe {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	return readSessionFrames(bytes.NewReader(body), nil)
}

// chat opens a session's chat stream; frames arrive on the channel,
// which closes when the stream ends.
func (c client) chat(session, message string) <-chan sframe {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.srv.URL+"/api/sessions/"+session+"/chat/stream", strings.NewReader(`{"message": "`+message+`"}`))
	req.Header.Set("Authorization", "Bearer "+c.srv.Key())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Hermes-Session-Id") != session {
		c.t.Fatalf("chat stream: %d %v", resp.StatusCode, resp.Header)
	}
	ch := make(chan sframe, 256)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		readSessionFrames(resp.Body, ch)
	}()
	return ch
}

func (c client) session(title string) string {
	c.t.Helper()
	code, _, body := c.do("POST", "/api/sessions", `{"title": "`+title+`"}`)
	if code != http.StatusCreated {
		c.t.Fatalf("create: %d %s", code, body)
	}
	return fields(c.t, body)["session"].(map[string]any)["id"].(string)
}

func nextFrame(t *testing.T, ch <-chan sframe) sframe {
	t.Helper()
	select {
	case f, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended")
		}
		return f
	case <-time.After(guard):
		t.Fatal("no frame")
	}
	return sframe{}
}

func until(t *testing.T, ch <-chan sframe, event string) sframe {
	t.Helper()
	for {
		if f := nextFrame(t, ch); f.event == event {
			return f
		}
	}
}

// The fake's session stream on 0.18.2/0.19.0 has the real one's frames:
// event names in order and each payload's keys in order (captures 24 and
// 25 of a real 0.18.2; 0.19.0's handler is the same).
func TestSessionStreamMatchesCaptures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ capture, message string }{
		{"24_session_chat_stream_approve.sse.raw.txt", "approve-me: git reset --hard HEAD"},
		{"25_session_chat_stream_tool.sse.raw.txt", "tool: read_file"},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			t.Parallel()
			srv := apiservertest.NewServer(apiservertest.Options{})
			defer srv.Close()
			c := client{t: t, srv: srv}
			id := c.session("capture")
			var got []sframe
			for f := range c.chat(id, tc.message) {
				got = append(got, f)
			}
			want := sessionCapture(t, tc.capture)
			if len(got) != len(want) {
				t.Fatalf("%d frames, the real server sent %d:\n%v", len(got), len(want), got)
			}
			for i := range want {
				if got[i].event != want[i].event || !reflect.DeepEqual(keys(t, got[i].data), keys(t, want[i].data)) {
					t.Errorf("frame %d: %s %v, real: %s %v", i, got[i].event, keys(t, got[i].data), want[i].event, keys(t, want[i].data))
				}
				g, w := fields(t, got[i].data), fields(t, want[i].data)
				if g["session_id"] != id || g["seq"] != float64(i+1) {
					t.Errorf("frame %d: session_id %v seq %v", i, g["session_id"], g["seq"])
				}
				for _, k := range []string{"tool_name", "preview", "delta", "content"} {
					if wv, ok := w[k]; ok && k != "content" && !reflect.DeepEqual(g[k], wv) {
						t.Errorf("frame %d %s: %v, real %v", i, k, g[k], wv)
					}
				}
			}
		})
	}
}

// On 0.18.2/0.19.0, /v1/runs does not know a session turn: status, stop
// and approval answer 404 run_not_found; a closed stream does not stop
// the turn; a dangerous command is refused without asking.
func TestSessionTurnLegacyUncontrolled(t *testing.T) {
	t.Parallel()
	srv := apiservertest.NewServer(apiservertest.Options{Clock: clock.NewFake(epoch), StepDelay: time.Second})
	defer srv.Close()
	c := client{t: t, srv: srv}
	id := c.session("legacy")
	ch := c.chat(id, "slow 3")
	run := fields(t, nextFrame(t, ch).data)["run_id"].(string)
	for _, p := range []string{"/v1/runs/" + run, "/v1/runs/" + run + "/stop", "/v1/runs/" + run + "/approval"} {
		method := "POST"
		if !strings.Contains(p, "/stop") && !strings.Contains(p, "/approval") {
			method = "GET"
		}
		if code, _, body := c.do(method, p, `{"choice": "deny"}`); code != 404 || !strings.Contains(body, "run_not_found") {
			t.Errorf("%s %s: %d %s", method, p, code, body)
		}
	}
	if si, _ := srv.Session(id); si.Active != run || len(si.Messages) != 1 {
		t.Errorf("session: %+v", si)
	}
}

// The session-stream dialect with approvals (PR #121769): the stream asks,
// the answer goes to /v1/runs/{run_id}/approval by request_id (a stale id
// is 409 approval_not_pending, an answer after the turn 409
// approval_not_active), no approval.responded reaches the stream, and
// stop ends the turn with run.cancelled then done.
func TestSessionStreamApprovals(t *testing.T) {
	t.Parallel()
	srv := apiservertest.NewServer(apiservertest.Options{SessionStream: apiservertest.SessionStreamApprovals})
	defer srv.Close()
	c := client{t: t, srv: srv}
	id := c.session("approvals")
	ch := c.chat(id, "approve-seq: git reset --hard HEAD || rm -rf ./build")
	a := fields(t, until(t, ch, "approval.request").data)
	run, rid := a["run_id"].(string), a["request_id"].(string)
	if a["command"] != "git reset --hard HEAD" || a["message_id"] == nil || a["session_id"] != id || rid == "" {
		t.Fatalf("approval.request: %v", a)
	}
	if code, _, body := c.do("GET", "/v1/runs/"+run, ""); code != 200 || fields(t, body)["status"] != "waiting_for_approval" || fields(t, body)["approval"] == nil {
		t.Fatalf("status: %d %s", code, body)
	}
	if code, _, body := c.do("POST", "/v1/runs/"+run+"/approval", `{"choice": "once", "request_id": "stale"}`); code != 409 || !strings.Contains(body, "approval_not_pending") {
		t.Fatalf("stale id: %d %s", code, body)
	}
	code, _, body := c.do("POST", "/v1/runs/"+run+"/approval", `{"choice": "once", "request_id": "`+rid+`"}`)
	if code != 200 || fields(t, body)["request_id"] != rid || fields(t, body)["resolved"] != float64(1) {
		t.Fatalf("answer: %d %s", code, body)
	}
	var names []string
	for f := nextFrame(t, ch); f.event != "approval.request"; f = nextFrame(t, ch) {
		names = append(names, f.event)
	}
	if strings.Contains(strings.Join(names, " "), "approval.responded") || names[0] != "tool.completed" {
		t.Errorf("after the answer: %v", names)
	}
	if code, _, body := c.do("POST", "/v1/runs/"+run+"/stop", `{}`); code != 200 || !strings.Contains(body, "stopping") {
		t.Fatalf("stop: %d %s", code, body)
	}
	until(t, ch, "run.cancelled")
	if f := nextFrame(t, ch); f.event != "done" {
		t.Errorf("after run.cancelled: %s", f.event)
	}
	if code, _, body := c.do("POST", "/v1/runs/"+run+"/approval", `{"choice": "deny"}`); code != 409 || !strings.Contains(body, "approval_not_active") {
		t.Errorf("after the turn: %d %s", code, body)
	}
}

// IgnoreRequestID is the endpoint of hermes-desktop#904: an answer by a
// stale id resolves the run's oldest approval and does not echo the id.
func TestIgnoreRequestID(t *testing.T) {
	t.Parallel()
	srv := apiservertest.NewServer(apiservertest.Options{SessionStream: apiservertest.SessionStreamApprovals, IgnoreRequestID: true})
	defer srv.Close()
	c := client{t: t, srv: srv}
	ch := c.chat(c.session("ignored"), "approve-me: rm -rf ./build")
	run := fields(t, until(t, ch, "approval.request").data)["run_id"].(string)
	code, _, body := c.do("POST", "/v1/runs/"+run+"/approval", `{"choice": "deny", "request_id": "not-this-one"}`)
	if code != 200 || fields(t, body)["request_id"] != nil || fields(t, body)["resolved"] != float64(1) {
		t.Fatalf("answer: %d %s", code, body)
	}
	if f := until(t, ch, "run.completed"); !strings.Contains(f.data, "blocked: rm -rf ./build") {
		t.Errorf("run.completed: %s", f.data)
	}
}

// GET /api/sessions lists the most recently active first, with the first
// user message as the preview, paginated.
func TestListSessions(t *testing.T) {
	t.Parallel()
	srv := apiservertest.NewServer(apiservertest.Options{})
	defer srv.Close()
	c := client{t: t, srv: srv}
	srv.AddSession("old", "Old one", "first question", "first answer")
	id := c.session("")
	for range c.chat(id, "hello there") {
	}
	code, _, body := c.do("GET", "/api/sessions?limit=1", "")
	l := fields(t, body)
	data := l["data"].([]any)
	if code != 200 || len(data) != 1 || l["has_more"] != true {
		t.Fatalf("list: %d %s", code, body)
	}
	s0 := data[0].(map[string]any)
	if s0["id"] != id || s0["preview"] != "hello there" || s0["message_count"] != float64(2) || s0["title"] != nil {
		t.Errorf("first: %v", s0)
	}
	_, _, body = c.do("GET", "/api/sessions?limit=1&offset=1", "")
	if s1 := fields(t, body)["data"].([]any)[0].(map[string]any); s1["id"] != "old" || s1["title"] != "Old one" || s1["preview"] != "first question" {
		t.Errorf("second: %v", s1)
	}
	if code, _, body := c.do("GET", "/api/sessions/nope/messages", ""); code != 404 || !strings.Contains(body, "session_not_found") {
		t.Errorf("unknown: %d %s", code, body)
	}
	_, _, body = c.do("GET", "/api/sessions/"+id+"/messages", "")
	if m := fields(t, body)["data"].([]any); len(m) != 2 || m[1].(map[string]any)["content"] != "stub answer: hello there" {
		t.Errorf("messages: %s", body)
	}
}
