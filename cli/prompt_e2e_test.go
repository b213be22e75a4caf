package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
)

func runIn(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(heraldBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestAnswerPromptsEndToEnd: clarify, sudo and secret prompts from a fake
// gateway (both dialects) show in `herald watch` and are answered with
// `herald answer` from another process: a clarify by choice number, a
// password never from argv (refused) but from a pipe, a secret declined,
// one answered elsewhere. The password reaches the gateway and nothing
// else: not watch's output, not the log, not the audit file.
func TestAnswerPromptsEndToEnd(t *testing.T) {
	const password = "pw-Corr3ct-Horse-Battery"
	for _, d := range []hermestest.Dialect{hermestest.Legacy, hermestest.Modern} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: d, Token: "e2e-prompt-" + d.String()})
			defer srv.Close()
			live, stored := srv.CreateSession()
			dir := t.TempDir()
			ctl := filepath.Join(dir, "run", "ctl.sock")
			db := filepath.Join(dir, "audit.db")
			w := startWatch(t, "--gateway", "lab="+srv.URL, "--token", srv.Token(), "--session", stored, "--control", ctl, "--db", db)
			waitServer(t, srv, "session attached", func() bool {
				for _, s := range srv.Sessions() {
					if s.ID == live && s.Attached {
						return true
					}
				}
				return false
			})
			arrived := func(kind string) string {
				m := w.waitLine(t, kind, func(m map[string]any) bool {
					return m["type"] == "approval" && m["change"] == "arrived" && field(m, "request", "kind") == kind
				})
				return m["id"].(string)
			}

			// clarify, by choice number
			_, clarified, err := srv.RequestPrompt(live, hermestest.PromptSpec{Kind: hermestest.PromptClarify, Question: "Deploy where?", Choices: []string{"dev", "prod"}})
			if err != nil {
				t.Fatal(err)
			}
			id := arrived("clarify")
			out, _, code := run(t, "pending", "--control", ctl)
			if code != 0 || !strings.Contains(out, "Deploy where?") || !strings.Contains(out, "herald answer "+id) {
				t.Fatalf("pending: %d %q", code, out)
			}
			if out, e, code := run(t, "answer", "--control", ctl, id, "2"); code != 0 || !strings.Contains(out, "prod") {
				t.Fatalf("answer clarify: %d %q %q", code, out, e)
			}
			if r := <-clarified; r.Value != "prod" {
				t.Fatalf("agent got %+v", r)
			}

			// sudo: never from argv; from a pipe
			_, sudoDone, err := srv.RequestPrompt(live, hermestest.PromptSpec{Kind: hermestest.PromptSudo, Command: "sudo apt-get install jq"})
			if err != nil {
				t.Fatal(err)
			}
			id = arrived("sudo")
			if _, e, code := run(t, "answer", "--control", ctl, id, password); code != 2 || !strings.Contains(e, "never put a password") || strings.Contains(e, password) {
				t.Fatalf("password in argv: %d %q", code, e)
			}
			if _, e, code := runIn(t, password+"\n", "answer", "--control", ctl, id); code != 1 || !strings.Contains(e, "terminal") {
				t.Fatalf("password without a terminal: %d %q", code, e)
			}
			if len(srv.PromptAnswers()) != 1 {
				t.Fatal("a refused password reached the gateway")
			}
			if out, e, code := runIn(t, password+"\n", "answer", "--control", ctl, id, "--stdin"); code != 0 || !strings.Contains(out, "password provided") || strings.Contains(out+e, password) {
				t.Fatalf("answer sudo: %d %q %q", code, out, e)
			}
			if r := <-sudoDone; r.Value != password {
				t.Fatalf("gateway got %+v", r)
			}

			// secret, declined
			_, secretDone, err := srv.RequestPrompt(live, hermestest.PromptSpec{Kind: hermestest.PromptSecret, EnvVar: "OPENWEATHER_API_KEY", Prompt: "Your OpenWeather key"})
			if err != nil {
				t.Fatal(err)
			}
			id = arrived("secret")
			if out, e, code := run(t, "answer", "--control", ctl, id, "--decline"); code != 0 || !strings.Contains(out, "declined") {
				t.Fatalf("decline secret: %d %q %q", code, out, e)
			}
			if r := <-secretDone; r.Value != "" || r.Ended != "answered" {
				t.Fatalf("agent got %+v", r)
			}

			// secret, with a value from a pipe
			const secret = "sk-weather-cli-3e8a1f"
			_, secretDone, err = srv.RequestPrompt(live, hermestest.PromptSpec{Kind: hermestest.PromptSecret, EnvVar: "OPENWEATHER_API_KEY", Prompt: "Your OpenWeather key"})
			if err != nil {
				t.Fatal(err)
			}
			id = arrived("secret")
			if out, e, code := runIn(t, secret+"\n", "answer", "--control", ctl, "--stdin", id); code != 0 || !strings.Contains(out, "secret provided") || strings.Contains(out+e, secret) {
				t.Fatalf("answer secret: %d %q %q", code, out, e)
			}
			if r := <-secretDone; r.Value != secret {
				t.Fatalf("gateway got %+v", r)
			}

			// answered elsewhere
			pid, _, err := srv.RequestPrompt(live, hermestest.PromptSpec{Kind: hermestest.PromptClarify, Question: "Again?", Choices: []string{"yes", "no"}})
			if err != nil {
				t.Fatal(err)
			}
			id = arrived("clarify")
			if err := srv.AnswerPromptElsewhere(pid, "yes"); err != nil {
				t.Fatal(err)
			}
			if d == hermestest.Modern {
				w.waitLine(t, "withdrawn", func(m map[string]any) bool {
					return m["id"] == id && field(m, "request", "state") == "cancelled"
				})
				if _, e, code := run(t, "answer", "--control", ctl, id, "1"); code != 1 || !strings.Contains(e, "nothing with id") {
					t.Fatalf("answer after elsewhere: %d %q", code, e)
				}
			} else if _, e, code := run(t, "answer", "--control", ctl, id, "1"); code != 1 || !strings.Contains(e, "settled elsewhere") {
				t.Fatalf("answer after elsewhere: %d %q", code, e)
			}

			out, _, _ = run(t, "log", "--control", ctl)
			if !strings.Contains(out, "password provided") || strings.Contains(out, password) || strings.Contains(out, "sk-weather-cli") {
				t.Fatalf("log: %q", out)
			}
			if strings.Contains(w.output(), password) || strings.Contains(w.output(), "sk-weather-cli") {
				t.Fatal("watch printed the password")
			}
			raw, err := os.ReadFile(db)
			if err != nil || len(raw) == 0 || bytes.Contains(raw, []byte(password)) || bytes.Contains(raw, []byte("sk-weather-cli")) {
				t.Fatalf("audit file (%d bytes, %v) holds the password", len(raw), err)
			}
		})
	}
}
