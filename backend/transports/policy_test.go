package transports_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/bridge/bridgetest"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
)

// refusingServer starts a fake server of a transport that refuses the
// credentials Herald gives it, and returns its URL and those secrets.
var refusingServers = map[source.Kind]func(t *testing.T) (string, map[string]string){
	"ws": func(t *testing.T) (string, map[string]string) {
		srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
		t.Cleanup(srv.Close)
		return srv.URL, map[string]string{"token": "not-" + srv.Token()}
	},
	"api": func(t *testing.T) (string, map[string]string) {
		srv := apiservertest.NewServer(apiservertest.Options{Dialect: apiservertest.SingleConsumer})
		t.Cleanup(srv.Close)
		return srv.URL, map[string]string{"key": "not-the-key-0123456789"}
	},
	"bridge": func(t *testing.T) (string, map[string]string) {
		f := bridgetest.New("tok")
		srv := httptest.NewServer(f)
		t.Cleanup(srv.Close)
		return srv.URL, map[string]string{"token": "not-tok"}
	},
}

// TestRefusedCredentialsPolicy: every transport runs the one reconnect
// loop (source.Supervisor), so refused credentials are handled the same
// everywhere: the source says so (auth_failed, with a sentence), arms no
// timer and tries nothing more however long it waits, and tries exactly
// once more, at once, when the user asks (ReconnectNow). On a fake clock.
func TestRefusedCredentialsPolicy(t *testing.T) {
	t.Parallel()
	drivers := source.Drivers()
	if len(drivers) != len(refusingServers) {
		t.Fatalf("%d transports registered, %d with a refusing server here: add the new one", len(drivers), len(refusingServers))
	}
	for _, d := range drivers {
		t.Run(string(d.Kind), func(t *testing.T) {
			t.Parallel()
			serve, ok := refusingServers[d.Kind]
			if !ok {
				t.Fatalf("no refusing server for %s", d.Kind)
			}
			url, secrets := serve(t)
			clk := clock.NewFake(time.Unix(1_700_000_000, 0))
			var mu sync.Mutex
			var states []source.State
			changed := make(chan struct{}, 1)
			src, err := d.Open(source.Config{Name: "refused", URL: url, Secrets: secrets, Clock: clk}, source.Hooks{
				OnStatus: func(st source.Status) {
					mu.Lock()
					if len(states) == 0 || states[len(states)-1] != st.State {
						states = append(states, st.State) // moves, not repeats
					}
					mu.Unlock()
					select {
					case changed <- struct{}{}:
					default:
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			count := func(s source.State) int {
				mu.Lock()
				defer mu.Unlock()
				n := 0
				for _, x := range states {
					if x == s {
						n++
					}
				}
				return n
			}
			waitFor := func(what string, cond func() bool) {
				t.Helper()
				guard := time.NewTimer(20 * time.Second)
				defer guard.Stop()
				for !cond() {
					select {
					case <-changed:
					case <-guard.C:
						mu.Lock()
						defer mu.Unlock()
						t.Fatalf("no %s; states %v", what, states)
					}
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = src.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })

			waitFor("refusal", func() bool { return count(source.StateAuthFailed) == 1 })
			st := src.Status()
			if st.State != source.StateAuthFailed || st.Err == "" || !st.NextRetry.IsZero() {
				t.Fatalf("status after the refusal: %+v", st)
			}
			for _, s := range secrets {
				if strings.Contains(st.Err, s) {
					t.Fatalf("the status quotes the secret: %q", st.Err)
				}
			}
			// Nothing is armed to try again: a day passes without a try.
			if n := clk.Waiters(); n != 0 {
				t.Fatalf("%d timers armed while refused", n)
			}
			for range 24 {
				clk.Advance(time.Hour)
			}
			if n := count(source.StateConnecting); n != 1 {
				t.Fatalf("%d tries after a day, want 1", n)
			}
			// The user asks: exactly one more try, at once.
			before := clk.Now()
			src.ReconnectNow()
			waitFor("second refusal", func() bool { return count(source.StateAuthFailed) == 2 })
			if n := count(source.StateConnecting); n != 2 || !clk.Now().Equal(before) {
				t.Fatalf("%d tries after ReconnectNow (clock moved %v), want 2 at once", n, clk.Now().Sub(before))
			}
			if n := clk.Waiters(); n != 0 {
				t.Fatalf("%d timers armed while refused again", n)
			}
		})
	}
}
