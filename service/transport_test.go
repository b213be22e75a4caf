package service

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"http://me:SECRET@gw:9119/api?token=SECRET",
		"http://gw:99x/?token=SECRET",
		"ws://me:SECRET@gw example/?token=SECRET#SECRET",
		"gw:9119?token=SECRET",
		"https://gw/#SECRET",
	} {
		got := RedactURL(raw)
		if strings.Contains(got, "SECRET") || !strings.Contains(got, "gw") {
			t.Errorf("RedactURL(%q) = %q", raw, got)
		}
	}
	for _, clean := range []string{"https://gw:9119/x", "not a url", "vm:18791", "[::1]:9119"} {
		if got := RedactURL(clean); got != clean {
			t.Errorf("RedactURL(%q) = %q, want it as typed", clean, got)
		}
	}
}

// TestPlainTextHostURLForms: every form a user types for a gateway or API
// server address, judged by the address Herald dials. A bare host:port is
// http (the clients read it so), so a secret to "vm:18791" is plain text.
func TestPlainTextHostURLForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url, host string
		plain     bool
	}{
		{"http://127.0.0.1:9119", "127.0.0.1", false},
		{"127.0.0.1:9119", "127.0.0.1", false},
		{"127.0.0.1", "127.0.0.1", false},
		{"[::1]:9119", "::1", false},
		{"ws://[::1]:9119/api/ws", "::1", false},
		{"localhost:9119", "localhost", false},
		{"http://localhost", "localhost", false},
		{"http://gw.localhost:9119", "gw.localhost", false}, // dialled on loopback, never proxied (backend/addr)
		{" HTTP://127.0.0.2:8642/v1 ", "127.0.0.2", false},
		{"vm:18791", "vm", true},
		{"vm", "vm", true},
		{"gw.lan:9119", "gw.lan", true},
		{"192.168.1.5:9119", "192.168.1.5", true},
		{"http://gw.lan:9119", "gw.lan", true},
		{"ws://gw.lan:9119/api/ws", "gw.lan", true},
		{"http://localhost.evil.example:9119", "localhost.evil.example", true},
		{"http://0.0.0.0:9119", "0.0.0.0", true},
		{"http://[fe80::1]:9119", "fe80::1", true},
		{"https://gw.lan", "", false},
		{"wss://gw.lan:443", "", false},
		{"gw.lan:443", "gw.lan", true}, // no scheme is http, whatever the port
	} {
		host, plain := PlainTextHost(tc.url)
		if plain != tc.plain || (tc.host != "" && host != tc.host) {
			t.Errorf("PlainTextHost(%q) = %q, %v; want %q, %v", tc.url, host, plain, tc.host, tc.plain)
		}
		if _, err := ParseURL(tc.url); err != nil {
			t.Errorf("ParseURL(%q): %v", tc.url, err)
		}
	}
}
