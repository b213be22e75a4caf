package hermestest

import (
	"regexp"
	"slices"
	"testing"

	"github.com/herald-desktop/herald/backend/testwait"
)

// TestDialectsDeliverToEveryAttachedClientOrOne: on the fan-out dialects
// a resume adds a receiver and both clients get the session's events; on
// the single-client ones the resume moves them.
func TestDialectsDeliverToEveryAttachedClientOrOne(t *testing.T) {
	t.Parallel()
	for _, d := range Dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			s := NewServer(Options{Dialect: d})
			defer s.Close()
			a, b := s.NewPeer(), s.NewPeer()
			live, stored, err := a.Create()
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Submit(live, "hello"); err != nil {
				t.Fatal(err)
			}
			testwait.Until(t, guard, "first turn", s.Changed, func() bool { return slices.Contains(a.Events(live), "message.complete") })
			if err := b.Resume(stored); err != nil {
				t.Fatal(err)
			}
			want := map[bool]string{true: "peer", false: "other"}[d.fanOut()]
			if a.Consumer(live) != want || b.Consumer(live) != "peer" {
				t.Fatalf("after B resumed: A is %q, B is %q; want A %q", a.Consumer(live), b.Consumer(live), want)
			}
			nA := len(a.Events(live))
			if err := b.Submit(live, "again"); err != nil {
				t.Fatal(err)
			}
			testwait.Until(t, guard, "B's turn", s.Changed, func() bool {
				return slices.Contains(b.Events(live), "session.info")
			})
			gotA := len(a.Events(live)) > nA
			if gotA != d.fanOut() {
				t.Fatalf("A got B's turn: %v, want %v", gotA, d.fanOut())
			}
			if n := s.Receivers(live); n != map[bool]int{true: 2, false: 1}[d.fanOut()] {
				t.Fatalf("%d receivers", n)
			}
			b.Close()
			if s.Receivers(live) != map[bool]int{true: 1, false: 0}[d.fanOut()] {
				t.Fatal("closing B did not detach it only")
			}
		})
	}
}

var srqRE = regexp.MustCompile(`^srq-[0-9a-f]{12}$`)

// TestRequestsFirstAnswerWins: on 0.21.3+ every attached client gets the
// approval as a server request with an srq-<12hex> id, the session lists
// as waiting, approval.pending lists it; the first answer wins, a later
// request.answer is expired, and (settle-hook reading) the others get
// request.cancel.
func TestRequestsFirstAnswerWins(t *testing.T) {
	t.Parallel()
	for _, noCancel := range []bool{false, true} {
		t.Run(map[bool]string{false: "settle-cancels", true: "no-cancel-after-response"}[noCancel], func(t *testing.T) {
			t.Parallel()
			s := NewServer(Options{Dialect: Requests, NoCancelAfterResponse: noCancel})
			defer s.Close()
			a, b := s.NewPeer(), s.NewPeer()
			live, stored, _ := a.Create()
			if err := a.Submit(live, "hello"); err != nil {
				t.Fatal(err)
			}
			testwait.Until(t, guard, "first turn", s.Changed, func() bool { return slices.Contains(a.Events(live), "message.complete") })
			if err := b.Resume(stored); err != nil {
				t.Fatal(err)
			}
			id, done, err := s.RequestApproval(live, ApprovalSpec{Command: "rm -rf /tmp/x"})
			if err != nil {
				t.Fatal(err)
			}
			if !srqRE.MatchString(id) {
				t.Fatalf("id %q is not srq-<12hex>", id)
			}
			for _, p := range []*Peer{a, b} {
				if n := slices.Index(p.Events(live), "approval"); n < 0 {
					t.Fatalf("a client did not get the approval: %v", p.Events(live))
				}
			}
			rows, _ := a.Call("session.active_list", map[string]any{})
			row := rows["sessions"].([]any)[0].(map[string]any)
			if row["status"] != "waiting" {
				t.Fatalf("status %v, want waiting", row["status"])
			}
			pend, err := b.Call("approval.pending", map[string]any{"session_id": live})
			if err != nil || len(pend["approvals"].([]any)) != 1 {
				t.Fatalf("approval.pending: %v %v", pend, err)
			}
			r, err := a.Call("request.answer", map[string]any{"id": id, "result": map[string]any{"choice": "deny"}})
			if err != nil || r["status"] != "ok" {
				t.Fatalf("first answer: %v %v", r, err)
			}
			if c := <-done; c != "deny" {
				t.Fatalf("agent got %q", c)
			}
			r, err = b.Call("request.answer", map[string]any{"id": id, "result": map[string]any{"choice": "once"}})
			if err != nil || r["status"] != "expired" {
				t.Fatalf("second answer: %v %v, want expired", r, err)
			}
			// request.answer settles through the queue: withdrawn
			// everywhere in both readings.
			if !slices.Contains(b.Events(live), "request.cancel") {
				t.Fatalf("B was not told: %v", b.Events(live))
			}
			if _, err := b.Call("request.answer", map[string]any{"id": id}); err == nil {
				t.Fatal("request.answer without result was accepted")
			}
		})
	}
}

// TestRequestsCapabilityGate: a client that never sent client.capabilities
// {server_requests:true} gets no approval; with only such clients
// attached the approval is withdrawn; on older dialects the methods are
// absent.
func TestRequestsCapabilityGate(t *testing.T) {
	t.Parallel()
	s := NewServer(Options{Dialect: Requests})
	defer s.Close()
	a := s.NewPeer()
	s.mu.Lock()
	a.c.serverRequests = false
	s.mu.Unlock()
	live, _, _ := a.Create()
	_, done, _ := s.RequestApproval(live, ApprovalSpec{Command: "rm -rf /"})
	if c := <-done; c != "" || s.Withdrawn() != 1 {
		t.Fatalf("got %q, withdrawn %d; want a withdrawal", c, s.Withdrawn())
	}
	if slices.Contains(a.Events(live), "approval") {
		t.Fatal("an incapable client got the request")
	}
	for _, d := range []Dialect{Legacy, Replay, FanOut} {
		o := NewServer(Options{Dialect: d})
		p := o.NewPeer()
		for _, m := range []string{"approval.pending", "request.answer", "client.capabilities"} {
			if _, err := p.Call(m, map[string]any{}); err == nil || err.(*PeerError).Code != -32601 {
				t.Errorf("%s: %s answered %v, want -32601", d, m, err)
			}
		}
		o.Close()
	}
}

// TestEventDialectsCarryNoRequestID: approvals of 0.18.2, 0.20.6 and
// 0.21.1 are events without a request_id (before 0.21.3 none carried one
// on the wire: the ledgers of the real 0.21.0; PROTOCOL.md); 0.20.6's
// and 0.21.1's carry seq.
func TestEventDialectsCarryNoRequestID(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{Legacy, Replay, FanOut} {
		s := NewServer(Options{Dialect: d})
		p := s.NewPeer()
		live, _, _ := p.Create()
		s.RequestApproval(live, ApprovalSpec{Command: "rm -rf /"})
		var got map[string]any
		for _, f := range p.Frames() {
			if pr, _ := f["params"].(map[string]any); pr["type"] == "approval.request" {
				got = pr["payload"].(map[string]any)
				if _, ok := pr["seq"]; ok != d.sequenced() {
					t.Errorf("%s: seq present %v", d, ok)
				}
			}
		}
		if got == nil || got["command"] != "rm -rf /" {
			t.Fatalf("%s: no approval.request: %v", d, got)
		}
		if _, ok := got["request_id"]; ok {
			t.Errorf("%s: request_id present", d)
		}
		s.Close()
	}
}

// TestActiveSessionLimit4090: the limit's 4090 says what it is.
func TestActiveSessionLimit4090(t *testing.T) {
	t.Parallel()
	s := NewServer(Options{Dialect: Requests, ActiveSessionLimit: 1})
	defer s.Close()
	p := s.NewPeer()
	if _, _, err := p.Create(); err != nil {
		t.Fatal(err)
	}
	_, _, err := p.Create()
	if pe, ok := err.(*PeerError); !ok || pe.Code != 4090 || !regexp.MustCompile(`active session limit \(1/1\)`).MatchString(pe.Message) {
		t.Fatalf("%v", err)
	}
}
