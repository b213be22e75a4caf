package gateway

import (
	"errors"
	"fmt"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

var dialects = []hermestest.Dialect{hermestest.Legacy, hermestest.Modern}

// answer sends choice for an approval event the way its form requires.
func answer(t testing.TB, c *Client, ev wire.Event, choice string) {
	t.Helper()
	if ev.Kind == wire.ApprovalServerRequest {
		if err := c.RespondServerRequest(ctxT(t), ev.RequestID, choice); err != nil {
			t.Fatalf("respond server request: %v", err)
		}
		return
	}
	a, _ := ev.Approval()
	n, err := c.RespondApproval(ctxT(t), ev.Session, choice, a.RequestID)
	if err != nil {
		t.Fatalf("approval.respond: %v", err)
	}
	if n != 1 {
		t.Fatalf("approval.respond resolved %d, want 1", n)
	}
}

func approvals(evs []wire.Event) []wire.Event {
	var out []wire.Event
	for _, e := range evs {
		if e.IsApproval() {
			out = append(out, e)
		}
	}
	return out
}

func TestApproveAndDeny(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		for _, choice := range []string{"once", "deny"} {
			t.Run(fmt.Sprintf("%s/%s", d, choice), func(t *testing.T) {
				t.Parallel()
				srv := hermestest.NewServer(hermestest.Options{Dialect: d})
				defer srv.Close()
				h := start(t, srv, nil)
				h.rec.waitState(t, source.StateConnected)

				ref, err := h.client.CreateSession(ctxT(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := h.client.Call(ctxT(t), "prompt.submit", map[string]any{"session_id": ref.ID, "text": "approve-me: git reset --hard HEAD"}, nil); err != nil {
					t.Fatal(err)
				}
				var ev wire.Event
				h.rec.waitFor(t, "approval", func(evs []wire.Event, _ []source.Status) bool {
					a := approvals(evs)
					if len(a) > 0 {
						ev = a[0]
					}
					return len(a) > 0
				})
				a, ok := ev.Approval()
				if !ok || a.Command != "git reset --hard HEAD" || ev.Session != ref.ID || ev.StoredSession != ref.StoredID {
					t.Fatalf("approval event = %+v data %+v", ev, a)
				}
				if d == hermestest.Modern && (ev.Kind != wire.ApprovalServerRequest || ev.RequestID == "") {
					t.Fatalf("modern gateway should use the server-request form, got %s %q", ev.Kind, ev.RequestID)
				}
				if d == hermestest.Legacy && ev.Kind != wire.ApprovalRequest {
					t.Fatalf("0.18.2 gateway uses approval.request events, got %s", ev.Kind)
				}
				// Nothing was answered before the user acted.
				if got := srv.Answers(); len(got) != 0 {
					t.Fatalf("gateway saw answers before the user acted: %+v", got)
				}
				answer(t, h.client, ev, choice)
				waitServer(t, srv, "answer", func() bool { return len(srv.Answers()) == 1 })
				got := srv.Answers()[0]
				if got.Choice != choice || got.Command != "git reset --hard HEAD" {
					t.Fatalf("gateway recorded %+v, want choice %s", got, choice)
				}
				wantText := "approved: git reset --hard HEAD"
				if choice == "deny" {
					wantText = "blocked: git reset --hard HEAD"
				}
				done := h.rec.waitKind(t, wire.MessageComplete, 1)
				if cp := done[0].Data.(*wire.CompletePayload); cp.Text != wantText {
					t.Fatalf("message.complete text %q, want %q", cp.Text, wantText)
				}
			})
		}
	}
}

func TestBadTokenStopsWithoutRetryStorm(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d})
			defer srv.Close()
			h := start(t, srv, func(c *Config) { c.Token = "WRONG" })
			st := h.rec.waitState(t, source.StateAuthFailed)
			if st.Err == "" {
				t.Fatal("auth failure has no message for the user")
			}
			// Advancing time a long way must not cause more dials.
			for i := 0; i < 10; i++ {
				h.clk.Advance(PingInterval * 10)
			}
			_, sts := h.rec.snapshot()
			connecting := 0
			for _, s := range sts {
				if s.State == source.StateConnecting {
					connecting++
				}
			}
			if connecting != 1 {
				t.Fatalf("client tried %d times with a bad token, want 1", connecting)
			}
			if srv.Dials() != 0 {
				t.Fatalf("gateway accepted %d connections with a bad token", srv.Dials())
			}
			var ae *AuthError
			if !errors.As(&AuthError{Msg: st.Err}, &ae) {
				t.Fatal("unreachable")
			}
			// A fixed token and "reconnect now" recover.
			h.client.SetCredentials(srv.Token(), "", "")
			h.rec.waitState(t, source.StateConnected)
		})
	}
}

// TestUnknownEventsPassThrough: kinds Herald does not know arrive intact.
func TestUnknownEventsPassThrough(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := start(t, srv, nil)
	h.rec.waitState(t, source.StateConnected)
	ref, err := h.client.CreateSession(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Emit(ref.ID, "subagent.progress", map[string]any{"goal": "x", "task_index": 2})
	evs := h.rec.waitKind(t, "subagent.progress", 1)
	if evs[0].Data != nil || string(evs[0].Payload) != `{"goal":"x","task_index":2}` || evs[0].Seq == 0 {
		t.Fatalf("unknown event = %+v payload %s", evs[0], evs[0].Payload)
	}
}
