package cli

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/service"
)

// TestNewcomerMistakesEndInOneLine: the mistakes a first-time user makes
// with addresses (the dashboard's port given to --api and the reverse,
// http:// for a server that speaks https only) end `herald watch` with
// exit 1 and one line that says what happened and what to do, instead
// of a raw error retried forever.
func TestNewcomerMistakesEndInOneLine(t *testing.T) {
	t.Parallel()
	api := apiservertest.NewServer(apiservertest.Options{})
	t.Cleanup(api.Close)
	gw := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Token: "right-token-0123456789"})
	t.Cleanup(gw.Close)
	tlsOnly := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsOnly.Close)
	notHermes := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notHermes.Close)
	plainOfTLS := "http://" + strings.TrimPrefix(tlsOnly.URL, "https://")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"a server without /api/ws as --gateway", []string{"--gateway", "lab=" + notHermes.URL, "--token", "t-0123456789"},
			[]string{"lab: ", "has no /api/ws endpoint", "point Herald at the Hermes dashboard (default port 9119)"}},
		{"the dashboard's address as --api", []string{"--api", "lab=" + gw.URL, "--api-key", api.Key()},
			[]string{"lab: ", "has no /health endpoint", "point Herald at the Hermes API server", "8642"}},
		{"http:// to an https-only gateway", []string{"--gateway", "lab=" + plainOfTLS, "--token", "t-0123456789"},
			[]string{"lab: the gateway at 127.0.0.1:", "answers https only: give the address as https://127.0.0.1:"}},
		{"http:// to an https-only API server", []string{"--api", "lab=" + plainOfTLS, "--api-key", api.Key()},
			[]string{"lab: the API server at 127.0.0.1:", "answers https only: give the address as https://127.0.0.1:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctl := filepath.Join(t.TempDir(), "run", "ctl.sock")
			out, errOut, code := runBounded(t, append([]string{"watch", "--db", "", "--control", ctl}, tc.args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stdout %q stderr %q", code, out, errOut)
			}
			line := strings.TrimSpace(errOut)
			if strings.Contains(line, "\n") {
				t.Fatalf("stderr is not one line: %q", errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("stderr %q does not say %q", line, w)
				}
			}
		})
	}
}

// TestHTTPSToAPlainServerSaysSo: https:// to a server that speaks plain
// http is named as that, with what to do, not as Go's TLS error.
func TestHTTPSToAPlainServerSaysSo(t *testing.T) {
	t.Parallel()
	api := apiservertest.NewServer(apiservertest.Options{})
	t.Cleanup(api.Close)
	gw := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Token: "right-token-0123456789"})
	t.Cleanup(gw.Close)
	for _, tc := range []struct {
		name string
		args []string
		peer string
	}{
		{"gateway", []string{"--gateway", "lab=https://" + strings.TrimPrefix(gw.URL, "http://"), "--token", "right-token-0123456789"}, "the gateway"},
		{"API server", []string{"--api", "lab=https://" + strings.TrimPrefix(api.URL, "http://"), "--api-key", api.Key()}, "the API server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctl := filepath.Join(t.TempDir(), "run", "ctl.sock")
			w := startWatch(t, append([]string{"--db", "", "--control", ctl}, tc.args...)...)
			m := w.waitLine(t, "a status naming plain http", func(m map[string]any) bool {
				e, _ := field(m, "status", "error").(string)
				return m["type"] == "status" && e != ""
			})
			e := field(m, "status", "error").(string)
			if !strings.Contains(e, tc.peer+" at 127.0.0.1:") || !strings.Contains(e, "answers plain http, not https: use an http:// address") || strings.Contains(e, "tls:") {
				t.Errorf("status error %q does not say plainly that the server speaks http", e)
			}
		})
	}
}

// TestAskWithSeveralGatewaysSaysHowToPick: `herald ask` through a Herald
// that follows two gateways names them and the flag that picks one.
func TestAskWithSeveralGatewaysSaysHowToPick(t *testing.T) {
	t.Parallel()
	const token = "tok-both-0123456789"
	a := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Token: token})
	t.Cleanup(a.Close)
	b := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Token: token})
	t.Cleanup(b.Close)
	ctl := filepath.Join(t.TempDir(), "run", "ctl.sock")
	w := startWatch(t, "--gateway", "a="+a.URL, "--gateway", "b="+b.URL, "--token", token, "--control", ctl, "--db", "")
	w.waitLine(t, "connected", func(m map[string]any) bool {
		return m["type"] == "status" && field(m, "status", "state") == "connected"
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"hello"}, "herald ask: more than one gateway is configured (a, b): name the one to use (on the command line: --gateway NAME)"},
		{[]string{"--gateway", "c", "hello"}, `herald ask: no gateway or API server named "c" is configured (have: a, b)`},
	} {
		out, e, code := run(t, append([]string{"ask", "--control", ctl}, tc.args...)...)
		if code != 1 || strings.TrimSpace(e) != tc.want {
			t.Errorf("ask %q: exit %d, stdout %q, stderr %q; want 1 and %q", tc.args, code, out, e, tc.want)
		}
	}
}

// TestMistypedSessionSaysSo: `watch --session` with an id no live session
// has says that it is not running there and how to list the live ones,
// not that it ended while Herald was not running.
func TestMistypedSessionSaysSo(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printSessionNotice(&printer{w: &b}, service.SessionNotice{Kind: service.NoticeGone, Gateway: "lab", Key: "20261203_19113_typo", Text: "Session ended while Herald was not running"})
	got := b.String()
	for _, w := range []string{`○ lab: session "20261203_19113_typo" is not running there (it ended, or the id is mistyped)`, `type "sessions" to list the live ones`} {
		if !strings.Contains(got, w) {
			t.Errorf("%q does not say %q", got, w)
		}
	}
	if strings.Contains(got, "while Herald was not running") {
		t.Errorf("%q says Herald was not running", got)
	}
}

// TestApproveRefusesAQuestion: `herald approve ID CHOICE` answers command
// approvals only: a question whose choices happen to include "once" is
// not answered by it, and the line names `herald answer`.
func TestApproveRefusesAQuestion(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	t.Cleanup(srv.Close)
	live, stored := srv.CreateSession()
	ctl := filepath.Join(t.TempDir(), "run", "ctl.sock")
	w := startWatch(t, "--gateway", "lab="+srv.URL, "--token", srv.Token(), "--session", stored, "--control", ctl, "--db", "")
	waitServer(t, srv, "session attached", func() bool {
		for _, s := range srv.Sessions() {
			if s.ID == live && s.Attached {
				return true
			}
		}
		return false
	})
	_, answered, err := srv.RequestPrompt(live, hermestest.PromptSpec{Kind: hermestest.PromptClarify, Question: "Run it how often?", Choices: []string{"once", "never"}})
	if err != nil {
		t.Fatal(err)
	}
	m := w.waitLine(t, "the question", func(m map[string]any) bool {
		return m["type"] == "approval" && m["change"] == "arrived" && field(m, "request", "kind") == "clarify"
	})
	id := m["id"].(string)
	out, e, code := run(t, "approve", "--control", ctl, id, "once")
	if code != 1 || !strings.Contains(e, id+" is a question, not a command approval: answer it with `herald answer "+id+"`") {
		t.Fatalf("approve of a question: exit %d, %q %q", code, out, e)
	}
	select {
	case r := <-answered:
		t.Fatalf("the question was answered: %+v", r)
	default:
	}
	if out, e, code := run(t, "answer", "--control", ctl, id, "1"); code != 0 {
		t.Fatalf("answer: exit %d %q %q", code, out, e)
	}
	if r := <-answered; r.Value != "once" {
		t.Fatalf("agent got %+v", r)
	}
}
