package cli

import (
	"bytes"
	"context"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/service"
)

const secret = "s3cr3t-TOKEN-value"

// mainIn runs Main in-process with stdin and an empty environment for
// credentials.
func mainIn(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	for _, k := range []string{"HERALD_TOKEN", "HERALD_PASSWORD", "HERALD_API_KEY", "HERALD_USERNAME"} {
		t.Setenv(k, "")
	}
	code := Main(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// TestCredentialsRefusedOverPlainHTTP: a secret is not sent over plain
// http to another machine without --allow-insecure; loopback and https
// are fine; the refusal is one line and never shows the secret.
func TestCredentialsRefusedOverPlainHTTP(t *testing.T) {
	dir := t.TempDir()
	ctl := filepath.Join(dir, "run", "ctl.sock")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"token to a remote http gateway", []string{"watch", "--gateway", "http://gw.example.com:9119", "--token", secret}, "refusing to send a secret over plain http to gw.example.com"},
		{"password to a remote ws gateway", []string{"watch", "--gateway", "lab=ws://10.1.2.3:9119", "--username", "me", "--password", secret}, "plain http to 10.1.2.3"},
		{"api key to a remote API server", []string{"watch", "--api", "http://api.example.com:8642", "--api-key", secret}, "plain http to api.example.com"},
		{"herald ask directly", []string{"ask", "--gateway", "http://gw.example.com:9119", "--token", secret, "hello"}, "plain http to gw.example.com"},
		{"invalid URL with a token in it", []string{"watch", "--gateway", "http://me:" + secret + "@gw.example.com:99x/?token=" + secret, "--token", "t"}, "not a valid URL"},
		{"invalid URL with a token in the query", []string{"watch", "--api", "http://gw example.com/?token=" + secret}, "not a valid URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := mainIn(t, "", append(tc.args, "--control", ctl, "--db", "")...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 with %q", code, stderr, tc.want)
			}
			if strings.Contains(stderr, secret) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Fatalf("the message shows the secret or is not one line: %q", stderr)
			}
			t.Logf("user sees: %s", strings.TrimSpace(stderr))
		})
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url, secret   string
		allowInsecure bool
		ok, warn      bool
	}{
		{"http://127.0.0.1:9119", secret, false, true, false},
		{"http://localhost:9119", secret, false, true, false},
		{"ws://[::1]:9119", secret, false, true, false},
		{"https://gw.example.com", secret, false, true, false},
		{"wss://gw.example.com", secret, false, true, false},
		{"http://gw.example.com", "", false, true, false}, // nothing secret to send
		{"http://gw.example.com", secret, false, false, false},
		{"http://192.168.1.5:9119", secret, true, true, true},
		// Forms without a scheme are http, as the clients read them.
		{"127.0.0.1:9119", secret, false, true, false},
		{"[::1]:8642", secret, false, true, false},
		{"localhost:9119", secret, false, true, false},
		{"vm:18791", secret, false, false, false},
		{"gw.lan", secret, false, false, false},
		{"vm:18791", secret, true, true, true},
		{"http://gw.localhost:9119", secret, false, true, false},
		{"http://localhost.evil.example", secret, false, false, false},
	} {
		var errb bytes.Buffer
		allow := tc.allowInsecure
		c := &credFlags{allowInsecure: &allow}
		err := c.checkURL(&env{stderr: &errb}, "--gateway", tc.url, tc.secret)
		if (err == nil) != tc.ok || (errb.Len() > 0) != tc.warn {
			t.Errorf("%s (allow %v): err %v, warning %q", tc.url, allow, err, errb.String())
		}
		if tc.warn && !strings.Contains(errb.String(), "warning") {
			t.Errorf("%s: warning %q", tc.url, errb.String())
		}
	}
}

func TestSecretsFromFilesAndStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	tokFile, passFile, keyFile := file("tok", secret+"\n"), file("pass", "pw\r\n"), file("key", "k1")
	two := file("two", "a\nb\n")
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        creds
		rest, err   string
	}{
		{name: "files", args: []string{"--token-file", tokFile, "--password-file", passFile, "--api-key-file", keyFile}, want: creds{byFlag: map[string]string{"token": secret, "password": "pw", "api-key": "k1"}}},
		{name: "stdin", stdin: secret + "\no d\n", args: []string{"--token-file", "-"}, want: creds{byFlag: map[string]string{"token": secret}}, rest: "o d\n"},
		{name: "stdin without newline", stdin: secret, args: []string{"--api-key-file", "-"}, want: creds{byFlag: map[string]string{"api-key": secret}}},
		{name: "two from stdin", stdin: "a\nb\n", args: []string{"--token-file", "-", "--password-file", "-"}, err: "both read stdin"},
		{name: "flag and file", args: []string{"--token", "x", "--token-file", tokFile}, err: "not both"},
		{name: "missing file", args: []string{"--token-file", filepath.Join(dir, "nope")}, err: "cannot read"},
		{name: "two lines", args: []string{"--password-file", two}, err: "more than one line"},
		{name: "empty stdin", args: []string{"--token-file", "-"}, err: "no line on standard input"},
		{name: "flags still work", args: []string{"--token", "t", "--username", "u"}, want: creds{byFlag: map[string]string{"token": "t"}, user: "u"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := newFlags("watch", &env{stderr: io.Discard})
			c := addCredFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			e := &env{stdin: strings.NewReader(tc.stdin), getenv: func(string) string { return "" }}
			got, stdin, err := c.resolve(e)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), secret) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !maps.Equal(got.byFlag, tc.want.byFlag) || got.user != tc.want.user || got.roots != nil {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			if rest, _ := io.ReadAll(stdin); string(rest) != tc.rest {
				t.Fatalf("stdin after the secret: %q, want %q", rest, tc.rest)
			}
		})
	}
}

func TestHelpSaysFlagsShowInPS(t *testing.T) {
	for _, cmd := range []string{"watch", "ask"} {
		stdout, _, code := mainIn(t, "", cmd, "-h")
		if code != 0 || !strings.Contains(stdout, "visible to") || !strings.Contains(stdout, "in ps") || !strings.Contains(stdout, "--token-file") || !strings.Contains(stdout, "--allow-insecure") {
			t.Fatalf("%s -h (exit %d):\n%s", cmd, code, stdout)
		}
	}
}

// TestWatchTokenFromStdin: the real binary signs in with a token read
// from stdin and then still takes keys from what follows.
func TestWatchTokenFromStdin(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Token: secret})
	defer srv.Close()
	dir := t.TempDir()
	w := startWatchStdin(t, secret+"\n", "--gateway", "lab="+srv.URL, "--token-file", "-", "--control", filepath.Join(dir, "run", "ctl.sock"), "--db", "")
	w.waitLine(t, "connected with the token from stdin", func(m map[string]any) bool {
		return m["type"] == "status" && field(m, "status", "state") == "connected"
	})
	if strings.Contains(w.output(), secret) {
		t.Fatal("watch printed the token")
	}
}

// TestSecretsGoToTheirTransport: each transport gets the secrets of its
// own sign-in modes, by mode name, and no other.
func TestSecretsGoToTheirTransport(t *testing.T) {
	t.Parallel()
	cr := creds{byFlag: map[string]string{"token": "t", "password": "p", "api-key": "k"}}
	for _, tc := range []struct {
		kind service.Kind
		want map[string]string
	}{
		{"ws", map[string]string{"token": "t", "password": "p"}},
		{"", map[string]string{"token": "t", "password": "p"}},
		{"api", map[string]string{"key": "k"}},
		{"no-such-kind", map[string]string{}},
	} {
		if got := cr.secrets(tc.kind); !maps.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.kind, got, tc.want)
		}
	}
}
