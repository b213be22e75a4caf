package gateway

import (
	"context"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/netfault"
	"github.com/herald-desktop/herald/backend/source"
)

// TestRedirectIsRefused: a https dashboard that answers 307 to plain http
// on another listener gets nothing followed there, in every sign-in mode
// (the token on the upgrade, the password on the login, no secret on the
// status probe): the WebSocket dialer and the one HTTP client
// (source.NewHTTPClient) stop at the redirect, and the status says, for
// people, that the address redirects and what to do. It waits for the
// user (config_error), as a refusal does.
func TestRedirectIsRefused(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name string
		set  func(*Config)
	}{
		{"token", func(c *Config) { c.Token = "secret-token" }},
		{"password", func(c *Config) { c.Password = "secret-password" }},
		{"none", func(*Config) {}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			rd, first := netfault.NewRedirect(t, 307, true)
			pool := x509.NewCertPool()
			pool.AddCert(first.Certificate())
			rec := newRecorder()
			cfg := Config{URL: rd.URL, RootCAs: pool, Clock: clock.NewFake(time.Unix(1_700_000_000, 0)), OnStatus: rec.onStatus}
			mode.set(&cfg)
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = c.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			st := rec.waitStateAfter(t, 0, source.StateConfigError)
			for _, want := range []string{"redirect (HTTP 307)", "does not serve a Hermes dashboard gateway", "sent nothing to the address it pointed to"} {
				if !strings.Contains(st.Err, want) {
					t.Errorf("status %q does not say %q", st.Err, want)
				}
			}
			if strings.Contains(st.Err, "127.0.0.2") || strings.Contains(st.Err, rd.Other) || strings.Contains(st.Err, "secret") {
				t.Errorf("status %q quotes where the redirect pointed, or a secret", st.Err)
			}
			if rd.Seen() == 0 {
				t.Fatal("the redirecting server was never asked")
			}
			if hits := rd.Hits(); len(hits) != 0 {
				t.Fatalf("%d requests reached the second listener (first: %s %s)", len(hits), hits[0].Method, hits[0].URL)
			}
		})
	}
}
