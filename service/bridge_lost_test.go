package service

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/bridge/bridgetest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
	"github.com/herald-desktop/herald/backend/wire"
)

// lossyRoute is a bridge route that applies an answer and then closes
// the connection without replying, and that can hold its poll replies
// (the poll is served, its reply waits) until released.
type lossyRoute struct {
	f *bridgetest.Fake

	mu      sync.Mutex
	hold    chan struct{} // non-nil: poll replies wait until it is closed
	answers int           // answers applied and left without a reply
}

func (l *lossyRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	l.f.ServeHTTP(rec, r)
	if r.Method == http.MethodPost {
		l.mu.Lock()
		l.answers++
		l.mu.Unlock()
		// Applied; now the link drops before the reply.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	l.mu.Lock()
	hold := l.hold
	l.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = bytes.NewReader(rec.Body.Bytes()).WriteTo(w)
}

func (l *lossyRoute) holdPolls() func() {
	ch := make(chan struct{})
	l.mu.Lock()
	l.hold = ch
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		l.hold = nil
		l.mu.Unlock()
		close(ch)
	}
}

// TestBridgeLostReplyIsHeraldsOwnAnswer: the route applies Herald's answer
// and closes the connection without replying. The answer is an unknown
// outcome (never "failed…still pending, try again", never sent again),
// and the next poll, whose recent entry names this Herald's client and
// the choice, settles it as Herald's own answer with that choice, in the
// inbox and the history (not "resolved elsewhere").
func TestBridgeLostReplyIsHeraldsOwnAnswer(t *testing.T) {
	t.Parallel()
	route := &lossyRoute{f: bridgetest.New("tok")}
	srv := httptest.NewServer(route)
	t.Cleanup(srv.Close)
	store := approval.NewMemoryStore()
	ch := newChanges()
	s := New(Config{Store: store})
	onChange(s, ch.poke)
	defer s.Close()
	src, err := s.AddSource(SourceConfig{Kind: KindBridge, Config: source.Config{Name: "b", URL: srv.URL, Secrets: map[string]string{"token": "tok"}}})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, srcGuard, "connected", ch.next, func() bool { return src.Status().State == source.StateConnected })
	_, answered := route.f.Ask(bridgetest.Ask{Command: "git push --force origin feature"})
	req := onePending(t, s, ch)

	release := route.holdPolls() // the poll that sees the answer waits
	err = s.Answer(context.Background(), req.Key, "once", "cli", false)
	var ue *approval.UnknownOutcomeError
	var se *approval.SendError
	if !errors.As(err, &ue) || !errors.Is(err, wire.ErrOutcomeUnknown) || errors.As(err, &se) || strings.Contains(err.Error(), "try again") {
		t.Fatalf("answer whose reply was lost: %v", err)
	}
	if got := <-answered; got != "once" {
		t.Fatalf("the route applied %q", got)
	}
	if r, _ := s.Inbox().Get(req.Key); r.State != approval.StateSentUnknown || r.Outcome.Choice != "once" {
		t.Fatalf("before the next poll: %+v", r)
	}
	release()
	route.f.Notice("ls", bridgetest.Origin{}) // a change: the next poll returns
	testwait.Until(t, srcGuard, "the answer settled", ch.next, func() bool {
		r, _ := s.Inbox().Get(req.Key)
		return !r.State.Live()
	})
	r, _ := s.Inbox().Get(req.Key)
	if r.State != approval.StateResolved || r.Outcome.Choice != "once" || r.Outcome.Reason == approval.CancelResolvedElsewhere ||
		!strings.Contains(r.Outcome.Detail, "this Herald's answer") {
		t.Fatalf("settled as %+v", r.Outcome)
	}
	entries, _ := store.List(approval.Filter{})
	last := entries[len(entries)-1]
	if last.Key != req.Key || last.State != approval.StateResolved || last.Choice != "once" || last.Reason == approval.CancelResolvedElsewhere {
		t.Fatalf("history's last entry %+v", last)
	}
	if err := s.Answer(context.Background(), req.Key, "deny", "cli", false); err == nil {
		t.Fatal("a second answer was sent")
	}
	route.mu.Lock()
	defer route.mu.Unlock()
	if route.answers != 1 || route.f.Answers() != 1 {
		t.Fatalf("the route got %d answers (%d applied)", route.answers, route.f.Answers())
	}
}
