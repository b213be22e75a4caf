package gateway

import (
	"crypto/x509"
	"strings"
	"testing"

	"net/http"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
)

// TestGatedModeMintsATicketPerDial: password sign-in sets cookies, and
// every dial uses a fresh single-use ticket offered as a subprotocol.
func TestGatedModeMintsATicketPerDial(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Password: "s3cret-pass"})
	defer srv.Close()
	h := start(t, srv, func(c *Config) { c.Token = ""; c.Password = "s3cret-pass" })
	h.rec.waitState(t, source.StateConnected)
	info, err := h.client.Probe(ctxT(t))
	if err != nil || !info.AuthRequired {
		t.Fatalf("probe = %+v, %v; want auth_required", info, err)
	}
	for i := 0; i < 3; i++ {
		m := h.rec.mark()
		srv.Kick()
		h.rec.waitReconnected(t, m)
	}
	ups := srv.UpgradeHeaders()
	if len(ups) != 4 {
		t.Fatalf("%d upgrades, want 4", len(ups))
	}
	seen := map[string]bool{}
	for _, hd := range ups {
		protos := strings.Split(hd.Get("Sec-WebSocket-Protocol"), ",")
		var ticket string
		hasV1 := false
		for _, p := range protos {
			p = strings.TrimSpace(p)
			hasV1 = hasV1 || p == SubprotocolV1
			if t, ok := strings.CutPrefix(p, TicketPrefix); ok {
				ticket = t
			}
		}
		if !hasV1 || ticket == "" {
			t.Fatalf("upgrade offered %q, want %s and a ticket", protos, SubprotocolV1)
		}
		if seen[ticket] {
			t.Fatal("a ticket was reused across dials")
		}
		seen[ticket] = true
		if strings.Contains(hd.Get("Sec-WebSocket-Protocol")+hd.Get("Cookie"), "s3cret-pass") {
			t.Fatal("the password itself was sent on the upgrade")
		}
	}
}

func TestWrongPasswordIsAnAuthState(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Password: "right"})
	defer srv.Close()
	h := start(t, srv, func(c *Config) { c.Token = ""; c.Password = "wrong" })
	st := h.rec.waitState(t, source.StateAuthFailed)
	if !strings.Contains(st.Err, "refused the password") {
		t.Fatalf("error %q does not tell the user the password was refused", st.Err)
	}
	if srv.Dials() != 0 {
		t.Fatal("dialed the WebSocket without a sign-in")
	}
}

func TestNoPasswordForGatedGateway(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Password: "right"})
	defer srv.Close()
	h := start(t, srv, func(c *Config) { c.Token = "" })
	st := h.rec.waitState(t, source.StateAuthFailed)
	if !strings.Contains(st.Err, "requires sign-in") {
		t.Fatalf("error %q", st.Err)
	}
}

// TestCloseCodesStopRetrying: 4401 means sign in again, 4403 means a
// configuration problem; neither may loop.
func TestCloseCodesStopRetrying(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code  int
		state source.State
		say   string
	}{
		{4401, source.StateAuthFailed, "sign in again"},
		{4403, source.StateConfigError, "refused this client"},
	} {
		t.Run(strings.ToLower(string(tc.state)), func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
			defer srv.Close()
			h := start(t, srv, nil)
			h.rec.waitState(t, source.StateConnected)
			srv.CloseAll(tc.code, "")
			st := h.rec.waitState(t, tc.state)
			if !strings.Contains(st.Err, tc.say) {
				t.Fatalf("error %q, want it to say %q", st.Err, tc.say)
			}
			for i := 0; i < 20; i++ {
				h.clk.Advance(source.Backoff{}.WithDefaults().Cap)
			}
			if d := srv.Dials(); d != 1 {
				t.Fatalf("%d dials after close %d, want 1 (no retry storm)", d, tc.code)
			}
			m := h.rec.mark()
			h.client.ReconnectNow() // the user's explicit retry
			h.rec.waitStateAfter(t, m, source.StateConnected)
		})
	}
}

// TestUpgradeHeaders: no Origin header (the gateway refuses foreign
// origins), extra user headers applied, and the user's own Origin dropped.
func TestUpgradeHeaders(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	defer srv.Close()
	h := start(t, srv, func(c *Config) {
		c.Header = http.Header{"X-Proxy-Auth": {"abc"}, "Origin": {"http://evil.example"}}
	})
	h.rec.waitState(t, source.StateConnected)
	ups := srv.UpgradeHeaders()
	if o := ups[0].Get("Origin"); o != "" {
		t.Fatalf("sent Origin %q", o)
	}
	if v := ups[0].Get("X-Proxy-Auth"); v != "abc" {
		t.Fatalf("extra header X-Proxy-Auth = %q", v)
	}
}

// TestTLSVerification: wss is verified by default; a self-signed gateway
// is refused with advice, and accepted once its CA is configured.
func TestTLSVerification(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, TLS: true})
	t.Cleanup(srv.Close) // subtests run in parallel, after this function returns
	if !strings.HasPrefix(srv.URL, "https://") {
		t.Fatal(srv.URL)
	}
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		h := start(t, srv, nil)
		h.manual.Store(true)
		st := h.rec.waitState(t, source.StateReconnecting)
		if !strings.Contains(st.Err, "not trusted") || !strings.Contains(st.Err, "CA") {
			t.Fatalf("error %q does not explain the untrusted certificate", st.Err)
		}
	})
	t.Run("custom CA", func(t *testing.T) {
		t.Parallel()
		pool := x509.NewCertPool()
		pool.AddCert(srv.Certificate())
		h := start(t, srv, func(c *Config) { c.RootCAs = pool })
		h.rec.waitState(t, source.StateConnected)
		ref, err := h.client.CreateSession(ctxT(t), nil)
		if err != nil || ref.ID == "" {
			t.Fatalf("session over wss: %+v %v", ref, err)
		}
	})
}

// TestReconnectNowSkipsBackoff: the explicit "reconnect now" does not wait
// for the backoff timer.
func TestReconnectNowSkipsBackoff(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := start(t, srv, nil)
	h.manual.Store(true)
	h.rec.waitState(t, source.StateConnected)
	m := h.rec.mark()
	srv.Kick()
	st := h.rec.waitStateAfter(t, m, source.StateReconnecting)
	if st.NextRetry.IsZero() {
		t.Fatal("reconnecting without a retry time")
	}
	before := h.clk.Now()
	h.client.ReconnectNow()
	h.rec.waitReconnected(t, m)
	if !h.clk.Now().Equal(before) {
		t.Fatal("the clock moved: the reconnect waited for the backoff")
	}
}

// TestBackoffResetsAfterAStableMinute: repeated quick drops grow the
// attempt counter; a connection that lasted a minute resets it.
func TestBackoffResetsAfterAStableMinute(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	defer srv.Close()
	h := start(t, srv, nil)
	h.rec.waitState(t, source.StateConnected)
	var last source.Status
	for i := 1; i <= 3; i++ {
		m := h.rec.mark()
		srv.Kick()
		last = h.rec.waitStateAfter(t, m, source.StateReconnecting)
		h.rec.waitReconnected(t, m)
		if last.Attempt != i {
			t.Fatalf("drop %d: attempt %d", i, last.Attempt)
		}
	}
	h.clk.BlockUntil(1)
	for i := 0; i < 5; i++ { // a stable minute, kept alive by pongs
		h.clk.Advance(PingInterval)
		h.waitHeard(t)
	}
	m := h.rec.mark()
	srv.Kick()
	last = h.rec.waitStateAfter(t, m, source.StateReconnecting)
	if last.Attempt != 1 {
		t.Fatalf("after a stable minute the attempt is %d, want 1", last.Attempt)
	}
}
