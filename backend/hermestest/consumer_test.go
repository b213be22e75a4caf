package hermestest

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/testwait"
)

const guard = 10 * time.Second

// TestSingleConsumerMatchesCapture replays capture 14_two_connections from
// a real 0.18.2 gateway: resume before the first prompt is 4007; after it,
// a resume moves the session's live events to the resuming client; a
// prompt.submit moves them to the submitting client; the other client
// sees nothing and is not told.
func TestSingleConsumerMatchesCapture(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{Legacy, Modern} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			s := NewServer(Options{Dialect: d})
			defer s.Close()
			a, b := s.NewPeer(), s.NewPeer()
			live, stored, err := a.Create()
			if err != nil {
				t.Fatal(err)
			}
			var pe *PeerError
			if err := b.Resume(stored); !errors.As(err, &pe) || pe.Code != 4007 {
				t.Fatalf("resume before the first prompt: %v, want 4007", err)
			}
			turn := func(p *Peer, text string) {
				t.Helper()
				n := len(p.Events(live))
				if err := p.Submit(live, text); err != nil {
					t.Fatal(err)
				}
				testwait.Until(t, guard, "turn done", s.Changed, func() bool {
					ev := p.Events(live)
					return len(ev) > n && ev[len(ev)-1] == "session.info"
				})
			}
			turn(a, "hello")
			if err := b.Resume(stored); err != nil {
				t.Fatal(err)
			}
			if a.Consumer(live) != "other" || b.Consumer(live) != "peer" {
				t.Fatal("resume did not move the session's events to the resuming client")
			}
			before := len(a.Events(live))
			turn(b, "from B")
			if got := len(a.Events(live)); got != before {
				t.Fatalf("A got %d events of B's turn; a session has one consumer", got-before)
			}
			before = len(b.Events(live))
			turn(a, "from A again")
			if got := len(b.Events(live)); got != before {
				t.Fatalf("B got %d events of A's turn after A's submit", got-before)
			}
			a.Close()
			if b.Consumer(live) != "other" && b.Consumer(live) != "" {
				t.Fatal("closing A moved the session to B")
			}
		})
	}
}

// TestActiveListMatchesCapture: session.active_list rows carry the keys a
// real 0.18.2 gateway sends (10_protocol_probe), in creation order, with
// status working while a turn runs (also while an approval waits, on
// 0.18.2; "waiting" on newer gateways) and the streamed text as preview.
func TestActiveListMatchesCapture(t *testing.T) {
	t.Parallel()
	want := activeKeysFromCapture(t)
	for _, d := range []Dialect{Legacy, Modern} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			s := NewServer(Options{Dialect: d})
			defer s.Close()
			p := s.NewPeer()
			first, _, _ := p.Create()
			second, _, _ := p.Create()
			s.SetTitle(second, "Deploy review")
			if err := p.Submit(second, "hold"); err != nil {
				t.Fatal(err)
			}
			rows := func() []map[string]any {
				r, err := p.Call("session.active_list", map[string]any{})
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(r["sessions"])
				var out []map[string]any
				json.Unmarshal(b, &out)
				return out
			}
			testwait.Until(t, guard, "holding", s.Changed, func() bool { return rows()[1]["preview"] == "holding" })
			got := rows()
			if len(got) != 2 || got[0]["id"] != first || got[1]["id"] != second {
				t.Fatalf("rows %v, want %s then %s", got, first, second)
			}
			keys := make([]string, 0)
			for k := range got[0] {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if !slices.Equal(keys, want) {
				t.Fatalf("row keys %v, captured %v", keys, want)
			}
			if got[1]["status"] != "working" || got[1]["title"] != "Deploy review" || got[0]["status"] != "idle" {
				t.Fatalf("rows %v", got)
			}
			if _, _, err := s.RequestApproval(second, ApprovalSpec{Command: "rm -rf /tmp/x"}); err != nil {
				t.Fatal(err)
			}
			wantStatus := "working"
			if d == Modern {
				wantStatus = "waiting"
			}
			if st := rows()[1]["status"]; st != wantStatus {
				t.Fatalf("status with an approval pending = %v, want %s", st, wantStatus)
			}
			s.Release(second)
		})
	}
}

func activeKeysFromCapture(t *testing.T) []string {
	t.Helper()
	for _, c := range readCalls(t, "testdata/10_protocol_probe.txt") {
		if c.method != "session.active_list" {
			continue
		}
		res := c.response["result"].(map[string]any)
		row := res["sessions"].([]any)[0].(map[string]any)
		var keys []string
		for k := range row {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return keys
	}
	t.Fatal("no session.active_list in the capture")
	return nil
}

// TestLegacyResumeDoesNotResendApproval: on 0.18.2 an approval sent to
// another client (or dropped while nobody consumed the session) is not
// sent again to a client that resumes the session (captures 04 and 13);
// the resume result says the turn is running and shows its streamed text,
// and approval.respond still resolves it FIFO.
func TestLegacyResumeDoesNotResendApproval(t *testing.T) {
	t.Parallel()
	s := NewServer(Options{Dialect: Legacy})
	defer s.Close()
	a, b := s.NewPeer(), s.NewPeer()
	live, stored, _ := a.Create()
	if err := a.Submit(live, "approve-me: rm -rf /tmp/x"); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, guard, "approval sent to A", s.Changed, func() bool { return slices.Contains(a.Events(live), "approval.request") })
	r, err := b.Call("session.resume", map[string]any{"session_id": stored})
	if err != nil {
		t.Fatal(err)
	}
	if r["running"] != true || r["status"] != "working" || r["inflight"] == nil {
		t.Fatalf("resume result %v", r)
	}
	if _, ok := r["open_requests"]; ok {
		t.Fatal("0.18.2 resume lists open requests")
	}
	if slices.Contains(b.Events(live), "approval.request") {
		t.Fatal("approval re-sent on resume")
	}
	if n, err := b.Respond(live, "deny"); err != nil || n != 1 {
		t.Fatalf("blind FIFO answer resolved %d (%v), want 1", n, err)
	}
	testwait.Until(t, guard, "turn ends at B", s.Changed, func() bool { return slices.Contains(b.Events(live), "message.complete") })
	if slices.Contains(a.Events(live), "tool.complete") {
		t.Fatal("A saw the turn's end after B resumed")
	}
}
