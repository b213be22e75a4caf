package integration

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/herald-desktop/herald/app"
	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermespeer"
	"github.com/herald-desktop/herald/backend/testwait"
	"github.com/herald-desktop/herald/service"
)

// memKeyring is a keychain in memory, for one test's window.
type memKeyring struct {
	mu sync.Mutex
	m  map[string]string
}

func (k *memKeyring) Get(svc, user string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.m[svc+"/"+user], nil
}
func (k *memKeyring) Set(svc, user, secret string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[svc+"/"+user] = secret
	return nil
}
func (k *memKeyring) Delete(svc, user string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, svc+"/"+user)
	return nil
}

// windowOn starts the window's App (no Wails) with the dashboard gateway
// "lab" on p added from the form with its bridge switch on; the returned
// func waits for a snapshot that satisfies cond.
func windowOn(t *testing.T, p *hermespeer.Peer) (*app.WindowAPI, func(what string, cond func(app.Snapshot) bool) app.Snapshot) {
	t.Helper()
	settings, err := app.NewSettingsStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(app.Deps{Settings: settings, Secrets: app.NewSecrets(&memKeyring{m: map[string]string{}}), Store: approval.NewMemoryStore()})
	t.Cleanup(a.Close)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	wake := make(chan struct{})
	changed := func() <-chan struct{} { mu.Lock(); defer mu.Unlock(); return wake }
	sub := a.Service().Subscribe(service.WatchChanges|service.WatchApprovals, 0)
	go func() {
		for {
			if _, err := sub.Next(context.Background()); err != nil {
				return
			}
			mu.Lock()
			close(wake)
			wake = make(chan struct{})
			mu.Unlock()
		}
	}()
	w := a.WindowAPI()
	var kind string
	for _, k := range w.GatewayKinds() {
		if k.Bridge != nil {
			kind = k.Kind
		}
	}
	if err := w.AddGateway(app.AddGatewayRequest{Name: "lab", Kind: kind, URL: p.Base, Auth: "token", Secret: p.Secret, Bridge: true}); err != nil {
		t.Fatal(err)
	}
	wait := func(what string, cond func(app.Snapshot) bool) app.Snapshot {
		t.Helper()
		var s app.Snapshot
		testwait.Until(t, guard, what, changed, func() bool { s = w.Snapshot(); return cond(s) })
		return s
	}
	return w, wait
}

func labRow(s app.Snapshot) app.GatewayView {
	for _, g := range s.Gateways {
		if g.Name == "lab" {
			return g
		}
	}
	return app.GatewayView{}
}

// TestWindowBridgeOnRealDashboard: the window's gateway form turns on the
// bridge of the real 0.19.0 dashboard gateway with its address and token.
// With the plugin, the row says it is connected and an approval of a
// Hermes CLI process is shown and answered from the window; without it
// (the shared dashboard has none), the row says plainly that the plugin
// is not installed while the gateway itself is connected.
func TestWindowBridgeOnRealDashboard(t *testing.T) {
	t.Parallel()
	t.Run("plugin", func(t *testing.T) {
		t.Parallel()
		p := bridgePeer(t)
		w, wait := windowOn(t, p)
		wait("the bridge connected on the gateway's row", func(s app.Snapshot) bool {
			r := labRow(s)
			return r.State == "connected" && r.Bridge != nil && r.Bridge.State == "connected"
		})
		proc := startStandIn(t, p)
		io.WriteString(proc.in, "ask rm -rf ./build\n")
		id := proc.next(t, "ASKED")[1]
		s := wait("the CLI's approval in the window", func(s app.Snapshot) bool { return len(s.Approvals) == 1 })
		ap := s.Approvals[0]
		if ap.RequestID != id || ap.Command != "rm -rf ./build" || !strings.Contains(ap.DisplayDescription(), "asked in Telegram (Ops chat)") {
			t.Fatalf("approval %+v", ap)
		}
		if err := w.Answer(ap.Key, "once", false); err != nil {
			t.Fatal(err)
		}
		if res := proc.next(t, "RESULT"); res[1] != id || res[2] != "once" {
			t.Fatalf("the CLI process got %v", res)
		}
	})
	t.Run("no plugin", func(t *testing.T) {
		t.Parallel()
		p := shared[sharedKey(hermespeer.WS, "0.19.0")]
		if p == nil {
			t.Skip("the shared 0.19.0 dashboard did not start")
		}
		_, wait := windowOn(t, p)
		s := wait("the missing plugin on the gateway's row", func(s app.Snapshot) bool {
			r := labRow(s)
			return r.State == "connected" && r.Bridge != nil && r.Bridge.State != "connecting" && r.Bridge.State != "idle"
		})
		if r := labRow(s); r.Bridge.State != "config_error" || !strings.Contains(r.Bridge.Text, "plugin not installed") || r.Error != "" {
			t.Fatalf("row %+v, bridge %+v", r, r.Bridge)
		}
	})
}
