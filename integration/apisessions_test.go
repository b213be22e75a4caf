package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermespeer"
)

// TestAPISessionsOnRealServer is issue 27's acceptance against the real
// API servers (0.19.0, and 0.18.2, whose session routes are the same
// code): Herald lists the stored sessions by name, continues one through
// its chat stream (`herald ask` directly, and through the running Herald
// as the window's quick prompt does), shows the streamed reply, says
// plainly that the stream's dangerous command was refused without asking,
// and a stop of a turn on that stream says it cannot be done (these
// servers keep no handle on such a turn: checked, closing the stream does
// not stop it either), while the turn runs on to its end. Having learned
// that, the running Herald sends the next turns to the session as runs
// (POST /v1/runs with session_id and the session's messages): the
// dangerous command of such a turn reaches Herald as an approval under
// the session's name and is denied, `herald stop` stops a running one on
// the server (run.cancelled), and each turn's prompt and reply are stored
// in the session.
func TestAPISessionsOnRealServer(t *testing.T) {
	t.Parallel()
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := realAPI(t, v)
			a := apiTarget{base: p.Base, key: p.Secret}
			title := "Herald sessions " + v + " " + t.Name()
			code, created := a.do(t, "POST", "/api/sessions", p.Secret, map[string]any{"title": title})
			if code != 201 {
				t.Fatalf("create: %d %v", code, created)
			}
			sid, _ := created["session"].(map[string]any)["id"].(string)
			h := newHerald(t)

			// Listed by name.
			out := h.mustRunRaw("sessions", "--api", p.Base, "--api-key", p.Secret)
			if !strings.Contains(out, title+"  (0 messages") || !strings.Contains(out, "id "+sid) {
				t.Fatalf("sessions printed %q", out)
			}

			// Continued directly: the streamed reply, under the session.
			out = h.mustRunRaw("ask", "--api", p.Base, "--api-key", p.Secret, "--session", sid, "hello there")
			if !strings.Contains(out, ", in session "+sid+")") || !strings.Contains(out, "stub answer: hello there") {
				t.Fatalf("ask printed %q", out)
			}
			// The dangerous command: refused by Hermes without asking, and
			// Herald says so in words.
			out = h.mustRunRaw("ask", "--api", p.Base, "--api-key", p.Secret, "--session", sid, "approve-me: git reset --hard HEAD")
			if !strings.Contains(out, "pending: git reset --hard HEAD") ||
				!strings.Contains(out, "note: This API server cannot ask for your approval in a turn sent to a session, nor stop one: Hermes refuses a dangerous command in such a turn without asking") {
				t.Fatalf("ask printed %q", out)
			}

			// Through the running Herald, as the quick prompt sends it.
			w := h.watch(nil, "--api", "api="+p.Base, "--api-key", p.Secret)
			w.Connected(0)
			out = h.mustRun("sessions", "--json")
			var listed struct {
				Sessions []struct {
					ID, Name     string
					MessageCount int `json:"message_count"`
				} `json:"sessions"`
			}
			if err := json.Unmarshal([]byte(out), &listed); err != nil {
				t.Fatalf("sessions --json printed %q: %v", out, err)
			}
			found := false
			for _, s := range listed.Sessions {
				found = found || s.ID == sid && s.Name == title && s.MessageCount == 4
			}
			if !found {
				t.Fatalf("the running Herald lists %+v", listed.Sessions)
			}
			run := h.ask("--gateway", "api", "--session", sid, "slow 6")
			w.Wait(0, "the turn's reply streaming", func(m map[string]any) bool {
				return m["type"] == "event" && str(m, "event", "session") == run && strings.Contains(fmtRec(m), "tick 1/6")
			})
			out, e, code := h.run("stop", "--gateway", "api", run)
			if code == 0 || !strings.Contains(e, "cannot stop a turn sent to a session") {
				t.Fatalf("stop: exit %d %q %q", code, out, e)
			}
			end := w.Wait(0, "the turn's end", func(m map[string]any) bool {
				return m["type"] == "event" && str(m, "event", "session") == run && str(m, "event", "kind") == "run.completed"
			})
			if !strings.Contains(fmtRec(end), "slow done after 6 steps") {
				t.Fatalf("the turn ended %s", fmtRec(end))
			}

			// The stream cannot ask or stop here: the next turns go as
			// runs continuing the session.
			mark := w.Mark()
			run = h.ask("--gateway", "api", "--session", sid, "approve-me: git reset --hard HEAD")
			r := w.Approval(mark, "arrived", func(m map[string]any) bool { return str(m, "request", "session") == run })
			if cmd, stored, name := str(r, "request", "command"), str(r, "request", "stored_session"), str(r, "request", "session_title"); cmd != "git reset --hard HEAD" || stored != sid || name != title {
				t.Fatalf("approval shows %q in %q named %q", cmd, stored, name)
			}
			if out := h.mustRun("approve", str(r, "id"), "deny"); !strings.Contains(out, "confirmed") {
				t.Fatalf("deny printed %q", out)
			}
			end = w.Wait(mark, "the denied turn's end", func(m map[string]any) bool {
				return m["type"] == "event" && str(m, "event", "session") == run && str(m, "event", "kind") == "run.completed"
			})
			if !strings.Contains(fmtRec(end), "blocked: git reset --hard HEAD") {
				t.Fatalf("the denied turn ended %s", fmtRec(end))
			}

			mark = w.Mark()
			run = h.ask("--gateway", "api", "--session", sid, "slow 6")
			w.Wait(mark, "the run turn's reply streaming", func(m map[string]any) bool {
				return m["type"] == "event" && str(m, "event", "session") == run && strings.Contains(fmtRec(m), "tick 1/6")
			})
			if out, e, code := h.run("stop", "--gateway", "api", run); code != 0 || !strings.Contains(out, "run stopped (confirmed by the API server)") {
				t.Fatalf("stop of a run turn: exit %d %q %q", code, out, e)
			}
			end = w.Wait(mark, "the stopped turn's end", func(m map[string]any) bool {
				return m["type"] == "event" && str(m, "event", "session") == run && wireRunEnd(str(m, "event", "kind"))
			})
			if k := str(end, "event", "kind"); k != "run.cancelled" || strings.Contains(fmtRec(end), "slow done") {
				t.Fatalf("the stopped turn ended %s", fmtRec(end))
			}
			if code, st := a.do(t, "GET", "/v1/runs/"+run, p.Secret, nil); code != 200 || st["status"] != "cancelled" || st["session_id"] != sid {
				t.Fatalf("the server says %d %v", code, st)
			}

			// Both run turns are stored in the session: 4 messages from the
			// direct asks, 2 from the stream turn, 2 from each run turn.
			code, msgs := a.do(t, "GET", "/api/sessions/"+sid+"/messages", p.Secret, nil)
			var got []string
			for _, x := range msgs["data"].([]any) {
				m := x.(map[string]any)
				c, _ := m["content"].(string)
				got = append(got, fmt.Sprint(m["role"])+": "+strings.SplitN(c, "\n", 2)[0])
			}
			if code != 200 || len(got) != 10 || got[6] != "user: approve-me: git reset --hard HEAD" || got[7] != "assistant: blocked: git reset --hard HEAD" || got[8] != "user: slow 6" {
				t.Fatalf("the session holds %d %q", code, got)
			}
		})
	}
}

// wireRunEnd reports whether kind ends a run.
func wireRunEnd(kind string) bool {
	return kind == "run.completed" || kind == "run.failed" || kind == "run.cancelled"
}

// mustRunRaw runs herald with exactly args (no --control), failing the
// test on a non-zero exit.
func (h *herald) mustRunRaw(args ...string) string {
	h.t.Helper()
	out, e, code := h.runRaw(nil, "", args...)
	if code != 0 {
		h.t.Fatalf("herald %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, e)
	}
	return out
}

// The session scenario of TestConformanceAPIServer: the fake's session
// routes and chat stream (apiservertest's SessionStreamLegacy) against
// the real ones: the create and list answers' keys, the stream's events
// in order with their keys (assistant.delta runs collapsed), and what
// /v1/runs says of the turn's run (status, stop, approval: 404 there).
func init() {
	apiScenarios = append(apiScenarios, struct {
		name string
		run  func(t *testing.T, a apiTarget) []string
	}{"session", func(t *testing.T, a apiTarget) []string {
		code, created := a.do(t, "POST", "/api/sessions", a.key, map[string]any{"title": "conformance " + t.Name()})
		tr := []string{fmt.Sprintf("create %d keys %v", code, sortedKeys(created))}
		s, _ := created["session"].(map[string]any)
		tr = append(tr, fmt.Sprintf("session keys %v", sortedKeys(s)))
		sid, _ := s["id"].(string)
		frames := a.chat(t, sid, "approve-me: "+dangerous)
		var run string
		for _, f := range frames {
			if r, ok := f.data["run_id"].(string); ok && run == "" {
				run = r
			}
			l := fmt.Sprintf("event %s {%s}", f.event, strings.Join(sortedKeys(f.data), " "))
			if n := len(tr); n > 0 && f.event == "assistant.delta" && tr[n-1] == l {
				continue
			}
			tr = append(tr, l)
		}
		code, m := a.do(t, "GET", "/v1/runs/"+run, a.key, nil)
		tr = append(tr, apiReply("status of the turn's run", code, m))
		code, m = a.do(t, "POST", "/v1/runs/"+run+"/stop", a.key, nil)
		tr = append(tr, apiReply("stop of the turn's run", code, m))
		code, m = a.do(t, "GET", "/api/sessions?limit=200", a.key, nil)
		for _, x := range m["data"].([]any) {
			if row := x.(map[string]any); row["id"] == sid {
				tr = append(tr, fmt.Sprintf("listed %d keys %v messages %v", code, sortedKeys(row), row["message_count"]))
			}
		}
		code, m = a.do(t, "GET", "/api/sessions/nosuch/messages", a.key, nil)
		return append(tr, apiReply("messages of an unknown session", code, m))
	}})
}

func sortedKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

type chatFrame struct {
	event string
	data  map[string]any
}

// chat sends message to a session's chat stream and reads it to its end.
func (a apiTarget) chat(t *testing.T, session, message string) []chatFrame {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"message": message})
	req, _ := http.NewRequest("POST", a.base+"/api/sessions/"+session+"/chat/stream", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("chat stream: %d", resp.StatusCode)
	}
	var out []chatFrame
	var cur chatFrame
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "event: "):
			cur.event = l[7:]
		case strings.HasPrefix(l, "data: "):
			_ = json.Unmarshal([]byte(l[6:]), &cur.data)
		case l == "" && cur.event != "":
			out = append(out, cur)
			cur = chatFrame{}
		}
	}
	return out
}

// The session-run scenario of TestConformanceAPIServer: a stored session
// continued as a run (POST /v1/runs with session_id and the session's
// messages as conversation_history), on the fake and the real servers:
// the run's events, what its status says of the session, the session's
// messages afterwards (the turn stored in it), and the answers to a
// malformed history.
func init() {
	apiScenarios = append(apiScenarios, struct {
		name string
		run  func(t *testing.T, a apiTarget) []string
	}{"session-run", func(t *testing.T, a apiTarget) []string {
		_, created := a.do(t, "POST", "/api/sessions", a.key, map[string]any{"title": "session run " + t.Name()})
		sid, _ := created["session"].(map[string]any)["id"].(string)
		a.chat(t, sid, "hello one")
		_, msgs := a.do(t, "GET", "/api/sessions/"+sid+"/messages", a.key, nil)
		var hist []map[string]any
		for _, x := range msgs["data"].([]any) {
			m := x.(map[string]any)
			hist = append(hist, map[string]any{"role": m["role"], "content": m["content"]})
		}
		code, m := a.do(t, "POST", "/v1/runs", a.key, map[string]any{"input": "hello two", "session_id": sid, "conversation_history": hist})
		tr := []string{fmt.Sprintf("start %d keys %v history %d", code, sortedKeys(m), len(hist))}
		id, _ := m["run_id"].(string)
		s := a.events(t, id)
		end := s.wait(t, "run.completed")
		tr = append(tr, s.transcript()...)
		tr = append(tr, fmt.Sprintf("output %v", end["output"]))
		code, st := a.do(t, "GET", "/v1/runs/"+id, a.key, nil)
		tr = append(tr, fmt.Sprintf("status %d %v session is the stored one %v", code, st["status"], st["session_id"] == sid))
		_, msgs = a.do(t, "GET", "/api/sessions/"+sid+"/messages", a.key, nil)
		for _, x := range msgs["data"].([]any) {
			m := x.(map[string]any)
			tr = append(tr, fmt.Sprintf("stored %v: %v", m["role"], m["content"]))
		}
		code, m = a.do(t, "POST", "/v1/runs", a.key, map[string]any{"input": "x", "session_id": sid, "conversation_history": []any{map[string]any{"role": "user"}}})
		tr = append(tr, apiReply("history entry without content", code, m))
		code, m = a.do(t, "POST", "/v1/runs", a.key, map[string]any{"input": "x", "session_id": sid, "conversation_history": "not a list"})
		return append(tr, apiReply("history not a list", code, m))
	}})
}
