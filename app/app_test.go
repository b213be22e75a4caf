package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/zalando/go-keyring"
)

const guard = 20 * time.Second

// fakePlatform records what the app asks of Wails.
type fakePlatform struct {
	mu        sync.Mutex
	emits     map[string]int
	last      Snapshot
	notified  []Notification
	withdrawn []string
	// up is what is on screen: shown, not yet withdrawn, by id.
	up      map[string]Notification
	shown   int
	action  func(id, action string)
	changed chan struct{}
}

func newFakePlatform() *fakePlatform {
	return &fakePlatform{emits: map[string]int{}, changed: make(chan struct{})}
}

func (f *fakePlatform) poke() { close(f.changed); f.changed = make(chan struct{}) }

func (f *fakePlatform) Emit(name string, data any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.emits[name]++
	if s, ok := data.(Snapshot); ok {
		f.last = s
	}
	f.poke()
}
func (f *fakePlatform) ShowWindow() { f.mu.Lock(); f.shown++; f.poke(); f.mu.Unlock() }
func (f *fakePlatform) Quit()       {}
func (f *fakePlatform) Notify(n Notification) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notified = append(f.notified, n)
	if f.up == nil {
		f.up = map[string]Notification{}
	}
	f.up[n.ID] = n
	f.poke()
	return nil
}
func (f *fakePlatform) Withdraw(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.withdrawn = append(f.withdrawn, id)
	delete(f.up, id)
	f.poke()
	return nil
}
func (f *fakePlatform) OnNotificationAction(fn func(id, action string)) {
	f.mu.Lock()
	f.action = fn
	f.mu.Unlock()
}

func (f *fakePlatform) waitFor(t testing.TB, what string, cond func(f *fakePlatform) bool) {
	t.Helper()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for {
		f.mu.Lock()
		ok := cond(f)
		ch := f.changed
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestBatcherFoldsBursts(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Unix(0, 0))
	flushed := make(chan struct{}, 10)
	b := NewBatcher(clk, 100*time.Millisecond, func() { flushed <- struct{}{} })
	for i := 0; i < 50; i++ {
		b.Poke()
	}
	if clk.Waiters() != 1 {
		t.Fatalf("%d timers for a burst, want 1", clk.Waiters())
	}
	select {
	case <-flushed:
		t.Fatal("flushed before the interval")
	default:
	}
	clk.Advance(100 * time.Millisecond)
	<-flushed
	b.Poke()
	clk.BlockUntil(1)
	clk.Advance(100 * time.Millisecond)
	<-flushed
	if len(flushed) != 0 {
		t.Fatalf("extra flushes: %d", len(flushed))
	}
}

// desktop runs an App against a fake gateway with a fake platform. The
// keychain is go-keyring's mock (process-wide), so these tests are not
// parallel.
func desktop(t *testing.T) (*App, *fakePlatform, *hermestest.Server, string) {
	t.Helper()
	keyring.MockInit()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	t.Cleanup(srv.Close)
	live, stored := srv.CreateSession()
	settings, _ := NewSettingsStore(t.TempDir())
	st := DefaultSettings()
	st.Gateways = []GatewaySettings{{Name: "lab", URL: srv.URL, Kind: "ws", Auth: "token", Sessions: []string{stored}}}
	if err := settings.Save(st); err != nil {
		t.Fatal(err)
	}
	secrets := NewSecrets(OSKeyring{})
	if err := secrets.Set("lab", "token", srv.Token()); err != nil {
		t.Fatal(err)
	}
	a, p := startDesktop(t, settings, secrets)
	waitAttached(t, srv, live)
	return a, p, srv, live
}

func waitAttached(t *testing.T, srv *hermestest.Server, live string) {
	t.Helper()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for {
		ch := srv.Changed()
		for _, s := range srv.Sessions() {
			if s.ID == live && s.Attached {
				return
			}
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatal("the app never attached to the session")
		}
	}
}

func TestNotificationActionAnswersAndWithdraws(t *testing.T) {
	a, p, srv, live := desktop(t)
	_, agent, _ := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf ./build"})
	var n Notification
	p.waitFor(t, "a notification", func(f *fakePlatform) bool {
		if len(f.notified) > 0 {
			n = f.notified[0]
		}
		return len(f.notified) > 0
	})
	if len(n.Actions) != 3 || n.Actions[0][0] != ActionOpen || n.Actions[1][0] != "once" || n.Actions[2][0] != "deny" || !strings.HasPrefix(n.Body, "rm -rf ./build\n") {
		t.Fatalf("notification %+v, want Open / Approve once / Deny and the command", n)
	}
	if len(srv.Answers()) != 0 {
		t.Fatal("answered before the user acted")
	}
	p.mu.Lock()
	act := p.action
	p.mu.Unlock()
	act(n.ID, "once") // the user clicks "Approve once"
	if c := <-agent; c != "once" {
		t.Fatalf("gateway got %q", c)
	}
	p.waitFor(t, "withdrawn and confirmed", func(f *fakePlatform) bool {
		return len(f.withdrawn) == 1 && f.withdrawn[0] == n.ID && len(f.last.Recent) == 1 && f.last.Recent[0].State == approval.StateResolved
	})
	if got := a.Snapshot().Recent[0].Outcome.Surface; got != "notification" {
		t.Fatalf("surface %q", got)
	}
	// "Open…" opens the sheet.
	act(n.ID, ActionOpen)
	p.waitFor(t, "window shown", func(f *fakePlatform) bool { return f.shown > 0 && f.emits[EventOpenApproval] == 1 })
	// One notification for the approval (deduplicated) and, after the
	// answer from it, one short one saying what the gateway confirmed.
	p.mu.Lock()
	var approvals, confirmations []Notification
	for _, x := range p.notified {
		if x.ID == n.ID {
			approvals = append(approvals, x)
		} else {
			confirmations = append(confirmations, x)
		}
	}
	if len(approvals) != 1 {
		t.Errorf("%d notifications for the approval, want 1 (deduplicated)", len(approvals))
	}
	if len(confirmations) != 1 || confirmations[0].Title != "Allowed once: rm -rf ./build" || confirmations[0].Body != "Confirmed by lab." ||
		confirmations[0].Urgency == UrgencyCritical || confirmations[0].Expire <= 0 {
		t.Errorf("confirmations %+v, want one: Allowed once, confirmed by lab, expiring, not critical", confirmations)
	}
	p.mu.Unlock()
}

func TestTrayAndWindowAnswer(t *testing.T) {
	a, p, srv, live := desktop(t)
	_, agent1, _ := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "git reset --hard"})
	p.waitFor(t, "pending in snapshot", func(f *fakePlatform) bool { return len(f.last.Approvals) == 1 })
	m := trayModel(a.Snapshot())
	if m.State != TrayPending || len(m.Pending) != 1 || !m.Pending[0].CanOnce {
		t.Fatalf("tray model %+v", m)
	}
	a.TrayAnswer(m.Pending[0].Key, "deny")
	if c := <-agent1; c != "deny" {
		t.Fatalf("tray answer reached the gateway as %q", c)
	}
	_, agent2, _ := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf ./x"})
	p.waitFor(t, "second pending", func(f *fakePlatform) bool {
		return len(f.last.Approvals) == 1 && f.last.Approvals[0].Command == "rm -rf ./x"
	})
	key := a.Snapshot().Approvals[0].Key
	if err := a.Answer(key, "always", false); err == nil {
		t.Fatal("always accepted without confirmation")
	}
	if err := a.Answer(key, "once", false); err != nil {
		t.Fatal(err)
	}
	if c := <-agent2; c != "once" {
		t.Fatalf("window answer reached the gateway as %q", c)
	}
	if err := a.Answer(key, "deny", false); err == nil {
		t.Fatal("a second answer was accepted")
	}
	if n := len(srv.Answers()); n != 2 {
		t.Fatalf("gateway saw %d answers, want 2", n)
	}
	if trayModel(a.Snapshot()).State != TrayConnected {
		t.Fatal("tray still shows pending")
	}
}

func TestSnapshotPushesAreBatched(t *testing.T) {
	_, p, srv, live := desktop(t)
	if err := srv.Prompt(live, "burst 200"); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "burst seen", func(f *fakePlatform) bool {
		for _, s := range f.last.Sessions {
			if s.Status == "complete" {
				return true
			}
		}
		return false
	})
	p.mu.Lock()
	n := p.emits[EventSnapshot]
	p.mu.Unlock()
	if n >= 100 {
		t.Fatalf("%d snapshot pushes for ~205 events: not batched", n)
	}
	t.Logf("%d pushes for a 200-event burst", n)
}

// TestSnapshotHasNoNullLists: the window reads every list as an array; an
// empty inbox or gateway list must not arrive as null.
func TestSnapshotHasNoNullLists(t *testing.T) {
	settings, _ := NewSettingsStore(t.TempDir())
	a := New(Deps{Settings: settings, Secrets: NewSecrets(brokenKeyring{block: closedChan()}), Autostart: Autostart{Dir: t.TempDir()}})
	defer a.Close()
	b, err := json.Marshal(a.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"gateways", "sessions", "approvals", "recent"} {
		if bytes.Contains(b, []byte(`"`+k+`":null`)) {
			t.Errorf("snapshot sends %s as null: %s", k, b)
		}
	}
}

func closedChan() chan struct{} { c := make(chan struct{}); close(c); return c }
