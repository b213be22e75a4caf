package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/bridge/bridgetest"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// dashboard is a fake Hermes dashboard: the gateway (hermestest) on
// /api/ws and, when plugin is set, the Herald plugin's route (bridgetest)
// beside it on the same address, as the real dashboard serves both.
type dashboard struct {
	gw     *hermestest.Server
	plugin *bridgetest.Fake
	URL    string
}

// pluginToken: the plugin accepts the dashboard's own token ("same"),
// another one ("other": it refuses Herald's), or is not installed ("").
func newDashboard(t *testing.T, pluginToken string) *dashboard {
	t.Helper()
	gw := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	t.Cleanup(gw.Close)
	target, _ := url.Parse(gw.URL)
	mux := http.NewServeMux()
	d := &dashboard{gw: gw}
	switch pluginToken {
	case "same":
		d.plugin = bridgetest.New(gw.Token())
	case "other":
		d.plugin = bridgetest.New("not-" + gw.Token())
	}
	if d.plugin != nil {
		mux.Handle("/api/plugins/herald/", d.plugin)
	}
	mux.Handle("/", httputil.NewSingleHostReverseProxy(target))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	d.URL = srv.URL
	return d
}

// beside is the kind some driver rides beside, and that driver: found
// from the drivers, as the window finds it.
func beside(t *testing.T) (kind string, b source.Driver) {
	t.Helper()
	for _, d := range source.Drivers() {
		if b, ok := source.BesideOf(d.Kind); ok {
			return string(d.Kind), b
		}
	}
	t.Fatal("no driver rides beside another: nothing to test")
	return "", source.Driver{}
}

// TestGatewayKindsOfferTheBridgeWhereADriverRidesBeside: the form's
// switch comes from the drivers, with the words of the one that rides
// beside, and only the sign-ins it can use.
func TestGatewayKindsOfferTheBridgeWhereADriverRidesBeside(t *testing.T) {
	t.Parallel()
	for _, k := range (&App{}).GatewayKinds() {
		b, rides := source.BesideOf(source.Kind(k.Kind))
		if (k.Bridge != nil) != rides {
			t.Errorf("%s: bridge offered %v, a driver rides beside it %v", k.Kind, k.Bridge != nil, rides)
			continue
		}
		if !rides {
			continue
		}
		if k.Bridge.Name != b.BesideWords.Name || k.Bridge.Offer == "" || !strings.Contains(k.Bridge.Hint, "herald bridge install") {
			t.Errorf("%s: offer %+v", k.Kind, k.Bridge)
		}
		if len(k.Bridge.Auth) == 0 {
			t.Errorf("%s: the bridge works with none of its sign-ins", k.Kind)
		}
		for _, n := range k.Bridge.Auth {
			if _, err := b.Mode(n); err != nil {
				t.Errorf("%s: offered with sign-in %s, which the bridge lacks", k.Kind, n)
			}
		}
	}
}

// TestGatewayBridgeInTheWindow turns a gateway's bridge on and off from
// the form, for each state of the plugin on the host: the row says the
// bridge's state in plain words and the gateway's own state is untouched;
// with the plugin, a CLI approval reaches the window and is answered from
// it; Edit turns it off and on again, Remove removes it.
func TestGatewayBridgeInTheWindow(t *testing.T) {
	kind, b := beside(t)
	for _, tc := range []struct {
		name, plugin string
		state        source.State
		text         string // in the row's words
		why          string // in the bridge's reason
	}{
		{name: "installed", plugin: "same", state: source.StateConnected, text: "connected"},
		{name: "not installed", plugin: "", state: source.StateConfigError, text: "plugin not installed", why: ""},
		{name: "refused", plugin: "other", state: source.StateAuthFailed, text: "refused", why: "token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDashboard(t, tc.plugin) // closed after the app
			a, p, _, settingsPath := emptyDesktop(t)
			tok := d.gw.Token()
			req := AddGatewayRequest{Name: "lab", Kind: kind, URL: d.URL, Auth: "token", Secret: tok, Bridge: true}
			if err := a.AddGateway(req); err != nil {
				t.Fatal(err)
			}
			var row GatewayView
			p.waitFor(t, "the bridge's state on the gateway's row", func(f *fakePlatform) bool {
				row, _ = gatewayIn(f.last, "lab")
				return row.State == "connected" && row.Bridge != nil && row.Bridge.State == string(tc.state)
			})
			if !strings.Contains(row.Bridge.Text, tc.text) || !strings.Contains(row.Bridge.Error, tc.why) || row.Bridge.Name != b.BesideWords.Name {
				t.Fatalf("bridge %+v", row.Bridge)
			}
			if row.Error != "" {
				t.Fatalf("the gateway's own row shows an error: %q", row.Error)
			}
			if _, listed := gatewayIn(a.Snapshot(), service.BridgeName("lab")); listed {
				t.Fatal("the bridge is listed as a gateway of its own")
			}
			if w := a.Snapshot().Warnings; len(w) != 0 {
				t.Fatalf("warnings %q", w)
			}
			raw, _ := os.ReadFile(settingsPath)
			if strings.Contains(string(raw), tok) || !strings.Contains(string(raw), `"bridge": true`) {
				t.Fatalf("settings %s", raw)
			}
			if form, err := a.GatewayForm("lab"); err != nil || !form.Bridge {
				t.Fatalf("edit form %+v %v", form, err)
			}

			if tc.plugin == "same" {
				// An approval asked in the Hermes CLI on that host.
				id, answered := d.plugin.Ask(bridgetest.Ask{Command: "rm -rf ./build", Description: "recursive delete",
					Origin: bridgetest.Origin{Surface: "telegram", Chat: "Ops"}})
				var ap ApprovalView
				p.waitFor(t, "the bridge's approval in the window", func(f *fakePlatform) bool {
					if len(f.last.Approvals) == 1 {
						ap = f.last.Approvals[0]
					}
					return len(f.last.Approvals) == 1
				})
				if ap.Command != "rm -rf ./build" {
					t.Fatalf("approval %+v", ap)
				}
				if j, _ := json.Marshal(ap); !strings.Contains(string(j), "Telegram (Ops)") {
					t.Fatalf("the approval does not say where it was asked: %s", j)
				}
				if err := a.Answer(ap.Key, "once", false); err != nil {
					t.Fatal(err)
				}
				if got := <-answered; got != "once" {
					t.Fatalf("the plugin got %q for %s", got, id)
				}
			}

			// Edit turns it off: the bridge goes, the gateway stays.
			req.Secret, req.Bridge = "", false
			if err := a.EditGateway("lab", req); err != nil {
				t.Fatal(err)
			}
			p.waitFor(t, "the bridge off", func(f *fakePlatform) bool {
				row, _ = gatewayIn(f.last, "lab")
				return row.State == "connected" && row.Bridge == nil
			})
			if _, ok := a.Service().Source(service.BridgeName("lab")); ok {
				t.Fatal("the bridge still runs")
			}
			// And on again, with the token kept in the keychain.
			req.Bridge = true
			if err := a.EditGateway("lab", req); err != nil {
				t.Fatal(err)
			}
			p.waitFor(t, "the bridge on again", func(f *fakePlatform) bool {
				row, _ = gatewayIn(f.last, "lab")
				return row.Bridge != nil && row.Bridge.State == string(tc.state)
			})
			if err := a.Reconnect("lab"); err != nil {
				t.Fatal(err)
			}
			if err := a.RemoveGateway("lab"); err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"lab", service.BridgeName("lab")} {
				if _, ok := a.Service().Source(n); ok {
					t.Fatalf("%s runs after Remove", n)
				}
			}
		})
	}
}

// TestGatewayBridgeRefusedWhereItCannotBe: the form cannot turn a bridge
// on for a kind nothing rides beside, nor with a sign-in it cannot use;
// nothing is saved.
func TestGatewayBridgeRefusedWhereItCannotBe(t *testing.T) {
	a, _, _, settingsPath := emptyDesktop(t)
	kind, _ := beside(t)
	var cases []AddGatewayRequest
	for _, k := range a.GatewayKinds() {
		if k.Bridge == nil {
			cases = append(cases, AddGatewayRequest{Name: "x-" + k.Kind, Kind: k.Kind, URL: k.DefaultURL, Auth: k.Auth[0].Name, Secret: "s", Bridge: true})
			continue
		}
		for _, m := range k.Auth {
			if !strings.Contains(strings.Join(k.Bridge.Auth, " "), m.Name) {
				cases = append(cases, AddGatewayRequest{Name: "x-" + m.Name, Kind: k.Kind, URL: k.DefaultURL, Auth: m.Name, Username: "me", Secret: "s", Bridge: true})
			}
		}
	}
	if len(cases) == 0 || kind == "" {
		t.Fatal("no refusal to test")
	}
	for _, req := range cases {
		err := a.AddGateway(req)
		if err == nil || !strings.Contains(err.Error(), "off") {
			t.Errorf("%+v: %v", req, err)
		}
	}
	if raw, err := os.ReadFile(settingsPath); err == nil && strings.Contains(string(raw), "x-") {
		t.Fatalf("saved %s", raw)
	}
}

// TestGatewayBridgeSettings: the switch round-trips through settings.json
// without a secret, settings from before it load with it off, and a
// restart brings the bridge back.
func TestGatewayBridgeSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := `{"gateways":[{"name":"lab","url":"http://127.0.0.1:9119","kind":"ws","auth":"token","sessions":["a"]}],"close_to_tray":true,"approval_timeout_seconds":300}`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	st, _ := NewSettingsStore(dir)
	got, err := st.Load()
	if err != nil || len(got.Gateways) != 1 || got.Gateways[0].Bridge || got.Gateways[0].Sessions[0] != "a" {
		t.Fatalf("old settings %+v %v", got, err)
	}
	got.Gateways[0].Bridge = true
	if err := st.Save(got); err != nil {
		t.Fatal(err)
	}
	again, err := st.Load()
	if err != nil || !again.Gateways[0].Bridge {
		t.Fatalf("reloaded %+v %v", again, err)
	}
	again.Gateways[0].Bridge = false
	if err := st.Save(again); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(filepath.Join(dir, "settings.json")); strings.Contains(string(raw), "bridge") {
		t.Fatalf("a bridge that is off is written: %s", raw)
	}
}

// TestGatewayBridgeComesBackAfterARestart: Start opens a saved gateway's
// bridge with the gateway's token from the keychain.
func TestGatewayBridgeComesBackAfterARestart(t *testing.T) {
	kind, _ := beside(t)
	keyring.MockInit()
	settings, _ := NewSettingsStore(t.TempDir())
	secrets := NewSecrets(OSKeyring{})
	d := newDashboard(t, "same")
	first := New(Deps{Version: "test", Settings: settings, Secrets: secrets, Store: approval.NewMemoryStore(), Autostart: Autostart{Dir: t.TempDir()}})
	first.Attach(newFakePlatform())
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	if err := first.AddGateway(AddGatewayRequest{Name: "lab", Kind: kind, URL: d.URL, Auth: "token", Secret: d.gw.Token(), Bridge: true}); err != nil {
		t.Fatal(err)
	}
	first.Close()
	_, p := startDesktop(t, settings, secrets)
	p.waitFor(t, "the bridge connected after a restart", func(f *fakePlatform) bool {
		row, _ := gatewayIn(f.last, "lab")
		return row.Bridge != nil && row.Bridge.State == string(source.StateConnected)
	})
}

// TestGatewayBridgeNameTaken: a bridge added earlier as a gateway of its
// own under the name the switch would use stays a gateway; the switch's
// bridge is not started and the row says why, the gateway runs.
func TestGatewayBridgeNameTaken(t *testing.T) {
	kind, b := beside(t)
	d := newDashboard(t, "same") // closed after the app (cleanups run last first)
	a, p, _, _ := emptyDesktop(t)
	tok := d.gw.Token()
	if err := a.AddGateway(AddGatewayRequest{Name: service.BridgeName("lab"), Kind: string(b.Kind), URL: d.URL, Auth: "token", Secret: tok}); err != nil {
		t.Fatal(err)
	}
	if err := a.AddGateway(AddGatewayRequest{Name: "lab", Kind: kind, URL: d.URL, Auth: "token", Secret: tok, Bridge: true}); err != nil {
		t.Fatal(err)
	}
	var row GatewayView
	p.waitFor(t, "both rows", func(f *fakePlatform) bool {
		row, _ = gatewayIn(f.last, "lab")
		own, ok := gatewayIn(f.last, service.BridgeName("lab"))
		return row.State == "connected" && ok && own.State == "connected"
	})
	if row.Bridge == nil || row.Bridge.Text != "not started" || !strings.Contains(row.Bridge.Error, "already configured") {
		t.Fatalf("bridge %+v", row.Bridge)
	}
}
