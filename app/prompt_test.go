package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/zalando/go-keyring"
)

// promptDesk is a desktop app following one session of a fake gateway of
// dialect d (whose clock the test drives), with its config dir, audit
// file and logs, for the prompt tests.
type promptDesk struct {
	a    *App
	p    *fakePlatform
	srv  *hermestest.Server
	clk  *clock.Fake
	live string
	dir  string
	logs *syncBuf
	seen map[string]bool // prompts asked before
	st   approval.Store
}

func newPromptDesk(t *testing.T, d hermestest.Dialect) *promptDesk {
	t.Helper()
	keyring.MockInit()
	clk := clock.NewFake(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	srv := hermestest.NewServer(hermestest.Options{Dialect: d, Clock: clk})
	t.Cleanup(srv.Close)
	live, stored := srv.CreateSession()
	dir := t.TempDir()
	settings, _ := NewSettingsStore(filepath.Join(dir, "config"))
	st := DefaultSettings()
	st.Gateways = []GatewaySettings{{Name: "lab", URL: srv.URL, Kind: "ws", Auth: "token", Sessions: []string{stored}}}
	if err := settings.Save(st); err != nil {
		t.Fatal(err)
	}
	secrets := NewSecrets(OSKeyring{})
	if err := secrets.Set("lab", "token", srv.Token()); err != nil {
		t.Fatal(err)
	}
	store, err := approval.OpenStore(filepath.Join(dir, "config", "audit.db"), approval.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuf{}
	a := New(Deps{Version: "test", Settings: settings, Secrets: secrets, Store: store, Autostart: Autostart{Dir: filepath.Join(dir, "autostart")},
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(func() { a.Close(); store.Close() })
	p := newFakePlatform()
	a.Attach(p)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	waitAttached(t, srv, live)
	return &promptDesk{a: a, p: p, srv: srv, clk: clk, live: live, dir: dir, logs: logs, seen: map[string]bool{}, st: store}
}

// ask makes the agent ask and waits for the window to show it and the
// notification to go up.
func (d *promptDesk) ask(t *testing.T, spec hermestest.PromptSpec) (ApprovalView, Notification, <-chan hermestest.PromptResult, string) {
	t.Helper()
	id, done, err := d.srv.RequestPrompt(d.live, spec)
	if err != nil {
		t.Fatal(err)
	}
	var v ApprovalView
	var n Notification
	d.p.waitFor(t, spec.Kind+" shown", func(f *fakePlatform) bool {
		for _, a := range f.last.Approvals {
			if string(a.Kind) == spec.Kind && a.State == approval.StatePending && !d.seen[a.Key] {
				v = a
			}
		}
		for _, x := range f.notified {
			if x.ID == v.Key {
				n = x
			}
		}
		return v.Key != "" && n.ID != ""
	})
	d.seen[v.Key] = true
	return v, n, done, id
}

// recv waits for how the agent's prompt ended.
func recv(t *testing.T, done <-chan hermestest.PromptResult) hermestest.PromptResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(guard):
		t.Fatal("the agent's prompt never ended")
	}
	return hermestest.PromptResult{}
}

func (d *promptDesk) act(id, action string) {
	d.p.mu.Lock()
	fn := d.p.action
	d.p.mu.Unlock()
	fn(id, action)
}

// TestPromptsFromEverySurface: in both dialects, the window answers a
// clarify by choice and sudo and secret with typed values; a clarify is
// answered from a notification button and from the tray by a listed
// choice; sudo and secret notifications and tray entries only open the
// window and never answer.
func TestPromptsFromEverySurface(t *testing.T) {
	for _, dl := range []hermestest.Dialect{hermestest.Legacy, hermestest.Modern} {
		t.Run(dl.String(), func(t *testing.T) {
			d := newPromptDesk(t, dl)
			clarify := hermestest.PromptSpec{Kind: hermestest.PromptClarify, Question: "Deploy where?", Choices: []string{"dev", "prod"}}

			// window: clarify by choice
			v, n, done, _ := d.ask(t, clarify)
			if v.Question != "Deploy where?" || len(v.Choices) != 2 || v.Gateway != "lab" || v.Session != d.live {
				t.Fatalf("window shows %+v", v)
			}
			if len(n.Actions) != 3 || n.Actions[0][0] != ActionOpen || n.Actions[1] != [2]string{"choice:0", "dev"} || !strings.Contains(n.Body, "Deploy where?") {
				t.Fatalf("clarify notification %+v", n)
			}
			if err := d.a.Answer(v.Key, "prod", false); err != nil {
				t.Fatal(err)
			}
			if r := recv(t, done); r.Value != "prod" {
				t.Fatalf("agent got %+v", r)
			}
			d.p.waitFor(t, "withdrawn", func(f *fakePlatform) bool { return contains(f.withdrawn, n.ID) })

			// notification: clarify by a listed choice
			v, n, done, _ = d.ask(t, clarify)
			d.act(n.ID, "choice:0")
			if r := recv(t, done); r.Value != "dev" {
				t.Fatalf("agent got %+v", r)
			}
			d.p.waitFor(t, "answered from the notification", func(f *fakePlatform) bool {
				for _, r := range f.last.Recent {
					if r.Key == v.Key && r.State == approval.StateResolved && r.Outcome.Surface == "notification" {
						return true
					}
				}
				return false
			})

			// tray: clarify by a listed choice
			v, _, done, _ = d.ask(t, clarify)
			m := trayModel(d.a.Snapshot())
			var tp TrayApproval
			for _, x := range m.Pending {
				if x.Key == v.Key {
					tp = x
				}
			}
			if tp.Kind != "clarify" || tp.Choices[1] != "prod" || tp.CanOnce || !strings.Contains(tp.Label, "Deploy where?") {
				t.Fatalf("tray entry %+v", tp)
			}
			d.a.TrayAnswer(v.Key, "prod")
			if r := recv(t, done); r.Value != "prod" {
				t.Fatalf("agent got %+v", r)
			}

			// sudo: notification and tray only open; the window sends it
			const pw = "sudo-Pw-7f3k9q2x"
			v, n, done, _ = d.ask(t, hermestest.PromptSpec{Kind: hermestest.PromptSudo, Command: "sudo apt-get install jq"})
			if len(n.Actions) != 1 || n.Actions[0][0] != ActionOpen {
				t.Fatalf("sudo notification offers %v, want only Open…", n.Actions)
			}
			shown := d.p.shown
			for _, action := range []string{"once", "deny", "choice:0", "default"} {
				d.act(n.ID, action)
			}
			d.a.TrayAnswer(v.Key, "once")
			d.p.waitFor(t, "window opened", func(f *fakePlatform) bool { return f.shown >= shown+4 })
			for _, x := range trayModel(d.a.Snapshot()).Pending {
				if x.Key == v.Key && (x.CanOnce || x.Choices != [trayChoices]string{}) {
					t.Fatalf("sudo tray entry can answer: %+v", x)
				}
			}
			if got := d.srv.PromptAnswers(); len(got) != 3 {
				t.Fatalf("a notification or the tray answered a sudo prompt: %+v", got)
			}
			if err := d.a.AnswerText(v.Key, pw); err != nil {
				t.Fatal(err)
			}
			if r := recv(t, done); r.Value != pw {
				t.Fatalf("gateway got %+v", r)
			}

			// secret from the window
			const secret = "sk-weather-5b1d0c9e7a"
			v, n, done, _ = d.ask(t, hermestest.PromptSpec{Kind: hermestest.PromptSecret, EnvVar: "OPENWEATHER_API_KEY", Prompt: "Your OpenWeather key"})
			if !strings.Contains(n.Title, "OPENWEATHER_API_KEY") || len(n.Actions) != 1 {
				t.Fatalf("secret notification %+v", n)
			}
			if err := d.a.AnswerText(v.Key, secret); err != nil {
				t.Fatal(err)
			}
			if r := recv(t, done); r.Value != secret {
				t.Fatalf("gateway got %+v", r)
			}
			r := d.latest(t, v.Key)
			if r.Outcome.Choice != "secret provided" || r.Outcome.Surface != "window" {
				t.Fatalf("secret outcome %+v", r.Outcome)
			}
			// The first answer won: another one is refused and sends nothing.
			var ae *approval.AnsweredError
			if err := d.a.AnswerText(v.Key, "again"); !errors.As(err, &ae) {
				t.Fatalf("second answer: %v", err)
			}
			if got := len(d.srv.PromptAnswers()); got != 5 {
				t.Fatalf("gateway got %d answers, want 5", got)
			}
		})
	}
}

func (d *promptDesk) latest(t *testing.T, key string) approval.Request {
	t.Helper()
	r, ok := d.a.Service().Inbox().Get(key)
	if !ok {
		t.Fatalf("%s left the inbox", key)
	}
	return r
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestPromptsExpireAndElsewhere: a prompt that times out on the gateway,
// or that another client answers, leaves every surface: its notification
// is withdrawn and the window shows how it ended.
func TestPromptsExpireAndElsewhere(t *testing.T) {
	for _, dl := range []hermestest.Dialect{hermestest.Legacy, hermestest.Modern} {
		t.Run(dl.String(), func(t *testing.T) {
			d := newPromptDesk(t, dl)
			v, n, _, _ := d.ask(t, hermestest.PromptSpec{Kind: hermestest.PromptSudo})
			d.clk.Advance(120 * time.Second)
			d.p.waitFor(t, "expired and withdrawn", func(f *fakePlatform) bool {
				return contains(f.withdrawn, n.ID) && len(f.last.Approvals) == 0
			})
			if r := d.latest(t, v.Key); r.State != approval.StateExpired {
				t.Fatalf("sudo prompt %s, want expired", r.State)
			}

			v, n, _, id := d.ask(t, hermestest.PromptSpec{Kind: hermestest.PromptClarify, Question: "Again?", Choices: []string{"yes", "no"}})
			if err := d.srv.AnswerPromptElsewhere(id, "yes"); err != nil {
				t.Fatal(err)
			}
			if dl == hermestest.Legacy {
				// 0.18.2 says nothing; Herald learns it when it answers.
				var ee *approval.EndedError
				if err := d.a.Answer(v.Key, "no", false); !errors.As(err, &ee) || ee.Outcome.Reason != approval.CancelResolvedElsewhere {
					t.Fatalf("answer after elsewhere: %v", err)
				}
			}
			d.p.waitFor(t, "withdrawn", func(f *fakePlatform) bool { return contains(f.withdrawn, n.ID) })
			if r := d.latest(t, v.Key); r.State != approval.StateCancelled || r.Outcome.Reason != approval.CancelResolvedElsewhere {
				t.Fatalf("clarify %s/%s, want cancelled, resolved elsewhere", r.State, r.Outcome.Reason)
			}
		})
	}
}

// TestNoPromptValueLeaks answers sudo and secret prompts (and fails one
// send) and then searches everything Herald writes or shows for the
// values: the config dir (settings, audit database), the logs, every
// notification, the window's snapshot and warnings. A planted copy proves
// the search would find a leak.
func TestNoPromptValueLeaks(t *testing.T) {
	const pw = "leak-canary-password-4f9d2"
	const secret = "leak-canary-secret-8c1e7"
	d := newPromptDesk(t, hermestest.Legacy)

	v, _, done, _ := d.ask(t, hermestest.PromptSpec{Kind: hermestest.PromptSudo})
	if err := d.a.AnswerText(v.Key, pw); err != nil {
		t.Fatal(err)
	}
	recv(t, done)
	v, _, done, _ = d.ask(t, hermestest.PromptSpec{Kind: hermestest.PromptSecret, EnvVar: "API_KEY", Prompt: "key"})
	if err := d.a.AnswerText(v.Key, secret); err != nil {
		t.Fatal(err)
	}
	recv(t, done)
	// A value sent after the gateway stopped waiting: the error must not
	// carry it either.
	v, _, _, id := d.ask(t, hermestest.PromptSpec{Kind: hermestest.PromptSecret, EnvVar: "API_KEY", Prompt: "key"})
	d.srv.AnswerPromptElsewhere(id, "x")
	if err := d.a.AnswerText(v.Key, secret); err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("late answer: %v", err)
	}
	snap, _ := json.Marshal(d.a.Snapshot())
	d.p.mu.Lock()
	shown, _ := json.Marshal(d.p.notified)
	d.p.mu.Unlock()
	d.a.Close()
	d.st.Close()

	// The gateway got both values: the test is not vacuous.
	got := fmt.Sprint(d.srv.PromptAnswers())
	if !strings.Contains(got, pw) || !strings.Contains(got, secret) {
		t.Fatalf("the gateway did not get the values: %s", got)
	}
	values := []string{pw, secret}
	leaks := func() []string {
		var where []string
		filepath.WalkDir(d.dir, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			b, _ := os.ReadFile(path)
			for _, v := range values {
				if bytes.Contains(b, []byte(v)) {
					where = append(where, path)
				}
			}
			return nil
		})
		for name, text := range map[string]string{"logs": d.logs.String(), "notifications": string(shown), "window": string(snap)} {
			for _, v := range values {
				if strings.Contains(text, v) {
					where = append(where, name)
				}
			}
		}
		return where
	}
	if where := leaks(); len(where) > 0 {
		t.Fatalf("a password or secret leaked into %v", where)
	}
	// Self-check: a planted copy is found.
	os.WriteFile(filepath.Join(d.dir, "config", "planted"), []byte("x"+pw+"x"), 0o600)
	if where := leaks(); len(where) != 1 {
		t.Fatalf("the leak search missed a planted password: %v", where)
	}
	entries, err := approval.OpenStore(filepath.Join(d.dir, "config", "audit.db"), approval.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer entries.Close()
	es, _ := entries.List(approval.Filter{})
	b, _ := json.Marshal(es)
	if !strings.Contains(string(b), "password provided") || !strings.Contains(string(b), "secret provided") {
		t.Fatalf("the audit log does not say what was provided: %s", b)
	}
}
