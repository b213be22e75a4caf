package app

import (
	"strings"
	"testing"

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
		if err := a.AddGateway(AddGatewayRequest{Name: name, URL: srv.URL, Kind: "ws", Auth: "token", Token: srv.Token()}); err != nil {
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
