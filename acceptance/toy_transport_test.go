// Package acceptance_test proves the transport contract: a toy transport
// that exists only in this file is registered with one line and driven
// through the service, the command line (over the control socket) and the
// window's API, with no other file knowing it.
package acceptance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/herald-desktop/herald/app"
	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
	"github.com/herald-desktop/herald/cli"
	"github.com/herald-desktop/herald/service"
)

// toy is a transport that asks for one approval as soon as it runs and
// remembers the answers it was sent.
type toy struct {
	name, secret string
	h            source.Hooks

	mu       sync.Mutex
	status   source.Status
	answers  []string
	followed []string
	prompts  []string // session + ": " + text, as asked
	stopped  []string
	asked    chan struct{} // closed once the approval is in the inbox
	got      chan struct{} // closed at the first answer
}

const toyKind source.Kind = "toy"

// toyDriver is the toy's registration; opened records every source.
func toyDriver(opened chan<- *toy) source.Driver {
	return source.Driver{
		Kind: toyKind, Title: "Toy transport", Hint: "in memory", DefaultURL: "toy://local",
		// herald watch --toy URL, beside --source toy:URL.
		Flag: "toy",
		// A sign-in no other transport has: its secret reaches the toy
		// by this name from the window's keychain and the command line.
		Auth: []source.AuthMode{{Name: "spell", Label: "Toy spell", Secret: "Spell", Hint: "`sesame`, as in the tale.", Flag: "toy-spell", Env: "HERALD_TOY_SPELL"}},
		// Its conversations are spells, which the window names and
		// follows by id as the toy words them.
		Words:  source.Words{Conversation: "spell", Interrupted: "Spell broken", Badge: "Toy box", FollowHint: "spell_… cast elsewhere", IDHint: "the toy's log names it"},
		Offers: source.Offers{FollowByID: true, AskNew: true},
		Open: func(cfg source.Config, h source.Hooks) (source.Source, error) {
			t := &toy{name: cfg.Name, secret: cfg.Secrets["spell"], h: h, asked: make(chan struct{}), got: make(chan struct{})}
			t.status = source.Status{Gateway: cfg.Name, Kind: string(toyKind), State: source.StateIdle}
			opened <- t
			return t, nil
		},
		Check: func(_ context.Context, cfg source.Config) source.CheckResult {
			if cfg.Secrets["spell"] != "sesame" {
				return source.CheckResult{Stage: "spell", Message: "the toy refused the spell"}
			}
			return source.CheckResult{OK: true, Stage: "spell", Message: "Connected to the toy"}
		},
	}
}

func (t *toy) Name() string      { return t.name }
func (t *toy) Kind() source.Kind { return toyKind }
func (t *toy) ReconnectNow()     {}
func (t *toy) Status() source.Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}
func (t *toy) setState(s source.State) {
	t.mu.Lock()
	t.status.State = s
	st := t.status
	t.mu.Unlock()
	t.h.OnStatus(st)
}
func (t *toy) Follow(_ context.Context, id string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.followed = append(t.followed, id)
	return nil
}
func (t *toy) Unfollow(string) {}

func (t *toy) Run(ctx context.Context) error {
	if t.secret != "sesame" {
		t.mu.Lock()
		t.status.Err = "the toy does not know that spell"
		t.mu.Unlock()
		t.setState(source.StateAuthFailed)
		<-ctx.Done()
		return ctx.Err()
	}
	t.setState(source.StateConnected)
	payload, _ := json.Marshal(map[string]any{"command": "rm -rf /toy", "description": "toy danger", "choices": source.Choices()})
	ev := wire.Event{Gateway: t.name, Session: "s1", Kind: wire.ApprovalRequest, Payload: payload, ReceivedAt: time.Now()}
	_ = ev.DecodeData()
	t.h.OnEvent(ev)
	close(t.asked)
	<-ctx.Done()
	t.setState(source.StateStopped)
	return ctx.Err()
}

func (t *toy) RespondApproval(_ context.Context, session, choice, _ string) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.answers = append(t.answers, session+":"+choice)
	if len(t.answers) == 1 {
		close(t.got)
	}
	return 1, nil
}

func (t *toy) RespondServerRequest(context.Context, string, string) error { return nil }

// Ask casts a new spell (the toy has no sessions to prompt).
func (t *toy) Ask(_ context.Context, session, text string) (source.Asked, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.prompts = append(t.prompts, session+": "+text)
	return source.Asked{Session: "spell_1", NewSession: true, Status: "casting"}, nil
}

// Stop breaks a spell and confirms it at once.
func (t *toy) Stop(_ context.Context, id string, _ source.StopWait) (source.Stopped, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = append(t.stopped, id)
	return source.Stopped{Outcome: "interrupted", Message: "the toy broke spell " + id}, nil
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10s", what)
	}
}

func TestToyTransportThroughEverySurface(t *testing.T) {
	opened := make(chan *toy, 4)
	source.Register(toyDriver(opened)) // the one registration line
	t.Cleanup(func() { source.Unregister(toyKind) })

	t.Run("service and command line", func(t *testing.T) {
		svc := service.New(service.Config{})
		defer svc.Close()
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		ctl := filepath.Join(dir, "control.sock")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := svc.ServeControl(ctx, ctl); err != nil {
			t.Fatal(err)
		}
		src, err := svc.AddSource(service.SourceConfig{Kind: "toy", Config: source.Config{Name: "toybox", Secrets: map[string]string{"spell": "sesame"}}})
		if err != nil {
			t.Fatal(err)
		}
		tt := <-opened
		if tt.secret != "sesame" || src.Kind() != toyKind {
			t.Fatalf("opened %+v as %s", tt, src.Kind())
		}
		wait(t, tt.asked, "approval")
		var out, errOut bytes.Buffer
		if code := cli.Main(ctx, []string{"pending", "--control", ctl}, strings.NewReader(""), &out, &errOut); code != 0 || !strings.Contains(out.String(), "rm -rf /toy") {
			t.Fatalf("herald pending: %d %q %q", code, out.String(), errOut.String())
		}
		pending := svc.Inbox().Pending()
		if len(pending) != 1 {
			t.Fatalf("%d pending, want 1", len(pending))
		}
		out.Reset()
		if code := cli.Main(ctx, []string{"approve", "--control", ctl, service.ShortKey(pending[0].Key), "once"}, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("herald approve: %d %q %q", code, out.String(), errOut.String())
		}
		wait(t, tt.got, "answer")
		if tt.answers[0] != "s1:once" {
			t.Fatalf("answers %v", tt.answers)
		}
		if r, _ := svc.Inbox().Get(pending[0].Key); r.State != approval.StateResolved {
			t.Fatalf("state %s, want resolved", r.State)
		}
		if st := src.Status(); st.State != source.StateConnected || st.Kind != "toy" {
			t.Fatalf("status %+v", st)
		}
		// herald ask and herald stop reach the toy through its
		// capabilities (source.Asker, source.Stopper), named by nothing
		// but the toy itself.
		out.Reset()
		if code := cli.Main(ctx, []string{"ask", "--control", ctl, "--gateway", "toybox", "open", "sesame"}, strings.NewReader(""), &out, &errOut); code != 0 || !strings.Contains(out.String(), "spell_1") {
			t.Fatalf("herald ask: %d %q %q", code, out.String(), errOut.String())
		}
		out.Reset()
		if code := cli.Main(ctx, []string{"stop", "--control", ctl, "toybox/spell_1"}, strings.NewReader(""), &out, &errOut); code != 0 || !strings.Contains(out.String(), "the toy broke spell spell_1") {
			t.Fatalf("herald stop: %d %q %q", code, out.String(), errOut.String())
		}
		tt.mu.Lock()
		prompts, stopped := slices.Clone(tt.prompts), slices.Clone(tt.stopped)
		tt.mu.Unlock()
		if !slices.Equal(prompts, []string{": open sesame"}) || !slices.Equal(stopped, []string{"spell_1"}) {
			t.Fatalf("the toy was asked %q and stopped %q", prompts, stopped)
		}
	})

	t.Run("command line flags", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		spellFile := filepath.Join(dir, "toy.spell")
		if err := os.WriteFile(spellFile, []byte("sesame\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var help bytes.Buffer
		if code := cli.Main(context.Background(), []string{"watch", "-h"}, strings.NewReader(""), &help, &help); code != 0 ||
			!strings.Contains(help.String(), "--toy-spell-file") || !strings.Contains(help.String(), "HERALD_TOY_SPELL") ||
			!strings.Contains(help.String(), "--toy URL\n        Toy transport URL, or NAME=URL") || !strings.Contains(help.String(), "--toy-spell SPELL") {
			t.Fatalf("herald watch -h (exit %d) does not offer the toy's flags:\n%s", code, help.String())
		}
		for _, tc := range []struct {
			name string
			args []string
			env  string
		}{
			{"flag", []string{"--source", "toy:toybox=toy://local", "--toy-spell-file", spellFile}, ""},
			{"environment", []string{"--toy", "toybox=toy://local"}, "sesame"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Setenv("HERALD_TOY_SPELL", tc.env)
				stdin, keys := io.Pipe()
				var out, errOut bytes.Buffer
				done := make(chan int, 1)
				args := append([]string{"watch", "--control", filepath.Join(dir, tc.name+".sock"), "--db", ""}, tc.args...)
				go func() { done <- cli.Main(context.Background(), args, stdin, &out, &errOut) }()
				var tt *toy
				select {
				case tt = <-opened:
				case code := <-done:
					t.Fatalf("herald watch ended with %d before opening the toy: %q %q", code, out.String(), errOut.String())
				}
				if tt.secret != "sesame" {
					t.Fatalf("the toy got spell %q from %s", tt.secret, tc.name)
				}
				wait(t, tt.asked, "approval")
				// The approval reaches the terminal through the event
				// stream asynchronously: "o" is retried until it lands.
				giveUp := time.After(10 * time.Second)
				for answered := false; !answered; {
					if _, err := io.WriteString(keys, "o\n"); err != nil {
						t.Fatal(err)
					}
					select {
					case <-tt.got:
						answered = true
					case <-time.After(50 * time.Millisecond):
					case <-giveUp:
						t.Fatalf("herald watch did not answer the toy's approval: %q", errOut.String())
					}
				}
				io.WriteString(keys, "q\n")
				if code := <-done; code != 0 {
					t.Fatalf("herald watch: exit %d: %q", code, errOut.String())
				}
				if tt.answers[0] != "s1:once" {
					t.Fatalf("answers %v; output %q", tt.answers, out.String())
				}
			})
		}
	})

	t.Run("command line refusal", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Setenv("HERALD_TOY_SPELL", "abracadabra")
		var out, errOut bytes.Buffer
		args := []string{"watch", "--source", "toy:toybox=toy://local", "--control", filepath.Join(dir, "ctl.sock"), "--db", ""}
		code := cli.Main(context.Background(), args, strings.NewReader(""), &out, &errOut)
		<-opened
		line := strings.TrimSpace(errOut.String())
		if code != 1 || strings.Contains(line, "\n") || strings.Contains(out.String()+line, "abracadabra") {
			t.Fatalf("herald watch with a wrong spell: exit %d, stdout %q, stderr %q", code, out.String(), line)
		}
		for _, want := range []string{"toybox: the toy transport refused the toy spell: pass the right one with", "--toy-spell or HERALD_TOY_SPELL", "`sesame`, as in the tale"} {
			if !strings.Contains(line, want) {
				t.Errorf("the refusal %q does not say %q", line, want)
			}
		}
	})

	t.Run("window", func(t *testing.T) {
		keyring.MockInit()
		settings, err := app.NewSettingsStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		secrets := app.NewSecrets(app.OSKeyring{})
		a := app.New(app.Deps{Settings: settings, Secrets: secrets, Store: approval.NewMemoryStore()})
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		w := a.WindowAPI()
		// The form offers the toy as its driver describes it.
		var kind *app.GatewayKind
		for _, k := range w.GatewayKinds() {
			if k.Kind == string(toyKind) {
				kind = &k
			}
		}
		if kind == nil || kind.Title != "Toy transport" || kind.DefaultURL != "toy://local" || kind.Detect ||
			len(kind.Auth) != 1 || kind.Auth[0].Name != "spell" || kind.Auth[0].Secret != "Spell" || kind.Auth[0].Hint == "" {
			t.Fatalf("the window's form offers the toy as %+v", kind)
		}
		if r := w.TestGateway(app.AddGatewayRequest{Kind: kind.Kind, Auth: "spell", Secret: "wrong"}); r.OK {
			t.Fatalf("test with a wrong spell: %+v", r)
		}
		if r := w.TestGateway(app.AddGatewayRequest{Kind: kind.Kind, Auth: "spell", Secret: "sesame"}); !r.OK {
			t.Fatalf("test: %+v", r)
		}
		if err := w.AddGateway(app.AddGatewayRequest{Name: "toybox", Kind: kind.Kind, URL: kind.DefaultURL, Auth: "spell", Secret: "sesame"}); err != nil {
			t.Fatal(err)
		}
		if got, _ := secrets.Get("toybox", "spell"); got != "sesame" {
			t.Fatalf("the keychain holds %q under the toy's sign-in", got)
		}
		tt := <-opened
		if tt.secret != "sesame" {
			t.Fatalf("the keychain's spell did not reach the toy: %q", tt.secret)
		}
		wait(t, tt.asked, "approval")
		snap := w.Snapshot()
		if len(snap.Approvals) != 1 || len(snap.Gateways) != 1 || snap.Gateways[0].Kind != "toy" {
			t.Fatalf("snapshot: %d approvals, gateways %+v", len(snap.Approvals), snap.Gateways)
		}
		// The page words the toy's gateway, its requests and its
		// offers as the toy's driver does.
		want := app.Transport{Words: toyDriver(nil).Words, Offers: toyDriver(nil).Offers}
		if kind.Transport != want || snap.Gateways[0].Transport != want || snap.Approvals[0].Transport.Conversation != "spell" || snap.Approvals[0].Transport.Interrupted != "Spell broken" {
			t.Fatalf("the window words the toy as: form %+v, gateway %+v, request %+v", kind.Transport, snap.Gateways[0].Transport, snap.Approvals[0].Transport)
		}
		if _, err := w.FollowRun("toybox", " "); err == nil || !strings.Contains(err.Error(), "give the spell's id (the toy's log names it)") {
			t.Fatalf("following no spell: %v", err)
		}
		if _, err := w.FollowRun("toybox", "spell_7"); err != nil {
			t.Fatal(err)
		}
		tt.mu.Lock()
		followed := slices.Clone(tt.followed)
		tt.mu.Unlock()
		if !slices.Contains(followed, "spell_7") {
			t.Fatalf("the toy was asked to follow %v", followed)
		}
		// The quick prompt and its Stop button reach the toy too.
		asked, err := w.Ask("toybox", "", "open sesame")
		if err != nil || asked.Session != "spell_1" || !asked.NewSession {
			t.Fatalf("the window's quick prompt: %+v %v", asked, err)
		}
		if res, err := w.StopRun("toybox", "spell_1"); err != nil || res.Outcome != "interrupted" || !strings.Contains(res.Message, "the toy broke spell spell_1") {
			t.Fatalf("the window's Stop: %+v %v", res, err)
		}
		if err := w.Answer(snap.Approvals[0].Key, "deny", false); err != nil {
			t.Fatal(err)
		}
		wait(t, tt.got, "answer")
		if tt.answers[0] != "s1:deny" {
			t.Fatalf("answers %v", tt.answers)
		}
		form, err := w.GatewayForm("toybox")
		if err != nil || form.Kind != string(toyKind) || form.Auth != "spell" || !form.HasSecret {
			t.Fatalf("edit form %+v %v", form, err)
		}
		if err := w.RemoveGateway("toybox"); err != nil {
			t.Fatal(err)
		}
		if got, _ := secrets.Get("toybox", "spell"); got != "" {
			t.Fatal("removing the toy kept its spell in the keychain")
		}
	})
}
