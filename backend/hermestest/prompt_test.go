package hermestest

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// capturedEvent finds the first event of type kind in a capture whose
// payload holds all of has.
func capturedEvent(t *testing.T, file, kind string, has ...string) map[string]any {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil || m[2] != "<<<" {
			continue
		}
		var fr map[string]any
		if json.Unmarshal([]byte(m[3]), &fr) != nil {
			continue
		}
		p, ok := fr["params"].(map[string]any)
		if !ok || p["type"] != kind {
			continue
		}
		match := true
		for _, h := range has {
			match = match && strings.Contains(m[3], h)
		}
		if match {
			return fr
		}
	}
	t.Fatalf("%s has no %s event", file, kind)
	return nil
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestClarifyMatchesCapture: the 0.18.2 fake's clarify prompt, its answer
// and the agent's reply have the shapes of the real gateway's (capture
// 09_tool_and_echo: clarify.request, clarify.respond, {"status": "ok"}).
func TestClarifyMatchesCapture(t *testing.T) {
	t.Parallel()
	const capture = "testdata/09_tool_and_echo.txt"
	want := capturedEvent(t, capture, "clarify.request")
	wantDone := capturedEvent(t, capture, "message.complete", "clarify answer")
	var wantRespond map[string]any
	for _, c := range readCalls(t, capture) {
		if c.method == "clarify.respond" {
			wantRespond = c.response
		}
	}
	s := NewServer(Options{Dialect: Legacy})
	defer s.Close()
	ws := dial(t, s, nil)
	defer ws.Close()
	next(t, ws, func(map[string]any) bool { return true }) // gateway.ready
	ws.WriteJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "session.create", "params": map[string]any{}})
	created := next(t, ws, func(fr map[string]any) bool { return fr["id"] == float64(1) })
	sid := created["result"].(map[string]any)["session_id"]
	ws.WriteJSON(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "prompt.submit", "params": map[string]any{"session_id": sid, "text": "clarify: Proceed?"}})
	got := next(t, ws, func(fr map[string]any) bool {
		p, _ := fr["params"].(map[string]any)
		return p != nil && p["type"] == "clarify.request"
	})
	gp, wp := got["params"].(map[string]any), want["params"].(map[string]any)
	if !reflect.DeepEqual(keys(gp), keys(wp)) {
		t.Fatalf("event params %v, captured %v", keys(gp), keys(wp))
	}
	gpl, wpl := gp["payload"].(map[string]any), wp["payload"].(map[string]any)
	if !reflect.DeepEqual(keys(gpl), keys(wpl)) || gpl["question"] != wpl["question"] || !reflect.DeepEqual(gpl["choices"], wpl["choices"]) {
		t.Fatalf("payload %v, captured %v", gpl, wpl)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(gpl["request_id"].(string)) {
		t.Fatalf("request_id %v is not 8 hex digits like %v", gpl["request_id"], wpl["request_id"])
	}
	ws.WriteJSON(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "clarify.respond", "params": map[string]any{"request_id": gpl["request_id"], "answer": "yes"}})
	resp := next(t, ws, func(fr map[string]any) bool { return fr["id"] == float64(3) })
	if !reflect.DeepEqual(resp["result"], wantRespond["result"]) {
		t.Fatalf("clarify.respond result %v, captured %v", resp["result"], wantRespond["result"])
	}
	done := next(t, ws, func(fr map[string]any) bool {
		p, _ := fr["params"].(map[string]any)
		return p != nil && p["type"] == "message.complete"
	})
	gt := done["params"].(map[string]any)["payload"].(map[string]any)["text"]
	wt := wantDone["params"].(map[string]any)["payload"].(map[string]any)["text"]
	if gt != wt {
		t.Fatalf("reply %q, captured %q", gt, wt)
	}
	// A second answer: nothing is pending any more (Hermes' 4009).
	ws.WriteJSON(map[string]any{"jsonrpc": "2.0", "id": 4, "method": "clarify.respond", "params": map[string]any{"request_id": gpl["request_id"], "answer": "no"}})
	again := next(t, ws, func(fr map[string]any) bool { return fr["id"] == float64(4) })
	if e, _ := again["error"].(map[string]any); e == nil || e["code"] != float64(4009) || e["message"] != "no pending answer request" {
		t.Fatalf("second answer %v, want 4009 no pending answer request", again)
	}
}
