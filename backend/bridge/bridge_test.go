package bridge_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/bridge"
	"github.com/herald-desktop/herald/backend/bridge/bridgetest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

const bound = 10 * time.Second // generous: a loaded CI machine, never a timing assertion

type sink struct {
	events chan wire.Event
	status chan source.Status
}

func newSink() *sink {
	return &sink{events: make(chan wire.Event, 64), status: make(chan source.Status, 256)}
}

// recv returns the first value from ch that keep accepts, within bound.
func recv[T any](t *testing.T, ch <-chan T, what string, keep func(T) bool) T {
	t.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		select {
		case v := <-ch:
			if keep(v) {
				return v
			}
		case <-timer.C:
			t.Fatalf("no %s within %s", what, bound)
		}
	}
}

func (s *sink) event(t *testing.T, kind string) wire.Event {
	t.Helper()
	return recv(t, s.events, kind+" event", func(ev wire.Event) bool { return ev.Kind == kind })
}

func (s *sink) notice(t *testing.T, ended bool) *source.WaitingPayload {
	t.Helper()
	kind := source.EventWaitingElsewhere
	if ended {
		kind = source.EventWaitingElsewhereEnd
	}
	p, _ := s.event(t, kind).Data.(*source.WaitingPayload)
	if p == nil {
		t.Fatalf("%s without its payload", kind)
	}
	return p
}

func (s *sink) state(t *testing.T, want source.State) source.Status {
	t.Helper()
	return recv(t, s.status, "status "+string(want), func(st source.Status) bool { return st.State == want })
}

func start(t *testing.T, url, token, name string) (*bridge.Client, *sink) {
	t.Helper()
	s := newSink()
	c, err := bridge.New(bridge.Config{Name: name, URL: url, Token: token, ClientID: name,
		OnEvent: func(ev wire.Event) { s.events <- ev },
		OnStatus: func(st source.Status) {
			select {
			case s.status <- st:
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return c, s
}

func TestApprovalArrivesAndIsAnswered(t *testing.T) {
	t.Parallel()
	f, srv := bridgetest.Serve(t, "tok")
	c, s := start(t, "ws"+strings.TrimPrefix(srv.URL, "http")+"/api/ws?token=tok", "", "home-bridge")
	s.state(t, source.StateConnected)
	id, answered := f.Ask(bridgetest.Ask{Command: "rm -rf build", Description: "recursive delete",
		Origin: bridgetest.Origin{Surface: "telegram", SessionKey: "agent:main:telegram:dm:1", Chat: "Ops"}})
	ev := s.event(t, wire.ApprovalServerRequest)
	if ev.RequestID != id || ev.Gateway != "home-bridge" || ev.Epoch == "" || ev.StoredSession != "agent:main:telegram:dm:1" {
		t.Fatalf("event = %+v", ev)
	}
	a, ok := ev.Approval()
	if !ok || a.Command != "rm -rf build" || strings.Join(a.Choices, ",") != "once,session,always,deny" ||
		a.Description != "asked in Telegram (Ops) — recursive delete" {
		t.Fatalf("payload = %+v", a)
	}
	// Taken: the client polled again with the new cursor.
	deadline := time.Now().Add(bound)
	for !f.Seen(id) {
		if time.Now().After(deadline) {
			t.Fatal("the client never acknowledged the request")
		}
		time.Sleep(5 * time.Millisecond) // polling a fake's flag, not timing anything
	}
	if err := c.RespondServerRequest(context.Background(), id, "once"); err != nil {
		t.Fatal(err)
	}
	if got := <-answered; got != "once" {
		t.Fatalf("route got %q", got)
	}
	// Herald's own answer is settled by its result: no request.cancel
	// follows that could read as "answered elsewhere".
	id2, _ := f.Ask(bridgetest.Ask{Command: "git clean -fdx"})
	for ev := range s.events {
		if ev.Kind == wire.RequestCancel {
			t.Fatalf("request.cancel after Herald's own answer: %+v", ev)
		}
		if ev.RequestID == id2 {
			break
		}
	}
}

func TestTwoHeraldsAnswerAtOnce(t *testing.T) {
	t.Parallel()
	f, srv := bridgetest.Serve(t, "tok")
	a, sa := start(t, srv.URL, "tok", "a")
	b, sb := start(t, srv.URL, "tok", "b")
	sa.state(t, source.StateConnected)
	sb.state(t, source.StateConnected)
	id, answered := f.Ask(bridgetest.Ask{Command: "git reset --hard"})
	sa.event(t, wire.ApprovalServerRequest)
	sb.event(t, wire.ApprovalServerRequest)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, c := range []*bridge.Client{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.RespondServerRequest(context.Background(), id, []string{"once", "deny"}[i])
		}()
	}
	wg.Wait()
	won := <-answered
	var ae *bridge.AnswerError
	switch {
	case errs[0] == nil && errors.As(errs[1], &ae):
	case errs[1] == nil && errors.As(errs[0], &ae):
	default:
		t.Fatalf("want one winner and one refusal, got %v and %v", errs[0], errs[1])
	}
	if ae.Code != "already_answered" || ae.Choice != won {
		t.Fatalf("refusal = %+v, winner %q", ae, won)
	}
	if f.Answers() != 1 {
		t.Fatalf("route accepted %d answers", f.Answers())
	}
}

func TestLateAnswerIsRefusedWithWhy(t *testing.T) {
	t.Parallel()
	f, srv := bridgetest.Serve(t, "tok")
	c, s := start(t, srv.URL, "tok", "late")
	s.state(t, source.StateConnected)
	id, _ := f.Ask(bridgetest.Ask{Command: "rm -rf build"})
	s.event(t, wire.ApprovalServerRequest)
	f.End(id, "transport_timeout")
	ev := s.event(t, wire.RequestCancel)
	if cp, _ := ev.Data.(*wire.CancelPayload); cp == nil || cp.Reason != "timeout" {
		t.Fatalf("cancel = %+v", ev)
	}
	err := c.RespondServerRequest(context.Background(), id, "once")
	var ae *bridge.AnswerError
	if !errors.As(err, &ae) || ae.Code != "gone" || !strings.Contains(ae.Error(), "no longer waiting") {
		t.Fatalf("late answer: %v", err)
	}
}

func TestAnswerRacingTheEndEndsTheRequest(t *testing.T) {
	t.Parallel()
	f, srv := bridgetest.Serve(t, "tok")
	c, s := start(t, srv.URL, "tok", "race")
	s.state(t, source.StateConnected)
	id, _ := f.Ask(bridgetest.Ask{Command: "rm -rf build"})
	s.event(t, wire.ApprovalServerRequest)
	// The request ends on the route; the answer reaches it before the next
	// poll tells the client.
	err := func() error {
		f.End(id, "transport_interrupted")
		return c.RespondServerRequest(context.Background(), id, "once")
	}()
	var ae *bridge.AnswerError
	if err != nil && (!errors.As(err, &ae) || (ae.Code != "gone" && ae.Code != "unknown")) {
		t.Fatalf("answer after the end: %v", err)
	}
	if f.Answers() != 0 {
		t.Fatal("an answer was accepted for an ended request")
	}
	ev := s.event(t, wire.RequestCancel)
	if cp, _ := ev.Data.(*wire.CancelPayload); cp == nil || cp.Reason != "interrupted" {
		t.Fatalf("cancel = %+v", ev)
	}
}

// lossy drops the reply of the first answer after the route handled it.
type lossy struct {
	mu      sync.Mutex
	dropped bool
}

func (l *lossy) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost {
		return resp, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped {
		return resp, nil
	}
	l.dropped = true
	resp.Body.Close()
	return nil, errors.New("connection reset by peer")
}

func TestLostReplyIsReconciled(t *testing.T) {
	t.Parallel()
	f, srv := bridgetest.Serve(t, "tok")
	s := newSink()
	c, err := bridge.New(bridge.Config{Name: "me", URL: srv.URL, Token: "tok", ClientID: "me",
		HTTP: &http.Client{Transport: &lossy{}}, OnEvent: func(ev wire.Event) { s.events <- ev }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	id, answered := f.Ask(bridgetest.Ask{Command: "rm -rf build"})
	s.event(t, wire.ApprovalServerRequest)
	if err := c.RespondServerRequest(context.Background(), id, "deny"); err == nil {
		t.Fatal("the lost reply was not reported")
	}
	<-answered // the route did take it
	// Answering again (the inbox keeps the request pending after a send
	// error) finds this client's own answer: success, nothing sent twice.
	if err := c.RespondServerRequest(context.Background(), id, "deny"); err != nil {
		t.Fatalf("retry after a lost reply: %v", err)
	}
	if f.Answers() != 1 {
		t.Fatalf("route accepted %d answers", f.Answers())
	}
	// A different choice is not this answer: refused with the winner.
	err = c.RespondServerRequest(context.Background(), id, "once")
	var ae *bridge.AnswerError
	if !errors.As(err, &ae) || ae.Code != "already_answered" || ae.Choice != "deny" {
		t.Fatalf("other choice after the answer: %v", err)
	}
}

func TestNoticeArrivesAndEnds(t *testing.T) {
	t.Parallel()
	f, srv := bridgetest.Serve(t, "tok")
	_, s := start(t, srv.URL, "tok", "n")
	s.state(t, source.StateConnected)
	id := f.Notice("rm -rf build", bridgetest.Origin{Surface: "telegram", Chat: "Ops", Title: "Deploy"})
	n := s.notice(t, false)
	if n.ID != id || n.Command != "rm -rf build" || n.Where != "Telegram" || n.Title != "Deploy" || n.Chat != "Ops" {
		t.Fatalf("notice = %+v", n)
	}
	f.End(id, "deny")
	if e := s.notice(t, true); e.ID != id || e.Outcome != "deny" {
		t.Fatalf("ended = %+v", e)
	}
}

func TestDashboardRestartWithdrawsRequests(t *testing.T) {
	t.Parallel()
	f, srv := bridgetest.Serve(t, "tok")
	_, s := start(t, srv.URL, "tok", "r")
	s.state(t, source.StateConnected)
	id, _ := f.Ask(bridgetest.Ask{Command: "rm -rf build"})
	first := s.event(t, wire.ApprovalServerRequest)
	f.Restart()
	ev := s.event(t, wire.RequestCancel)
	if cp, _ := ev.Data.(*wire.CancelPayload); cp == nil || cp.Reason != wire.CancelGatewayRestarted || ev.RequestID != id || ev.Epoch != first.Epoch {
		t.Fatalf("cancel = %+v (first epoch %s)", ev, first.Epoch)
	}
}

func TestRefusedTokenAndMissingPlugin(t *testing.T) {
	t.Parallel()
	_, srv := bridgetest.Serve(t, "tok")
	_, s := start(t, srv.URL, "wrong", "auth")
	st := s.state(t, source.StateAuthFailed)
	if !strings.Contains(st.Err, "token") || strings.Contains(st.Err, "wrong") {
		t.Fatalf("auth error = %q", st.Err)
	}
	mux := http.NewServeMux() // a dashboard without the plugin
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	plain := httptestServer(t, mux)
	_, s2 := start(t, plain, "tok", "missing")
	st = s2.state(t, source.StateConfigError)
	if !strings.Contains(st.Err, "herald bridge install") {
		t.Fatalf("missing-plugin error = %q", st.Err)
	}
}

func httptestServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestOriginWhere(t *testing.T) {
	t.Parallel()
	for o, want := range map[bridge.Origin]string{
		{Surface: "cli"}: "the CLI", {Surface: "telegram"}: "Telegram", {Surface: "dashboard"}: "the dashboard",
		{}: "Hermes", {Surface: "mastodon"}: "mastodon",
	} {
		if got := o.Where(); got != want {
			t.Errorf("%+v.Where() = %q, want %q", o, got, want)
		}
	}
}

func TestDriverOpensAndChecks(t *testing.T) {
	t.Parallel()
	_, srv := bridgetest.Serve(t, "tok")
	d, err := source.Lookup("bridge")
	if err != nil || d.Kind != bridge.Kind {
		t.Fatalf("lookup: %+v %v", d, err)
	}
	ctx := context.Background()
	if r := d.Check(ctx, source.Config{URL: srv.URL, Secrets: map[string]string{"token": "tok"}}); !r.OK {
		t.Fatalf("check: %+v", r)
	}
	if r := d.Check(ctx, source.Config{URL: srv.URL, Secrets: map[string]string{"token": "no"}}); r.OK || r.Stage != "auth" {
		t.Fatalf("check with a wrong token: %+v", r)
	}
	src, err := d.Open(source.Config{Name: "b", URL: srv.URL, Secrets: map[string]string{"token": "tok"}}, source.Hooks{})
	if err != nil || src.Kind() != bridge.Kind || src.Name() != "b" {
		t.Fatalf("open: %v %v", src, err)
	}
}

// TestLostLinkKeepsRequests: while the route cannot be reached, what it
// showed stays (the plugin still waits for a request a Herald took); the
// first poll after reconnecting settles what ended meanwhile.
func TestLostLinkKeepsRequests(t *testing.T) {
	t.Parallel()
	f := bridgetest.New("tok")
	var down atomic.Bool
	url := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		f.ServeHTTP(w, r)
	}))
	c, s := start(t, url, "tok", "lossy")
	s.state(t, source.StateConnected)
	id, _ := f.Ask(bridgetest.Ask{Command: "rm -rf build"})
	s.event(t, wire.ApprovalServerRequest)
	down.Store(true)
	f.Notice("ls", bridgetest.Origin{}) // ends a poll in flight; the next one fails
	s.state(t, source.StateReconnecting)
	if err := c.RespondServerRequest(context.Background(), id, "once"); err == nil {
		t.Fatal("an answer went through a route that is down")
	}
	for drained := false; !drained; {
		select {
		case ev := <-s.events:
			if ev.Kind == wire.RequestCancel {
				t.Fatalf("the lost link withdrew a request: %+v", ev)
			}
		default:
			drained = true
		}
	}
	f.End(id, "expired")
	down.Store(false)
	c.ReconnectNow()
	ev := s.event(t, wire.RequestCancel)
	if cp, _ := ev.Data.(*wire.CancelPayload); cp == nil || ev.RequestID != id || cp.Reason != "timeout" {
		t.Fatalf("after reconnecting: %+v", ev)
	}
}
