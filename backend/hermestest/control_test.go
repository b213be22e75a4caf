package hermestest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// rpc sends one request and returns its response frame and every event
// frame that arrived before it.
func rpc(t *testing.T, ws *websocket.Conn, id int, method string, params map[string]any) (map[string]any, []map[string]any) {
	t.Helper()
	if err := ws.WriteJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		t.Fatal(err)
	}
	var events []map[string]any
	for {
		fr := next(t, ws, func(map[string]any) bool { return true })
		if fr["method"] == "event" {
			events = append(events, fr)
			continue
		}
		if n, _ := fr["id"].(float64); int(n) == id {
			return fr, events
		}
	}
}

// eventType returns an event frame's type and payload.
func eventType(fr map[string]any) (string, map[string]any) {
	p, _ := fr["params"].(map[string]any)
	typ, _ := p["type"].(string)
	pl, _ := p["payload"].(map[string]any)
	return typ, pl
}

// untilEvent reads until an event of this type arrives and returns its
// payload, with the event types seen on the way.
func untilEvent(t *testing.T, ws *websocket.Conn, typ string) (map[string]any, []string) {
	t.Helper()
	var seen []string
	for {
		fr := next(t, ws, func(fr map[string]any) bool { return fr["method"] == "event" })
		got, pl := eventType(fr)
		seen = append(seen, got)
		if got == typ {
			return pl, seen
		}
	}
}

func newSession(t *testing.T, ws *websocket.Conn) string {
	t.Helper()
	next(t, ws, func(map[string]any) bool { return true }) // gateway.ready
	res, _ := rpc(t, ws, 1, "session.create", map[string]any{"cols": 100})
	r, _ := res["result"].(map[string]any)
	sid, _ := r["session_id"].(string)
	if sid == "" {
		t.Fatalf("session.create answered %v", res)
	}
	return sid
}

// TestInterruptEndsTheTurn follows captures 07_interrupt_slow and
// 08_interrupt_pending_approval: session.interrupt answers
// {"status":"interrupted"} at once, a pending approval is denied (the tool
// reports BLOCKED) and the turn ends with message.complete status
// "interrupted", then session.info running=false.
func TestInterruptEndsTheTurn(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{Legacy, Modern} {
		for _, prompt := range []string{"hold", "approve-me: git reset --hard HEAD"} {
			t.Run(d.String()+"/"+prompt, func(t *testing.T) {
				t.Parallel()
				s := NewServer(Options{Dialect: d})
				defer s.Close()
				ws := dial(t, s, nil)
				defer ws.Close()
				sid := newSession(t, ws)
				if d == Modern {
					rpc(t, ws, 2, "client.capabilities", map[string]any{"server_requests": true})
				}
				res, _ := rpc(t, ws, 3, "prompt.submit", map[string]any{"session_id": sid, "text": prompt})
				if r, _ := res["result"].(map[string]any); r["status"] != "streaming" {
					t.Fatalf("prompt.submit answered %v", res)
				}
				// Wait until the agent is mid-turn.
				if strings.HasPrefix(prompt, "approve-me") {
					if d == Legacy {
						untilEvent(t, ws, "approval.request")
					} else {
						next(t, ws, func(fr map[string]any) bool { return fr["method"] == "approval" })
					}
				} else {
					untilEvent(t, ws, "message.delta")
				}
				res, _ = rpc(t, ws, 4, "session.interrupt", map[string]any{"session_id": sid})
				if r, _ := res["result"].(map[string]any); r["status"] != "interrupted" {
					t.Fatalf("session.interrupt answered %v", res)
				}
				done, seen := untilEvent(t, ws, "message.complete")
				if done["status"] != "interrupted" {
					t.Fatalf("turn ended %v (after %v), want status interrupted", done, seen)
				}
				if strings.HasPrefix(prompt, "approve-me") {
					joined := strings.Join(seen, ",")
					if !strings.Contains(joined, "tool.complete") {
						t.Fatalf("no tool.complete before the end: %v", seen)
					}
					if !strings.HasPrefix(done["text"].(string), "blocked: ") {
						t.Fatalf("interrupted approval turn said %q", done["text"])
					}
				}
				info, _ := untilEvent(t, ws, "session.info")
				if info["running"] != false {
					t.Fatalf("session.info after the interrupt: running=%v", info["running"])
				}
				if s.Interrupts() != 1 {
					t.Fatalf("Interrupts() = %d", s.Interrupts())
				}
				// Interrupting an idle session answers the same, and
				// nothing follows.
				res, evs := rpc(t, ws, 5, "session.interrupt", map[string]any{"session_id": sid})
				if r, _ := res["result"].(map[string]any); r["status"] != "interrupted" || len(evs) != 0 {
					t.Fatalf("idle interrupt answered %v with events %v", res, evs)
				}
				res, _ = rpc(t, ws, 6, "session.interrupt", map[string]any{"session_id": "nope"})
				if e, _ := res["error"].(map[string]any); e == nil || e["code"] != float64(4001) {
					t.Fatalf("interrupt of an unknown session answered %v", res)
				}
			})
		}
	}
}

// TestNoticesReachTheAttachedClient checks notification.show and
// notification.clear frames in both dialects (sequenced in Modern).
func TestNoticesReachTheAttachedClient(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{Legacy, Modern} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			s := NewServer(Options{Dialect: d})
			defer s.Close()
			ws := dial(t, s, nil)
			defer ws.Close()
			sid := newSession(t, ws)
			if err := s.ShowNotice(sid, Notice{Text: "✓ Credit access restored", Level: "success", Kind: "ttl", TTL: 8 * time.Second, Key: "credits.restored", ID: "credits.restored"}); err != nil {
				t.Fatal(err)
			}
			if err := s.ShowNotice(sid, Notice{Text: "sticky", Level: "warn", Kind: "sticky"}); err != nil {
				t.Fatal(err)
			}
			if err := s.ClearNotice(sid, "credits.restored"); err != nil {
				t.Fatal(err)
			}
			var frames []map[string]any
			for len(frames) < 3 {
				fr := next(t, ws, func(fr map[string]any) bool {
					typ, _ := eventType(fr)
					return strings.HasPrefix(typ, "notification.")
				})
				frames = append(frames, fr)
			}
			b, _ := json.Marshal(frames)
			want := []string{
				`"type":"notification.show"`, `"ttl_ms":8000`, `"key":"credits.restored"`, `"level":"success"`,
				`"ttl_ms":null`, `"key":null`, `"type":"notification.clear"`, `"session_id":"` + sid + `"`,
			}
			for _, w := range want {
				if !strings.Contains(string(b), w) {
					t.Errorf("frames lack %s: %s", w, b)
				}
			}
			_, seq := frames[0]["params"].(map[string]any)["seq"]
			if seq != (d == Modern) {
				t.Errorf("seq present = %v in %s", seq, d)
			}
			if err := s.ShowNotice("nope", Notice{}); err == nil {
				t.Error("ShowNotice on an unknown session did not fail")
			}
		})
	}
}

// TestBusySubmitInterruptsAndQueues follows capture 10_protocol_probe: a
// prompt.submit during a turn answers "queued", the running turn ends
// "interrupted", and the queued text runs next.
func TestBusySubmitInterruptsAndQueues(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{Legacy, Modern} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			s := NewServer(Options{Dialect: d})
			defer s.Close()
			ws := dial(t, s, nil)
			defer ws.Close()
			sid := newSession(t, ws)
			rpc(t, ws, 2, "prompt.submit", map[string]any{"session_id": sid, "text": "hold"})
			untilEvent(t, ws, "message.delta")
			res, _ := rpc(t, ws, 3, "prompt.submit", map[string]any{"session_id": sid, "text": "queued follow-up"})
			if r, _ := res["result"].(map[string]any); r["status"] != "queued" {
				t.Fatalf("busy submit answered %v", res)
			}
			first, _ := untilEvent(t, ws, "message.complete")
			if first["status"] != "interrupted" {
				t.Fatalf("the running turn ended %v", first)
			}
			_, seen := untilEvent(t, ws, "message.start")
			second, _ := untilEvent(t, ws, "message.complete")
			if second["status"] != "complete" || second["text"] != "stub answer: queued follow-up" {
				t.Fatalf("the queued turn ended %v (after %v)", second, seen)
			}
		})
	}
}
