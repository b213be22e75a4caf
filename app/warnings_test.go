package app

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestNoKeychainIsSaidOnce: adding gateways without a keychain shows the
// session-only banner (SecretsSessionOnly) and no extra warning per
// gateway; a problem met twice is one warning in the window.
func TestNoKeychainIsSaidOnce(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	settings, _ := NewSettingsStore(t.TempDir())
	a := New(Deps{Settings: settings, Secrets: NewSecrets(brokenKeyring{block: closedChan()}), Autostart: Autostart{Dir: t.TempDir()}})
	defer a.Close()
	for _, name := range []string{"lab", "lab2"} {
		if err := a.AddGateway(AddGatewayRequest{Name: name, URL: srv.URL, Kind: "ws", Auth: "token", Secret: srv.Token()}); err != nil {
			t.Fatalf("AddGateway(%s): %v", name, err)
		}
	}
	snap := a.Snapshot()
	if !snap.SecretsSessionOnly {
		t.Fatal("the window is not told that secrets are kept for this session only")
	}
	for _, w := range snap.Warnings {
		if strings.Contains(w, "keychain") {
			t.Fatalf("the missing keychain is said again as a warning: %q", snap.Warnings)
		}
	}
	a.warn("gateway lab: something went wrong")
	a.warn("gateway lab: something went wrong")
	if w := a.Snapshot().Warnings; len(w) != 1 {
		t.Fatalf("warnings %q, want the repeated one once", w)
	}
}

// TestGatewayWhoseSecretIsGoneIsListedAndFixable: after a restart without
// a keychain a configured gateway's token is gone. The window still lists
// it, saying what happened and what to do, and Edit with the token
// connects it; before, it was invisible and its name taken.
func TestGatewayWhoseSecretIsGoneIsListedAndFixable(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	settings, _ := NewSettingsStore(t.TempDir())
	st := DefaultSettings()
	st.Gateways = []GatewaySettings{{Name: "lab", URL: srv.URL, Kind: "ws", Auth: "token"}}
	if err := settings.Save(st); err != nil {
		t.Fatal(err)
	}
	a := New(Deps{Settings: settings, Secrets: NewSecrets(brokenKeyring{block: closedChan()}), Autostart: Autostart{Dir: t.TempDir()}})
	defer a.Close()
	p := newFakePlatform()
	a.Attach(p)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	snap := a.Snapshot()
	if len(snap.Gateways) != 1 || snap.Gateways[0].Name != "lab" || snap.Gateways[0].State != "config_error" ||
		!strings.Contains(snap.Gateways[0].Error, "token") || !strings.Contains(snap.Gateways[0].Error, "Edit") {
		t.Fatalf("gateways after a restart without keychain: %+v", snap.Gateways)
	}
	if _, err := a.GatewayForm("lab"); err != nil {
		t.Fatalf("the Edit form cannot open: %v", err)
	}
	if err := a.EditGateway("lab", AddGatewayRequest{Name: "lab", URL: srv.URL, Kind: "ws", Auth: "token", Secret: srv.Token()}); err != nil {
		t.Fatalf("Edit with the token: %v", err)
	}
	p.waitFor(t, "lab connected after Edit", func(f *fakePlatform) bool {
		g := f.last.Gateways
		return len(g) == 1 && g[0].Name == "lab" && g[0].State == "connected" && g[0].Error == ""
	})
	if err := a.RemoveGateway("lab"); err != nil {
		t.Fatal(err)
	}
	if g := a.Snapshot().Gateways; len(g) != 0 {
		t.Fatalf("gateways after Remove: %+v", g)
	}
}

// switchKeyring fails like a locked keychain until it is unlocked.
type switchKeyring struct {
	mu       sync.Mutex
	unlocked bool
	m        map[string]string
}

func (k *switchKeyring) Get(svc, user string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.unlocked {
		return "", errors.New("the collection is locked")
	}
	v, ok := k.m[svc+"/"+user]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}
func (k *switchKeyring) Set(svc, user, v string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.unlocked {
		return errors.New("the collection is locked")
	}
	k.m[svc+"/"+user] = v
	return nil
}
func (k *switchKeyring) Delete(svc, user string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, svc+"/"+user)
	return nil
}

// TestReconnectStartsAGatewayThatCouldNotStart: the keychain was locked
// at start; Reconnect on the gateway's row says again what to do while it
// is, and connects once it is unlocked.
func TestReconnectStartsAGatewayThatCouldNotStart(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	settings, _ := NewSettingsStore(t.TempDir())
	st := DefaultSettings()
	st.Gateways = []GatewaySettings{{Name: "lab", URL: srv.URL, Kind: "ws", Auth: "token"}}
	if err := settings.Save(st); err != nil {
		t.Fatal(err)
	}
	kr := &switchKeyring{m: map[string]string{KeyringService + "/lab/token": srv.Token()}}
	a := New(Deps{Settings: settings, Secrets: NewSecrets(kr), Autostart: Autostart{Dir: t.TempDir()}})
	defer a.Close()
	p := newFakePlatform()
	a.Attach(p)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if err := a.Reconnect("lab"); err == nil || !strings.Contains(err.Error(), "Edit") {
		t.Fatalf("Reconnect with the keychain locked = %v, want what to do", err)
	}
	kr.mu.Lock()
	kr.unlocked = true
	kr.mu.Unlock()
	if err := a.Reconnect("lab"); err != nil {
		t.Fatalf("Reconnect once unlocked: %v", err)
	}
	p.waitFor(t, "lab connected after Reconnect", func(f *fakePlatform) bool {
		g := f.last.Gateways
		return len(g) == 1 && g[0].State == "connected" && g[0].Error == ""
	})
}

// TestHistoryThatCannotOpenIsSaid: Herald runs without an approval
// history it could not open, and its window says so with why.
func TestHistoryThatCannotOpenIsSaid(t *testing.T) {
	t.Parallel()
	settings, _ := NewSettingsStore(t.TempDir())
	a := New(Deps{Settings: settings, Autostart: Autostart{Dir: t.TempDir()},
		HistoryErr: errors.New("the approval history /x/audit.db is in use by another process; quit the other Herald and try again")})
	defer a.Close()
	w := a.Snapshot().Warnings
	if len(w) != 1 || !strings.Contains(w[0], "/x/audit.db is in use") || !strings.Contains(w[0], "not being recorded") {
		t.Fatalf("warnings %q", w)
	}
}
