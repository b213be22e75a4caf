package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/zalando/go-keyring"
)

// emptyDesktop runs an App with no gateway configured, the fake platform
// and go-keyring's mock keychain (process-wide: not parallel).
func emptyDesktop(t *testing.T) (*App, *fakePlatform, *Secrets, string) {
	t.Helper()
	keyring.MockInit()
	dir := t.TempDir()
	settings, _ := NewSettingsStore(dir)
	secrets := NewSecrets(OSKeyring{})
	a, p := startDesktop(t, settings, secrets)
	return a, p, secrets, filepath.Join(dir, "settings.json")
}

// startDesktop starts an App on settings and secrets with the fake
// platform.
func startDesktop(t *testing.T, settings *SettingsStore, secrets *Secrets) (*App, *fakePlatform) {
	t.Helper()
	a := New(Deps{Version: "test", Settings: settings, Secrets: secrets, Store: approval.NewMemoryStore(), Autostart: Autostart{Dir: t.TempDir()}})
	t.Cleanup(a.Close)
	p := newFakePlatform()
	a.Attach(p)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	return a, p
}

func gatewayIn(s Snapshot, name string) (GatewayView, bool) {
	for _, g := range s.Gateways {
		if g.Name == name {
			return g, true
		}
	}
	return GatewayView{}, false
}

// TestAPIServerInTheGatewayForm: an API server is added from the window's
// form (URL + key, the key only in the keychain), connects, shows its
// approvals next to the gateways', is edited (renamed, key kept) and
// removed with its key.
func TestAPIServerInTheGatewayForm(t *testing.T) {
	a, p, secrets, settingsPath := emptyDesktop(t)
	api := apiservertest.NewServer(apiservertest.Options{})
	defer api.Close()
	key := api.Key()

	if r := a.TestGateway(AddGatewayRequest{Kind: "api", URL: api.URL, Auth: "key", Secret: "wrong-key-0123456789abc"}); r.OK || r.Stage != "key" || !strings.Contains(r.Message, "API_SERVER_KEY") {
		t.Fatalf("test with a wrong key: %+v", r)
	}
	if r := a.TestGateway(AddGatewayRequest{Kind: "api", URL: api.URL, Auth: "key", Secret: key}); !r.OK {
		t.Fatalf("test with the right key: %+v", r)
	}
	if err := a.AddGateway(AddGatewayRequest{Name: "runs", Kind: "api", URL: api.URL, Auth: "key", Secret: key}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(settingsPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), key) {
		t.Fatalf("settings.json holds the API key: %s", raw)
	}
	var st Settings
	if err := json.Unmarshal(raw, &st); err != nil || len(st.Gateways) != 1 || st.Gateways[0].Kind != "api" || st.Gateways[0].Auth != "key" {
		t.Fatalf("settings %+v %v", st, err)
	}
	if got, _ := secrets.Get("runs", "key"); got != key {
		t.Fatal("the key is not in the keychain")
	}
	p.waitFor(t, "the API server connected", func(f *fakePlatform) bool {
		g, ok := gatewayIn(f.last, "runs")
		return ok && g.Kind == "api" && g.State == "connected" && g.URL == api.URL
	})

	// Its approvals reach the window and are answered from it.
	if _, err := a.Service().StartRun(context.Background(), "runs", "approve-me: rm -rf ./build"); err != nil {
		t.Fatal(err)
	}
	var ap ApprovalView
	p.waitFor(t, "the API server's approval", func(f *fakePlatform) bool {
		if len(f.last.Approvals) == 1 {
			ap = f.last.Approvals[0]
		}
		return len(f.last.Approvals) == 1
	})
	if ap.Gateway != "runs" || ap.Command != "rm -rf ./build" {
		t.Fatalf("approval %+v", ap)
	}
	if err := a.Answer(ap.Key, "deny", false); err != nil {
		t.Fatal(err)
	}
	if got := api.Approvals(); len(got) != 1 || got[0].Choice != "deny" {
		t.Fatalf("the API server recorded %+v", got)
	}

	// The edit form never carries the key; saving with it empty keeps it.
	form, err := a.GatewayForm("runs")
	if err != nil || !form.HasSecret || form.Secret != "" || form.Kind != "api" || form.URL != api.URL {
		t.Fatalf("edit form %+v %v", form, err)
	}
	form.Name = "hermes-api"
	if err := a.EditGateway("runs", form.AddGatewayRequest); err != nil {
		t.Fatal(err)
	}
	if got, _ := secrets.Get("hermes-api", "key"); got != key {
		t.Fatal("renaming lost the key")
	}
	if got, _ := secrets.Get("runs", "key"); got != "" {
		t.Fatal("the old name's key stayed in the keychain")
	}
	p.waitFor(t, "renamed and connected", func(f *fakePlatform) bool {
		g, ok := gatewayIn(f.last, "hermes-api")
		_, old := gatewayIn(f.last, "runs")
		return ok && !old && g.State == "connected"
	})

	if err := a.RemoveGateway("hermes-api"); err != nil {
		t.Fatal(err)
	}
	if got, _ := secrets.Get("hermes-api", "key"); got != "" {
		t.Fatal("removing kept the key")
	}
	if _, ok := a.Service().Source("hermes-api"); ok {
		t.Fatal("removed API server still runs")
	}
	raw, _ = os.ReadFile(settingsPath)
	if err := json.Unmarshal(raw, &st); err != nil || len(st.Gateways) != 0 {
		t.Fatalf("settings after remove %s", raw)
	}
}

// TestEditGatewayChangesSignIn: editing a WebSocket gateway's token
// reconnects it with the new one; the old token is not kept.
func TestEditGatewayChangesSignIn(t *testing.T) {
	a, p, secrets, settingsPath := emptyDesktop(t)
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	if err := a.AddGateway(AddGatewayRequest{Name: "lab", URL: srv.URL, Auth: "token", Secret: "wrong-token-0123456789"}); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "the wrong token refused", func(f *fakePlatform) bool {
		g, ok := gatewayIn(f.last, "lab")
		return ok && g.State == "auth_failed"
	})
	if err := a.EditGateway("lab", AddGatewayRequest{Name: "lab", URL: srv.URL, Auth: "token", Secret: srv.Token()}); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "connected with the new token", func(f *fakePlatform) bool {
		g, ok := gatewayIn(f.last, "lab")
		return ok && g.State == "connected" && g.Kind == "ws"
	})
	if got, _ := secrets.Get("lab", "token"); got != srv.Token() {
		t.Fatal("the new token is not in the keychain")
	}
	raw, _ := os.ReadFile(settingsPath)
	if strings.Contains(string(raw), srv.Token()) || strings.Contains(string(raw), "wrong-token") {
		t.Fatalf("settings.json holds a token: %s", raw)
	}
	if err := a.EditGateway("nosuch", AddGatewayRequest{Name: "x", URL: srv.URL}); err == nil {
		t.Fatal("editing an unknown gateway succeeded")
	}
}

// TestAddGatewayRefusesATokenInTheAddress: the dashboard's WebSocket
// address with its ?token= is refused before anything is saved, in one
// line that does not echo the token.
func TestAddGatewayRefusesATokenInTheAddress(t *testing.T) {
	a, _, _, settingsPath := emptyDesktop(t)
	const tok = "s3cret-token-0123456789"
	for _, req := range []AddGatewayRequest{
		{Name: "lab", URL: "ws://127.0.0.1:9119/api/ws?token=" + tok, Auth: "token", Secret: tok},
		{Name: "runs", Kind: "api", URL: "http://127.0.0.1:8642/?key=" + tok, Auth: "key", Secret: tok},
	} {
		err := a.AddGateway(req)
		if err == nil || strings.Contains(err.Error(), tok) || !strings.Contains(err.Error(), "separately") {
			t.Fatalf("AddGateway(%s): %v, want a refusal that names what to do and not the secret", req.URL, err)
		}
		if err := a.EditGateway("lab", req); err == nil || strings.Contains(err.Error(), tok) {
			t.Fatalf("EditGateway(%s): %v", req.URL, err)
		}
	}
	raw, _ := os.ReadFile(settingsPath)
	if strings.Contains(string(raw), tok) {
		t.Fatalf("settings.json holds the token: %s", raw)
	}
}

// TestGatewayKindsAreTheDrivers: the form's kinds are the registered
// transports, the default first, each with its title, hint, address and
// sign-ins as its driver says; the page gets them without the command
// line's flag and variable names.
func TestGatewayKindsAreTheDrivers(t *testing.T) {
	a, _, _, _ := emptyDesktop(t)
	kinds := a.WindowAPI().GatewayKinds()
	drivers := source.Drivers()
	if len(kinds) != len(drivers) || len(kinds) < 2 {
		t.Fatalf("%d kinds for %d drivers", len(kinds), len(drivers))
	}
	for i, d := range drivers {
		k := kinds[i]
		for j, m := range d.Auth {
			if j >= len(k.Auth) || k.Auth[j] != (SignIn{Name: m.Name, Label: m.Label, Secret: m.Secret, Username: m.Username, Hint: m.Hint}) {
				t.Errorf("%s: sign-ins %+v, its driver's %+v", k.Kind, k.Auth, d.Auth)
			}
		}
		if k.Kind != string(d.Kind) || k.Title != d.Title || k.Hint != d.Hint || k.DefaultURL != d.DefaultURL || k.Detect != (d.Detect != nil) {
			t.Errorf("kind %d is %+v, its driver %s %q %q", i, k, d.Kind, d.Title, d.DefaultURL)
		}
		if k.Hint == "" || k.DefaultURL == "" || len(k.Auth) == 0 {
			t.Errorf("%s: the form would miss its hint, address or sign-ins: %+v", k.Kind, k)
		}
		for _, m := range k.Auth {
			if m.Secret != "" && m.Hint == "" {
				t.Errorf("%s: sign-in %s does not say where its secret comes from", k.Kind, m.Name)
			}
		}
	}
	raw, err := a.callBound("GatewayKinds", nil)
	if err != nil {
		t.Fatal(err)
	}
	var page []map[string]any
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	if page[0]["default_url"] == "" || page[0]["auth"] == nil || strings.Contains(string(raw), "HERALD_") || strings.Contains(string(raw), `"Flag"`) {
		t.Fatalf("the page gets %s", raw)
	}
}

// TestSettingsWithoutKindStillWork: a gateway saved before there were
// kinds (no "kind" in settings.json) is the default transport's: it
// connects with its keychain token, the Edit form names its kind, and a
// save with the secret field left empty keeps the token.
func TestSettingsWithoutKindStillWork(t *testing.T) {
	keyring.MockInit()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"gateways":[{"name":"lab","url":"`+srv.URL+`","auth":"token"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	settings, _ := NewSettingsStore(dir)
	secrets := NewSecrets(OSKeyring{})
	if err := secrets.Set("lab", "token", srv.Token()); err != nil {
		t.Fatal(err)
	}
	a, p := startDesktop(t, settings, secrets)
	def, _ := source.Lookup("")
	p.waitFor(t, "connected with the stored token", func(f *fakePlatform) bool {
		g, ok := gatewayIn(f.last, "lab")
		return ok && g.State == "connected" && g.Kind == string(def.Kind)
	})
	form, err := a.GatewayForm("lab")
	if err != nil || form.Kind != string(def.Kind) || form.Auth != "token" || !form.HasSecret || form.Secret != "" {
		t.Fatalf("edit form %+v %v", form, err)
	}
	form.URL = srv.URL + "/"
	if err := a.EditGateway("lab", form.AddGatewayRequest); err != nil {
		t.Fatal(err)
	}
	if got, _ := secrets.Get("lab", "token"); got != srv.Token() {
		t.Fatal("saving with an empty secret field lost the token")
	}
	p.waitFor(t, "reconnected after the edit", func(f *fakePlatform) bool {
		g, ok := gatewayIn(f.last, "lab")
		return ok && g.State == "connected" && g.URL == srv.URL+"/"
	})
}

// TestProbeGatewayAsksTheKindsDriver: Detect sign-in asks the server of
// the form's kind; a kind whose driver cannot say is told to pick one.
func TestProbeGatewayAsksTheKindsDriver(t *testing.T) {
	a, _, _, _ := emptyDesktop(t)
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	for _, k := range a.GatewayKinds() {
		r := a.ProbeGateway(k.Kind, srv.URL)
		if k.Detect != (r.Error == "") {
			t.Errorf("%s (detect %v): %+v", k.Kind, k.Detect, r)
		}
		if k.Detect && (!r.Reachable || r.SuggestedAuth == "") {
			t.Errorf("%s: %+v", k.Kind, r)
		}
		if !k.Detect && !strings.Contains(r.Error, "pick one") {
			t.Errorf("%s: %q", k.Kind, r.Error)
		}
	}
	if r := a.ProbeGateway("carrier-pigeon", srv.URL); r.Error == "" || !strings.Contains(r.Error, "not a kind") {
		t.Errorf("unknown kind: %+v", r)
	}
}
