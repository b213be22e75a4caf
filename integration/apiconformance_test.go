package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/hermespeer"
)

// Conformance of the fake API server (backend/apiservertest, 0.18.2
// dialect) against the real 0.18.2 and 0.19.0 API servers: HTTP status
// and error envelope per call, SSE events in order with their keys.

type apiTarget struct{ base, key string }

func (a apiTarget) do(t *testing.T, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, a.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	c := http.Client{Timeout: guard}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// reply renders a call's outcome: status, the error's type and code, or
// the result's keys.
func apiReply(what string, code int, m map[string]any) string {
	if e, ok := m["error"].(map[string]any); ok {
		return fmt.Sprintf("%s %d error type=%v code=%v", what, code, e["type"], e["code"])
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Sprintf("%s %d {%s}", what, code, strings.Join(keys, " "))
}

// sse reads a run's event stream in the background; transcript() returns
// "event NAME {keys}" lines (message.delta runs collapsed).
type sse struct {
	mu   sync.Mutex
	data []map[string]any
	wake chan struct{}
	done chan struct{}
}

func (a apiTarget) events(t *testing.T, run string) *sse {
	t.Helper()
	req, _ := http.NewRequest("GET", a.base+"/v1/runs/"+run+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+a.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := &sse{wake: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() { resp.Body.Close(); <-s.done })
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if !strings.HasPrefix(l, "data:") {
				continue
			}
			var m map[string]any
			if json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(l, "data:"))), &m) != nil {
				continue
			}
			s.mu.Lock()
			s.data = append(s.data, m)
			close(s.wake)
			s.wake = make(chan struct{})
			s.mu.Unlock()
		}
		s.mu.Lock()
		close(s.wake)
		s.wake = make(chan struct{})
		s.mu.Unlock()
	}()
	return s
}

// wait waits for an event named name.
func (s *sse) wait(t *testing.T, name string) map[string]any {
	t.Helper()
	deadline := time.After(guard)
	for i := 0; ; {
		s.mu.Lock()
		for ; i < len(s.data); i++ {
			if s.data[i]["event"] == name {
				m := s.data[i]
				s.mu.Unlock()
				return m
			}
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-s.done:
			t.Fatalf("stream ended before %s", name)
		case <-deadline:
			t.Fatalf("no %s within %s", name, guard)
		}
	}
}

func (s *sse) transcript() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.data {
		var keys []string
		for k := range m {
			if k != "event" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		l := fmt.Sprintf("event %v {%s}", m["event"], strings.Join(keys, " "))
		if n := len(out); n > 0 && m["event"] == "message.delta" && out[n-1] == l {
			continue
		}
		out = append(out, l)
	}
	return out
}

func (a apiTarget) start(t *testing.T, input string) string {
	t.Helper()
	code, m := a.do(t, "POST", "/v1/runs", a.key, map[string]any{"input": input})
	id, _ := m["run_id"].(string)
	if code != 202 || id == "" {
		t.Fatalf("POST /v1/runs: %d %v", code, m)
	}
	return id
}

var apiScenarios = []struct {
	name string
	run  func(t *testing.T, a apiTarget) []string
}{
	{"approve-once", func(t *testing.T, a apiTarget) []string { return apiApprove(t, a, "once") }},
	{"approve-deny", func(t *testing.T, a apiTarget) []string { return apiApprove(t, a, "deny") }},
	{"errors", func(t *testing.T, a apiTarget) []string {
		var tr []string
		code, m := a.do(t, "POST", "/v1/runs", "wrong-key-0123456789abcdef", map[string]any{"input": "x"})
		tr = append(tr, apiReply("wrong key", code, m))
		code, m = a.do(t, "POST", "/v1/runs/run_nosuch/approval", a.key, map[string]any{"choice": "once"})
		tr = append(tr, apiReply("approval of an unknown run", code, m))
		id := a.start(t, "slow 100")
		code, m = a.do(t, "POST", "/v1/runs/"+id+"/approval", a.key, map[string]any{"choice": "once"})
		tr = append(tr, apiReply("approval with nothing pending", code, m))
		code, m = a.do(t, "POST", "/v1/runs/"+id+"/approval", a.key, map[string]any{"choice": "maybe"})
		tr = append(tr, apiReply("unknown choice", code, m))
		code, m = a.do(t, "POST", "/v1/runs/"+id+"/stop", a.key, nil)
		tr = append(tr, apiReply("stop", code, m))
		return tr
	}},
	{"stop", func(t *testing.T, a apiTarget) []string {
		id := a.start(t, "slow 100")
		s := a.events(t, id)
		s.wait(t, "message.delta")
		code, m := a.do(t, "POST", "/v1/runs/"+id+"/stop", a.key, nil)
		tr := []string{apiReply("stop", code, m)}
		s.wait(t, "run.cancelled")
		return append(tr, s.transcript()...)
	}},
}

func apiApprove(t *testing.T, a apiTarget, choice string) []string {
	id := a.start(t, "approve-me: "+dangerous)
	s := a.events(t, id)
	s.wait(t, "approval.request")
	code, m := a.do(t, "POST", "/v1/runs/"+id+"/approval", a.key, map[string]any{"choice": choice})
	tr := []string{apiReply("approval", code, m)}
	end := s.wait(t, "run.completed")
	out, _ := end["output"].(string)
	tr = append(tr, s.transcript()...)
	return append(tr, "outcome "+strings.SplitN(out, ":", 2)[0])
}

// apiAllow: accepted differences, each with why.
var apiAllow = []struct{ scenario, version, line, why string }{}

func TestConformanceAPIServer(t *testing.T) {
	for _, v := range hermespeer.Versions {
		for _, sc := range apiScenarios {
			t.Run(v+"/"+sc.name, func(t *testing.T) {
				t.Parallel()
				p := realAPI(t, v)
				// Paced so that a slow run is still running when the
				// scenario stops it, as on the real server (0.5 s a step).
				fake := apiservertest.NewServer(apiservertest.Options{Dialect: apiservertest.SingleConsumer, Version: v, StepDelay: 50 * time.Millisecond})
				t.Cleanup(fake.Close)
				got := sc.run(t, apiTarget{p.Base, p.Secret})
				want := sc.run(t, apiTarget{fake.URL, fake.Key()})
				for _, d := range diff(want, got) {
					ok := false
					for _, a := range apiAllow {
						if (a.scenario == "" || a.scenario == sc.name) && (a.version == "" || a.version == v) && a.line == d {
							ok = true
						}
					}
					if !ok {
						t.Errorf("fake and real %s API server differ: %s", v, d)
					}
				}
				if t.Failed() || testing.Verbose() {
					t.Logf("fake:\n  %s\nreal %s:\n  %s", strings.Join(want, "\n  "), v, strings.Join(got, "\n  "))
				}
			})
		}
	}
}
