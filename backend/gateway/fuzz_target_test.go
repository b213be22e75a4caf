package gateway

import (
	"net/url"
	"strings"
	"testing"
)

// targetSeeds are addresses users type, plus junk.
var targetSeeds = []string{
	"http://127.0.0.1:9119",
	"https://lab.example:443",
	"127.0.0.1",
	"localhost:9119",
	"hermes.local",
	"[::1]:9119",
	"http://[::1]",
	"https://[fe80::1%25eth0]:8443/hermes",
	"ws://127.0.0.1:9119/api/ws",
	"wss://lab.example/prefix/api/ws/",
	"WSS://LAB.example:1/API/WS",
	"http://host:9119/prefix/",
	"http://host:/x",
	"http://user:pw@host:9119",
	"ftp://host",
	"http://:9119",
	"http://",
	"://",
	"",
	"   ",
	"http://host:abc",
	"http://ho st",
	"http://host/%zz",
	"http://host/a?b=c#d",
	"http://host/api/ws/api/ws",
	"http://host//evil.example",
	"\x00\xff",
	"[::1",
	"http://\xdf",
	"0//",
	"WS://::",
	"http://host/prefix//api/ws//",
	"http://b\u00fccher.example:9119",
}

// FuzzParseTarget: parseTarget never panics, and whatever it accepts is a
// credential-free http(s) base with the matching ws(s) channel URL at
// .../api/ws on the same host and port, with endpoint() and origin()
// staying on that host.
func FuzzParseTarget(f *testing.F) {
	for _, s := range targetSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tg, err := parseTarget(raw)
		if err != nil {
			if tg.base != nil || tg.ws != nil {
				t.Fatalf("parseTarget(%q) failed (%v) but returned a target", raw, err)
			}
			return
		}
		b, w := tg.base, tg.ws
		if b == nil || w == nil {
			t.Fatalf("parseTarget(%q) returned a nil URL", raw)
		}
		switch {
		case b.Scheme == "http" && w.Scheme == "ws":
		case b.Scheme == "https" && w.Scheme == "wss":
		default:
			t.Fatalf("parseTarget(%q): schemes %q / %q", raw, b.Scheme, w.Scheme)
		}
		if b.User != nil || w.User != nil {
			t.Fatalf("parseTarget(%q) kept userinfo", raw)
		}
		if b.Hostname() == "" || b.Port() == "" {
			t.Fatalf("parseTarget(%q): host %q lacks a hostname or port", raw, b.Host)
		}
		if b.Host != w.Host {
			t.Fatalf("parseTarget(%q): base host %q, ws host %q", raw, b.Host, w.Host)
		}
		if !strings.HasSuffix(w.Path, "/api/ws") {
			t.Fatalf("parseTarget(%q): ws path %q does not end /api/ws", raw, w.Path)
		}
		if w.Path != b.Path+"/api/ws" {
			t.Fatalf("parseTarget(%q): ws path %q is not base path %q + /api/ws", raw, w.Path, b.Path)
		}
		if b.RawQuery != "" || b.Fragment != "" || w.RawQuery != "" || w.Fragment != "" {
			t.Fatalf("parseTarget(%q) kept a query or fragment", raw)
		}

		origin := tg.origin()
		// The origin as net/url writes it, host escaped as endpoint() does.
		canon := (&url.URL{Scheme: b.Scheme, Host: b.Host}).String()
		if _, err := url.Parse(canon); err != nil {
			t.Fatalf("parseTarget(%q) accepted host %q, which is not a URL host: %v", raw, b.Host, err)
		}
		if origin != canon {
			t.Fatalf("origin %q of %q differs from the escaped %q used by endpoint()", tg.origin(), raw, canon)
		}
		ou, err := url.Parse(origin)
		if err != nil || ou.Host != b.Host || ou.Scheme != b.Scheme || ou.Path != "" || ou.User != nil {
			t.Fatalf("origin %q of %q does not parse back to the base host (%v)", origin, raw, err)
		}
		for _, p := range []string{"/api/status", "/api/auth/ticket"} {
			ep := tg.endpoint(p)
			if !strings.HasPrefix(ep, origin) {
				t.Fatalf("endpoint(%q) = %q is not under origin %q", p, ep, origin)
			}
			eu, err := url.Parse(ep)
			if err != nil {
				t.Fatalf("endpoint(%q) = %q does not parse: %v", p, ep, err)
			}
			if eu.Scheme != b.Scheme || eu.Host != b.Host || eu.User != nil {
				t.Fatalf("endpoint(%q) = %q left the base %s", p, ep, b)
			}
			if want := strings.TrimSuffix(b.Path, "/") + p; eu.Path != want {
				t.Fatalf("endpoint(%q) = %q: path %q, want %q", p, ep, eu.Path, want)
			}
		}
		// The channel lives where endpoint() would put /api/ws.
		if eu, _ := url.Parse(tg.endpoint("/api/ws")); eu.Path != w.Path {
			t.Fatalf("parseTarget(%q): ws path %q, but endpoint(\"/api/ws\") has %q", raw, w.Path, eu.Path)
		}
		wu, err := url.Parse(w.String())
		if err != nil || wu.Host != w.Host || wu.Path != w.Path {
			t.Fatalf("ws URL %q does not parse back (%v)", w.String(), err)
		}
	})
}

// TestParseTargetURLForms: every address form a user types reaches the
// same host, with plain http/ws when no scheme is given.
func TestParseTargetURLForms(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"127.0.0.1:9119":           "ws://127.0.0.1:9119/api/ws",
		"127.0.0.1":                "ws://127.0.0.1:9119/api/ws",
		"[::1]:9119":               "ws://[::1]:9119/api/ws",
		"localhost":                "ws://localhost:9119/api/ws",
		"vm:18791":                 "ws://vm:18791/api/ws",
		"gw.localhost:1234/hermes": "ws://gw.localhost:1234/hermes/api/ws",
		"https://gw.lan":           "wss://gw.lan:443/api/ws",
		"ws://gw.lan:9119/api/ws":  "ws://gw.lan:9119/api/ws",
	} {
		tg, err := parseTarget(in)
		if err != nil || tg.ws.String() != want {
			t.Errorf("parseTarget(%q) = %v, %v; want %s", in, tg.ws, err, want)
		}
	}
}
