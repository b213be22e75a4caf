package bridge_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/herald-desktop/herald/backend/bridge/bridgetest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// answerRoute serves the fake route, with its answers handled by answer
// (given the fake, to apply the answer or not).
func answerRoute(t *testing.T, f *bridgetest.Fake, answer func(w http.ResponseWriter, r *http.Request)) string {
	return httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			answer(w, r)
			return
		}
		f.ServeHTTP(w, r)
	}))
}

// dropConn closes the connection without a reply.
func dropConn(w http.ResponseWriter) {
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		conn.Close()
	}
}

// TestAnswerOutcomeAfterTheWrite: once the answer is written, whatever
// comes back that is not an understood reply leaves the outcome unknown
// (wire.ErrOutcomeUnknown), on the one answer path; a reply that says
// the route did not act (a redirect, 4xx, 503) is a refusal, and a
// connection that could not be made is "not sent".
func TestAnswerOutcomeAfterTheWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answer  func(w http.ResponseWriter, r *http.Request)
		unknown bool
	}{
		{"dropped, no reply", func(w http.ResponseWriter, _ *http.Request) { dropConn(w) }, true},
		{"proxy timeout 504", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGatewayTimeout) }, true},
		{"proxy 502", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }, true},
		{"500", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, true},
		{"200 not JSON", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>ok</html>")) }, true},
		{"200 unknown status", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"status": "queued"}`)) }, true},
		{"truncated body", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"status": "ans`))
			dropConn(w)
		}, true},
		{"503 not now", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }, false},
		{"409 refused", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"status": "mismatch", "detail": "Refused: a different version of the request."}`))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := bridgetest.New("tok")
			url := answerRoute(t, f, tc.answer)
			c, s := start(t, url, "tok", "me")
			s.state(t, source.StateConnected)
			id, _ := f.Ask(bridgetest.Ask{Command: "rm -rf build"})
			s.event(t, wire.ApprovalServerRequest)
			err := c.RespondServerRequest(context.Background(), id, "once")
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, wire.ErrOutcomeUnknown); got != tc.unknown {
				t.Fatalf("unknown outcome %v, want %v: %v", got, tc.unknown, err)
			}
			if tc.unknown && !strings.Contains(err.Error(), "whether it took effect is unknown") {
				t.Fatalf("the error does not say the outcome is unknown: %v", err)
			}
		})
	}
	t.Run("not connected", func(t *testing.T) {
		t.Parallel()
		f := bridgetest.New("tok")
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close") // no connection kept for the answer to reuse
			f.ServeHTTP(w, r)
		}))
		c, s := start(t, srv.URL, "tok", "gone")
		s.state(t, source.StateConnected)
		id, _ := f.Ask(bridgetest.Ask{Command: "rm -rf build"})
		s.event(t, wire.ApprovalServerRequest)
		srv.Close() // nothing listens: the answer cannot be written
		err := c.RespondServerRequest(context.Background(), id, "once")
		if err == nil || errors.Is(err, wire.ErrOutcomeUnknown) {
			t.Fatalf("an answer that could not be sent: %v", err)
		}
	})
}

// TestUnknownAnswerSettledByThePoll: the route applies the answer and
// drops the connection. The outcome is unknown, then the client says
// that the answer was this Herald's own, with a request.cancel that says
// Herald answered, with its choice (wire.AnsweredHere): from the poll
// that saw the request end while the answer was on its way, or from the
// next one.
func TestUnknownAnswerSettledByThePoll(t *testing.T) {
	t.Parallel()
	f := bridgetest.New("tok")
	url := answerRoute(t, f, func(w http.ResponseWriter, r *http.Request) {
		f.ServeHTTP(httptest.NewRecorder(), r) // applied
		dropConn(w)
	})
	c, s := start(t, url, "tok", "me")
	s.state(t, source.StateConnected)
	id, answered := f.Ask(bridgetest.Ask{Command: "rm -rf build"})
	s.event(t, wire.ApprovalServerRequest)
	err := c.RespondServerRequest(context.Background(), id, "once")
	if <-answered != "once" {
		t.Fatal("the route did not apply the answer")
	}
	if !errors.Is(err, wire.ErrOutcomeUnknown) {
		t.Fatalf("answer whose reply was lost: %v", err)
	}
	f.Notice("ls", bridgetest.Origin{}) // a change: a poll returns
	ev := s.event(t, wire.RequestCancel)
	cp, _ := ev.Data.(*wire.CancelPayload)
	if ev.RequestID != id || cp == nil || cp.Reason != "resolved" || cp.Answered != wire.AnsweredHere || cp.Choice != "once" {
		t.Fatalf("settled by %+v %+v", ev, cp)
	}
}

// TestUnknownAnswerStillListedIsDeliveredAgain: the connection drops after
// the answer was written but before the route applied it: the next poll
// still lists the request, so the client delivers it again (the inbox
// then offers it again), and an answer to it goes through once.
func TestUnknownAnswerStillListedIsDeliveredAgain(t *testing.T) {
	t.Parallel()
	f := bridgetest.New("tok")
	var drop atomic.Bool
	drop.Store(true)
	url := answerRoute(t, f, func(w http.ResponseWriter, r *http.Request) {
		if drop.Load() {
			dropConn(w) // not applied
			return
		}
		f.ServeHTTP(w, r)
	})
	c, s := start(t, url, "tok", "me")
	s.state(t, source.StateConnected)
	id, answered := f.Ask(bridgetest.Ask{Command: "rm -rf build"})
	s.event(t, wire.ApprovalServerRequest)
	if err := c.RespondServerRequest(context.Background(), id, "once"); !errors.Is(err, wire.ErrOutcomeUnknown) {
		t.Fatalf("answer: %v", err)
	}
	f.Notice("ls", bridgetest.Origin{}) // a change: the next poll returns
	ev := s.event(t, wire.ApprovalServerRequest)
	if ev.RequestID != id {
		t.Fatalf("delivered %+v", ev)
	}
	if a, ok := ev.Approval(); !ok || a.Command != "rm -rf build" {
		t.Fatalf("delivered again without its command: %+v", a)
	}
	drop.Store(false)
	if err := c.RespondServerRequest(context.Background(), id, "deny"); err != nil {
		t.Fatal(err)
	}
	if got := <-answered; got != "deny" || f.Answers() != 1 {
		t.Fatalf("the route took %q (%d answers)", got, f.Answers())
	}
}

// TestAnsweredByAnotherClientSaysSo: a request another Herald answered
// ends with a cancel that names the other client's choice
// (wire.AnsweredElsewhere).
func TestAnsweredByAnotherClientSaysSo(t *testing.T) {
	t.Parallel()
	f, srv := bridgetest.Serve(t, "tok")
	other, so := start(t, srv.URL, "tok", "other")
	_, s := start(t, srv.URL, "tok", "me")
	s.state(t, source.StateConnected)
	so.state(t, source.StateConnected)
	id, _ := f.Ask(bridgetest.Ask{Command: "rm -rf build"})
	s.event(t, wire.ApprovalServerRequest)
	so.event(t, wire.ApprovalServerRequest)
	if err := other.RespondServerRequest(context.Background(), id, "deny"); err != nil {
		t.Fatal(err)
	}
	ev := s.event(t, wire.RequestCancel)
	cp, _ := ev.Data.(*wire.CancelPayload)
	if cp == nil || cp.Reason != "resolved" || cp.Answered != wire.AnsweredElsewhere || cp.Choice != "deny" {
		t.Fatalf("cancel %+v", cp)
	}
}
