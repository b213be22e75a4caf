package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestApprovalsListedOnReconnect: after a reconnect to a gateway that
// answers approval.pending, the client reports which approvals of each
// followed session still wait, by their ids; a gateway without it (the
// probe said -32601 on this connection) gets no listing.
func TestApprovalsListedOnReconnect(t *testing.T) {
	t.Parallel()
	for _, d := range []hermestest.Dialect{hermestest.Requests, hermestest.FanOut, hermestest.Legacy} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d})
			defer srv.Close()
			h := start(t, srv, nil)
			h.rec.waitState(t, source.StateConnected)
			ref, err := h.client.CreateSession(ctxT(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.client.Call(ctxT(t), "prompt.submit", map[string]any{"session_id": ref.ID, "text": "approve-me: rm -rf ./A"}, nil); err != nil {
				t.Fatal(err)
			}
			h.rec.waitFor(t, "approval", func(evs []wire.Event, _ []source.Status) bool { return len(approvals(evs)) > 0 })
			evs, _ := h.rec.snapshot()
			a := approvals(evs)[0]
			mark := h.rec.mark()
			srv.Kick()
			h.rec.waitReconnected(t, mark)
			if d != hermestest.Requests {
				// The listing would come in the same resync as the
				// re-attach; a call after it is answered after it.
				if err := h.client.Call(ctxT(t), "session.active_list", map[string]any{}, nil); err != nil {
					t.Fatal(err)
				}
				evs, _ := h.rec.snapshot()
				for _, ev := range evs {
					if ev.Kind == ApprovalsListed {
						t.Fatalf("a listing from a gateway without approval.pending: %s", ev.Payload)
					}
				}
				return
			}
			h.rec.waitFor(t, "listing", func(evs []wire.Event, _ []source.Status) bool {
				for _, ev := range evs {
					if ev.Kind == ApprovalsListed {
						return true
					}
				}
				return false
			})
			evs, _ = h.rec.snapshot()
			var got struct {
				SessionID string                `json:"session_id"`
				Complete  bool                  `json:"complete"`
				Approvals []wire.ListedApproval `json:"approvals"`
			}
			for _, ev := range evs {
				if ev.Kind == ApprovalsListed {
					if err := json.Unmarshal(ev.Payload, &got); err != nil {
						t.Fatal(err)
					}
					if ev.Session != ref.ID {
						t.Fatalf("listing for session %q, want %q", ev.Session, ref.ID)
					}
				}
			}
			if !got.Complete || len(got.Approvals) != 1 || got.Approvals[0].ID != a.RequestID || got.Approvals[0].Command != "rm -rf ./A" || !strings.HasPrefix(got.Approvals[0].ID, "srq-") {
				t.Fatalf("listing %+v, want %s", got, a.RequestID)
			}
		})
	}
}

// TestListingBounded: what the gateway lists is cut to the bounds, and a
// cut list is not complete (so nothing is concluded from what is absent).
func TestListingBounded(t *testing.T) {
	t.Parallel()
	c, err := New(Config{URL: "ws://127.0.0.1:1", Name: "gw"})
	if err != nil {
		t.Fatal(err)
	}
	c.cf.approvalPending = yes
	many := make([]map[string]any, wire.MaxListed+1)
	for i := range many {
		many[i] = map[string]any{"id": "srq-x", "command": "ls"}
	}
	many[0] = map[string]any{"id": strings.Repeat("9", wire.MaxListedID+10), "request_id": 7, "command": strings.Repeat("x", wire.MaxListedCommand+1), "choices": []string{"once", "once", "once", "once", "once", "once", "once", "once", "once"}}
	raw, _ := json.Marshal(map[string]any{"approvals": many})
	call := func(context.Context, string, any) (json.RawMessage, error) { return raw, nil }
	ev, ok := c.listApprovals(ctxT(t), call, "s1", "")
	if !ok {
		t.Fatal("no listing")
	}
	var got struct {
		Complete  bool                  `json:"complete"`
		Approvals []wire.ListedApproval `json:"approvals"`
	}
	if err := json.Unmarshal(ev.Payload, &got); err != nil {
		t.Fatal(err)
	}
	first := got.Approvals[0]
	if got.Complete || len(got.Approvals) != wire.MaxListed || first.ID != "" || first.RequestID != "7" || first.Command != "" || first.Choices != nil {
		t.Fatalf("bounded listing: complete %v, %d entries, first %+v", got.Complete, len(got.Approvals), first)
	}
	c.cf.approvalPending = no
	if _, ok := c.listApprovals(ctxT(t), call, "s1", ""); ok {
		t.Fatal("a listing where approval.pending is absent")
	}
}
