package apiserver_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/wire"
)

// An approval that carries a request_id is marked answerable only by
// order until the server has shown, on this connection, that it applies
// an answer to the id it names (its 200 echoes the id); a server that
// ignores ids (hermes-desktop#904) never shows it.
func TestAnswerByOrderUntilIDsHonoured(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		ignore  bool
		byOrder bool // the second run's approval
	}{
		{"honours ids", false, false},
		{"ignores ids", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, apiservertest.LastEventID, setup{server: func(o *apiservertest.Options) { o.IgnoreRequestID = tt.ignore }})
			first := h.startRun("approve-me: rm -rf ./a")
			a := h.rec.waitKind(t, first, wire.ApprovalRequest, 1)[0].Data.(*wire.ApprovalPayload)
			if a.RequestID == "" || !a.AnswerByOrder {
				t.Fatalf("first approval: %+v", a)
			}
			if err := h.client.RespondApproval(ctxT(t), first, "once", a.RequestID); err != nil {
				t.Fatal(err)
			}
			h.rec.waitKind(t, first, wire.RunCompleted, 1)
			second := h.startRun("approve-me: rm -rf ./b")
			b := h.rec.waitKind(t, second, wire.ApprovalRequest, 1)[0]
			if p := b.Data.(*wire.ApprovalPayload); p.AnswerByOrder != tt.byOrder {
				t.Errorf("second approval: by order %v, want %v", p.AnswerByOrder, tt.byOrder)
			}
			if got := string(b.Payload); tt.byOrder != (strings.Contains(got, `"answer_by_order":true`)) {
				t.Errorf("payload: %s", got)
			}
		})
	}
}

// answer_by_order is Herald's to say: a server cannot send it.
func TestAnswerByOrderNotTakenFromServer(t *testing.T) {
	t.Parallel()
	n := &apiserver.Normalizer{Gateway: "api"}
	ev, _ := n.Event(apiserver.SSEEvent{Data: `{"event":"approval.request","run_id":"run_1","command":"rm -rf x","request_id":"q1","answer_by_order":true}`})
	if p := ev.Data.(*wire.ApprovalPayload); p.AnswerByOrder || strings.Contains(string(ev.Payload), "answer_by_order") {
		t.Errorf("taken from the server: %+v %s", p, ev.Payload)
	}
}

// A reply to a written answer that does not decode (not JSON, or a
// resolved that is neither a count nor a bool) leaves the outcome
// unknown: the server may have acted on it. The session turns' answers
// take this path too.
func TestUndecodableAnswerReplyIsUnknown(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"<html>ok</html>", `{"choice":"once","resolved":{"n":1}}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, body)
		}))
		c, err := apiserver.New(apiserver.Config{URL: srv.URL, Key: "k"})
		if err != nil {
			t.Fatal(err)
		}
		err = c.RespondApproval(ctxT(t), "run_1", "once", "q1")
		if !errors.Is(err, wire.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "whether it took effect is unknown") {
			t.Errorf("reply %s: %v", body, err)
		}
		srv.Close()
	}
}
