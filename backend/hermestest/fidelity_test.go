package hermestest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// capturedCall is one request/response pair from a real gateway capture.
type capturedCall struct {
	method   string
	params   json.RawMessage
	response map[string]any
}

var lineRE = regexp.MustCompile(`^\+\s+[\d.]+\s+(\S+)\s+(>>>|<<<)\s+(\{.*\})\s*$`)

// readCalls pairs each client request in a capture with the response
// carrying its id.
func readCalls(t *testing.T, file string) []capturedCall {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []capturedCall
	byID := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var fr map[string]any
		if json.Unmarshal([]byte(m[3]), &fr) != nil {
			continue
		}
		id, _ := json.Marshal(fr["id"])
		switch {
		case m[2] == ">>>" && fr["method"] != nil && fr["id"] != nil:
			p, _ := json.Marshal(fr["params"])
			byID[m[1]+string(id)] = len(calls)
			calls = append(calls, capturedCall{method: fr["method"].(string), params: p})
		case m[2] == "<<<" && fr["method"] == nil:
			if i, ok := byID[m[1]+string(id)]; ok && calls[i].response == nil {
				calls[i].response = fr
			}
		}
	}
	return calls
}

func dial(t *testing.T, s *Server, hdr http.Header) *websocket.Conn {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.Dial(strings.Replace(s.URL, "http", "ws", 1)+"/api/ws?token="+s.Token(), hdr)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	return ws
}

// next reads frames until one satisfies keep.
func next(t *testing.T, ws *websocket.Conn, keep func(map[string]any) bool) map[string]any {
	t.Helper()
	for {
		_, b, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var fr map[string]any
		if err := json.Unmarshal(b, &fr); err != nil {
			t.Fatalf("server sent non-JSON %q", b)
		}
		if keep(fr) {
			return fr
		}
	}
}

// TestLegacyMatchesCapturedProbe replays the method probe captured from a
// real Hermes 0.18.2 gateway against the fake and compares error codes and
// messages, and the result keys, call by call.
func TestLegacyMatchesCapturedProbe(t *testing.T) {
	t.Parallel()
	calls := readCalls(t, "testdata/10_protocol_probe.txt")
	s := NewServer(Options{Dialect: Legacy})
	defer s.Close()
	ws := dial(t, s, nil)
	defer ws.Close()
	first := next(t, ws, func(map[string]any) bool { return true })
	if p := first["params"].(map[string]any); p["type"] != "gateway.ready" {
		t.Fatalf("first frame %v, want gateway.ready", first)
	}
	sid := ""
	checked := 0
	for i, c := range calls {
		if c.response == nil {
			continue
		}
		// Substitute our session id for the captured one.
		params := c.params
		var pm map[string]any
		json.Unmarshal(params, &pm)
		if _, ok := pm["session_id"]; ok && sid != "" && pm["session_id"] != "nope" {
			pm["session_id"] = sid
		}
		if c.method == "prompt.submit" {
			continue // streaming turns are checked by the gateway package's tests
		}
		if err := ws.WriteJSON(map[string]any{"jsonrpc": "2.0", "id": i + 1000, "method": c.method, "params": pm}); err != nil {
			t.Fatal(err)
		}
		got := next(t, ws, func(fr map[string]any) bool { return fr["id"] == float64(i+1000) })
		want := c.response
		if we, ok := want["error"].(map[string]any); ok {
			ge, ok := got["error"].(map[string]any)
			if !ok || ge["code"] != we["code"] || ge["message"] != we["message"] {
				t.Errorf("%s: error %v, want %v", c.method, got["error"], we)
			}
		} else {
			wr, _ := want["result"].(map[string]any)
			gr, ok := got["result"].(map[string]any)
			if !ok {
				t.Errorf("%s: got %v, want a result", c.method, got)
				continue
			}
			for k := range wr {
				if _, ok := gr[k]; !ok && k != "info" && k != "messages" {
					t.Errorf("%s: result lacks %q (has %v)", c.method, k, gr)
				}
			}
			if c.method == "session.create" {
				sid = gr["session_id"].(string)
			}
		}
		checked++
	}
	if checked < 8 {
		t.Fatalf("only %d captured calls compared", checked)
	}
}

// TestAuthGuardsMatchCapture: the handshake cases captured from a real
// gateway (wrong/missing/empty token, bad Host, foreign Origin, Authorization
// header only) are refused with HTTP 403 before the upgrade; loopback and
// file:// origins pass.
func TestAuthGuardsMatchCapture(t *testing.T) {
	t.Parallel()
	s := NewServer(Options{Dialect: Legacy})
	defer s.Close()
	base := strings.Replace(s.URL, "http", "ws", 1) + "/api/ws"
	for _, tc := range []struct {
		name   string
		query  string
		header http.Header
		want   int
	}{
		{"wrong token", "?token=WRONG", nil, 403},
		{"missing token", "", nil, 403},
		{"empty token", "?token=", nil, 403},
		{"bad host", "?token=" + s.Token(), http.Header{"Host": {"evil.example:1"}}, 403},
		{"foreign origin", "?token=" + s.Token(), http.Header{"Origin": {"http://evil.example"}}, 403},
		{"loopback origin", "?token=" + s.Token(), http.Header{"Origin": {"http://localhost:1"}}, 101},
		{"file origin", "?token=" + s.Token(), http.Header{"Origin": {"file://"}}, 101},
		{"bearer only", "", http.Header{"Authorization": {"Bearer " + s.Token()}}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := websocket.Dialer{}
			hdr := http.Header{}
			for k, v := range tc.header {
				hdr[k] = v
			}
			u := base + tc.query
			if h := hdr.Get("Host"); h != "" {
				// gorilla takes Host from the URL; dial our port with a
				// foreign Host header through the request instead.
				hdr.Del("Host")
				d.NetDial = nil
				req, _ := http.NewRequest("GET", strings.Replace(u, "ws", "http", 1), nil)
				req.Host = h
				req.Header.Set("Connection", "Upgrade")
				req.Header.Set("Upgrade", "websocket")
				req.Header.Set("Sec-WebSocket-Version", "13")
				req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.want {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
				}
				return
			}
			ws, resp, err := d.Dial(u, hdr)
			got := 0
			if resp != nil {
				got = resp.StatusCode
			}
			if ws != nil {
				ws.Close()
			}
			if got != tc.want {
				t.Fatalf("status %d (%v), want %d", got, err, tc.want)
			}
		})
	}
}
