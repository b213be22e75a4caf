package service

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/bridge/bridgetest"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
)

type noticeLog struct {
	mu sync.Mutex
	ns []SessionNotice
	ch *changes
}

func (l *noticeLog) add(n SessionNotice) {
	l.mu.Lock()
	l.ns = append(l.ns, n)
	l.mu.Unlock()
	l.ch.poke()
}

func (l *noticeLog) of(kind NoticeKind) []SessionNotice {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []SessionNotice
	for _, n := range l.ns {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

// onePending waits for the inbox to hold exactly one pending request.
func onePending(t *testing.T, s *Service, ch *changes) approval.Request {
	t.Helper()
	var req approval.Request
	testwait.Until(t, srcGuard, "the approval in the inbox", ch.next, func() bool {
		p := s.Inbox().Pending()
		if len(p) == 1 {
			req = p[0]
		}
		return len(p) == 1
	})
	return req
}

// TestBridgeApprovalsGoThroughTheInbox: an approval asked in a Hermes CLI
// process reaches the inbox through the bridge, with where it was asked,
// and the inbox's one answer path answers it on the route.
func TestBridgeApprovalsGoThroughTheInbox(t *testing.T) {
	t.Parallel()
	f, srv := bridgetest.Serve(t, "tok")
	ch := newChanges()
	s := New(Config{Store: approval.NewMemoryStore()})
	onChange(s, ch.poke)
	defer s.Close()
	src, err := s.AddSource(SourceConfig{Kind: KindBridge, Config: source.Config{Name: "home-bridge", URL: srv.URL, Secrets: map[string]string{"token": "tok"}}})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, srcGuard, "connected", ch.next, func() bool { return src.Status().State == source.StateConnected })
	if st := src.Status(); st.Kind != "bridge" {
		t.Fatalf("status %+v", st)
	}
	id, answered := f.Ask(bridgetest.Ask{Command: "rm -rf ./build\x1b[2K", Description: "recursive delete",
		Choices: []string{"once", "deny"}, Origin: bridgetest.Origin{Surface: "cli", SessionKey: "20261203_cli"}})
	req := onePending(t, s, ch)
	if req.Gateway != "home-bridge" || req.RequestID != id || req.StoredSession != "20261203_cli" ||
		strings.Join(req.Choices, ",") != "once,deny" || req.Dialect != approval.DialectServerRequest {
		t.Fatalf("request %+v", req)
	}
	// Commands are shown through approval.Visible like any other source's.
	if !strings.Contains(req.DisplayCommand(), "rm -rf ./build") || strings.ContainsRune(req.DisplayCommand(), 0x1b) {
		t.Fatalf("display command %q", req.DisplayCommand())
	}
	if err := s.Answer(context.Background(), req.Key, "always", "test", true); err == nil {
		t.Fatal("a choice the request does not offer was sent")
	}
	if err := s.Answer(context.Background(), req.Key, "once", "test", false); err != nil {
		t.Fatal(err)
	}
	if got := <-answered; got != "once" {
		t.Fatalf("the route got %q", got)
	}
	if r, _ := s.Inbox().Get(req.Key); r.State != approval.StateResolved {
		t.Fatalf("after the answer: %+v", r)
	}
	if err := s.Answer(context.Background(), req.Key, "deny", "test", false); err == nil {
		t.Fatal("a second answer was accepted")
	}
	if f.Answers() != 1 {
		t.Fatalf("the route took %d answers", f.Answers())
	}
}

// TestBridgeAnswerElsewhereEndsTheRequest: another Herald (or Hermes' own
// prompt) answered first; Herald's answer is refused and the request ends
// as answered elsewhere, never pending again.
func TestBridgeAnswerElsewhereEndsTheRequest(t *testing.T) {
	t.Parallel()
	f, srv := bridgetest.Serve(t, "tok")
	ch := newChanges()
	s := New(Config{Store: approval.NewMemoryStore()})
	onChange(s, ch.poke)
	defer s.Close()
	if _, err := s.AddSource(SourceConfig{Kind: KindBridge, Config: source.Config{Name: "b", URL: srv.URL, Secrets: map[string]string{"token": "tok"}}}); err != nil {
		t.Fatal(err)
	}
	id, _ := f.Ask(bridgetest.Ask{Command: "rm -rf ./build"})
	req := onePending(t, s, ch)
	f.End(id, "transport_interrupted")
	testwait.Until(t, srcGuard, "the request ended", ch.next, func() bool {
		r, _ := s.Inbox().Get(req.Key)
		return !r.State.Live()
	})
	r, _ := s.Inbox().Get(req.Key)
	if r.State != approval.StateCancelled || r.Outcome.Reason != approval.CancelInterrupted {
		t.Fatalf("ended as %+v", r)
	}
	err := s.Answer(context.Background(), req.Key, "once", "test", false)
	var ee *approval.EndedError
	if !errors.As(err, &ee) {
		t.Fatalf("answer after the end: %v", err)
	}
}

// TestBridgeNotices: on Hermes without approval transports, an approval
// waiting in Telegram is shown as a notice to answer there, and its end too.
func TestBridgeNotices(t *testing.T) {
	t.Parallel()
	f, srv := bridgetest.Serve(t, "tok")
	ch := newChanges()
	log := &noticeLog{ch: ch}
	s := New(Config{})
	onChange(s, ch.poke)
	dispatch(s, WatchNotices, func(n Notify) { log.add(*n.Notice) })
	defer s.Close()
	if _, err := s.AddSource(SourceConfig{Kind: KindBridge, Config: source.Config{Name: "b", URL: srv.URL, Secrets: map[string]string{"token": "tok"}}}); err != nil {
		t.Fatal(err)
	}
	id := f.Notice("rm -rf build", bridgetest.Origin{Surface: "telegram", Chat: "Ops", Title: "Deploy", SessionKey: "agent:main:telegram:dm:1"})
	testwait.Until(t, srcGuard, "the notice", ch.next, func() bool { return len(log.of(NoticeApprovalElsewhere)) == 1 })
	n := log.of(NoticeApprovalElsewhere)[0]
	if n.Gateway != "b" || n.Title != "Deploy" || n.Key != "agent:main:telegram:dm:1" ||
		n.Text != "an approval is waiting in Telegram (Ops): `rm -rf build`. Answer it where it was asked." {
		t.Fatalf("notice %+v", n)
	}
	if len(s.Inbox().Pending()) != 0 {
		t.Fatal("a notice became an answerable request")
	}
	f.End(id, "deny")
	testwait.Until(t, srcGuard, "the notice's end", ch.next, func() bool { return len(log.of(NoticeApprovalEnded)) == 1 })
	if e := log.of(NoticeApprovalEnded)[0]; e.Status != "deny" || !strings.Contains(e.Text, "Telegram") {
		t.Fatalf("end %+v", e)
	}
}

// TestGatewayWithBridge: a gateway added with Bridge follows its
// dashboard's bridge too, and removing the gateway removes the bridge.
func TestGatewayWithBridge(t *testing.T) {
	t.Parallel()
	_, srv := bridgetest.Serve(t, "tok")
	s := New(Config{})
	defer s.Close()
	if _, err := s.AddSource(SourceConfig{Kind: KindGateway, Bridge: true, Config: source.Config{Name: "home", URL: srv.URL, Secrets: map[string]string{"token": "tok"}}}); err != nil {
		t.Fatal(err)
	}
	b, ok := s.Source(BridgeName("home"))
	if !ok || b.Kind() != KindBridge {
		t.Fatalf("bridge source: %v %v", b, ok)
	}
	s.Remove("home")
	if _, ok := s.Source(BridgeName("home")); ok {
		t.Fatal("the bridge outlived its gateway")
	}
	if k, err := ParseKind("bridge"); err != nil || k != KindBridge {
		t.Fatalf("ParseKind(bridge) = %v, %v", k, err)
	}
}

// TestBridgeNoticeOfAFollowedDashboardSessionIsNotShownTwice: on a
// dashboard that serves both /api/ws and the bridge, the notice of an
// approval of a session Herald follows on /api/ws is the same request as
// the one there (matched by the session's stored key), so no notice; an
// approval of a session Herald does not follow is shown as a notice.
func TestBridgeNoticeOfAFollowedDashboardSessionIsNotShownTwice(t *testing.T) {
	t.Parallel()
	gw := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	t.Cleanup(gw.Close)
	_, stored := gw.CreateSession()
	f := bridgetest.New(gw.Token())
	target, _ := url.Parse(gw.URL)
	mux := http.NewServeMux()
	mux.Handle("/api/plugins/herald/", f)
	mux.Handle("/", httputil.NewSingleHostReverseProxy(target))
	dash := httptest.NewServer(mux)
	t.Cleanup(dash.Close)

	ch := newChanges()
	log := &noticeLog{ch: ch}
	s := New(Config{})
	onChange(s, ch.poke)
	dispatch(s, WatchNotices, func(n Notify) { log.add(*n.Notice) })
	defer s.Close()
	// The bridge added on its own, under a name of the user's: matched by
	// the dashboard's address.
	if _, err := s.AddSource(SourceConfig{Kind: KindGateway, Config: source.Config{Name: "lab", URL: dash.URL, Secrets: map[string]string{"token": gw.Token()}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSource(SourceConfig{Kind: KindBridge, Config: source.Config{Name: "lab plugin", URL: dash.URL, Secrets: map[string]string{"token": gw.Token()}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Follow(context.Background(), "lab", stored); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, srcGuard, "the session followed", ch.next, func() bool { return s.followsOnGatewayOf("lab plugin", "", stored) })
	f.Notice("rm -rf ./a", bridgetest.Origin{Surface: "dashboard", Process: "dashboard", SessionKey: stored, Title: "followed"})
	f.Notice("rm -rf ./b", bridgetest.Origin{Surface: "dashboard", Process: "dashboard", SessionKey: "elsewhere-key", Title: "not followed"})
	testwait.Until(t, srcGuard, "the notice of the unfollowed session", ch.next, func() bool { return len(log.of(NoticeApprovalElsewhere)) >= 1 })
	got := log.of(NoticeApprovalElsewhere)
	if len(got) != 1 || got[0].Title != "not followed" {
		t.Fatalf("notices %+v", got)
	}
}

// TestBridgeRetriedWhenItsGatewayConnectsAgain: a bridge that waits for
// the user (the plugin not installed: refusals are never retried on a
// timer) is tried again when its gateway's link comes up again, the sign
// that the dashboard restarted, as it does after `herald bridge
// install`: the bridge then connects without the user pressing
// Reconnect.
func TestBridgeRetriedWhenItsGatewayConnectsAgain(t *testing.T) {
	t.Parallel()
	gw := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	t.Cleanup(gw.Close)
	f := bridgetest.New(gw.Token())
	var installed atomic.Bool
	target, _ := url.Parse(gw.URL)
	mux := http.NewServeMux()
	mux.HandleFunc("/api/plugins/herald/", func(w http.ResponseWriter, r *http.Request) {
		if !installed.Load() {
			http.NotFound(w, r)
			return
		}
		f.ServeHTTP(w, r)
	})
	mux.Handle("/", httputil.NewSingleHostReverseProxy(target))
	dash := httptest.NewServer(mux)
	t.Cleanup(dash.Close)

	ch := newChanges()
	s := New(Config{})
	onChange(s, ch.poke)
	defer s.Close()
	gwSrc, err := s.AddSource(SourceConfig{Kind: KindGateway, Bridge: true, Config: source.Config{Name: "lab", URL: dash.URL, Secrets: map[string]string{"token": gw.Token()}}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Source(BridgeName("lab"))
	testwait.Until(t, srcGuard, "the bridge waiting for the plugin", ch.next, func() bool {
		return b.Status().State == source.StateConfigError && gwSrc.Status().State == source.StateConnected
	})
	installed.Store(true)
	gw.Kick() // the dashboard restarts: the gateway's link drops and comes back
	testwait.Until(t, srcGuard, "the bridge connected", ch.next, func() bool { return b.Status().State == source.StateConnected })
}
