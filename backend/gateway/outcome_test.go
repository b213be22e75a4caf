package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestAnswerCutAfterWriteIsUnknown reproduces issue 16's second finding on
// the fake 0.18.2 gateway: the gateway takes the answer, then the link
// drops before its reply. The answer's error must say "outcome unknown",
// never plain "not connected" (which surfaces read as "not sent, retry").
func TestAnswerCutAfterWriteIsUnknown(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	defer srv.Close()
	h := start(t, srv, nil)
	h.rec.waitState(t, source.StateConnected)
	ref, err := h.client.CreateSession(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.client.Call(ctxT(t), "prompt.submit", map[string]any{"session_id": ref.ID, "text": "approve-me: rm -rf ./A-build-cache"}, nil); err != nil {
		t.Fatal(err)
	}
	h.rec.waitFor(t, "approval", func(evs []wire.Event, _ []source.Status) bool { return len(approvals(evs)) > 0 })
	srv.CutOnNext("approval.respond") // the gateway acts on the answer, then the link drops before its reply
	_, err = h.client.RespondApproval(ctxT(t), ref.ID, "once", "")
	if !errors.Is(err, wire.ErrOutcomeUnknown) {
		t.Fatalf("answer cut after the write: %v, want an unknown outcome", err)
	}
	waitServer(t, srv, "the answer", func() bool { return len(srv.Answers()) == 1 })
	if a := srv.Answers()[0]; a.Choice != "once" || a.Command != "rm -rf ./A-build-cache" {
		t.Fatalf("gateway took %+v", a)
	}
}

// TestNotWrittenIsNotUnknown: a frame the writer never began is "not
// connected" (safe to retry), one it wrote is "outcome unknown".
func TestNotWrittenIsNotUnknown(t *testing.T) {
	t.Parallel()
	read := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
			read <- struct{}{} // and never answer
		}
	}))
	defer srv.Close()
	dial := func() *conn {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return newConn(ws, time.Now())
	}

	// Written, then the link fails: unknown.
	cn := dial()
	go cn.writeLoop()
	res := make(chan error, 1)
	go func() {
		_, err := cn.call(context.Background(), "approval.respond", map[string]any{"session_id": "s1", "choice": "once"})
		res <- err
	}()
	<-read
	cn.fail(errors.New("test cut"))
	if err := <-res; !errors.Is(err, wire.ErrOutcomeUnknown) || !errors.Is(err, ErrNotConnected) {
		t.Fatalf("written call after the cut: %v, want unknown (and not connected)", err)
	}

	// Calls waiting when the link fails: one the writer never began is
	// not sent, one it began may have arrived.
	cn = dial()
	unsent, sent := waiting{ch: make(chan callResult, 1), started: new(atomic.Bool)}, waiting{ch: make(chan callResult, 1), started: new(atomic.Bool)}
	sent.started.Store(true)
	cn.pending[1], cn.pending[2] = unsent, sent
	cn.fail(errors.New("test cut"))
	if r := <-unsent.ch; !errors.Is(r.err, ErrNotConnected) || errors.Is(r.err, wire.ErrOutcomeUnknown) {
		t.Fatalf("unwritten call after the cut: %v, want not connected only", r.err)
	}
	if r := <-sent.ch; !errors.Is(r.err, wire.ErrOutcomeUnknown) {
		t.Fatalf("written call after the cut: %v, want unknown", r.err)
	}
}

// TestServerRequestIDsAnsweredAsSent: a numeric server-request id is
// answered as a number, a string one as a string; an empty id or a number
// not open on this connection is refused, nothing sent.
func TestServerRequestIDsAnsweredAsSent(t *testing.T) {
	t.Parallel()
	c, err := New(Config{URL: "ws://127.0.0.1:1", Name: "gw"})
	if err != nil {
		t.Fatal(err)
	}
	c.emitServerRequest(wire.Event{Kind: wire.ApprovalServerRequest, RequestID: "7", Session: "s1"}, json.RawMessage(`7`))
	c.emitServerRequest(wire.Event{Kind: wire.ApprovalServerRequest, RequestID: "8", Session: "s1"}, json.RawMessage(`"8"`))
	for _, tt := range []struct {
		id, want string
		err      bool
	}{
		{"7", `7`, false},
		{"8", `"8"`, false},
		{"srq-abc", `"srq-abc"`, false},
		{"9", "", true},
		{"", "", true},
	} {
		got, err := c.srqID(tt.id)
		if (err != nil) != tt.err || string(got) != tt.want {
			t.Errorf("srqID(%q) = %s, %v; want %s (error %v)", tt.id, got, err, tt.want, tt.err)
		}
	}
}
