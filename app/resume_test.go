package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/zalando/go-keyring"
)

// TestSavedSessionThatEndedIsDropped: of the followed sessions saved in
// the settings, one ended while Herald was not running. Herald resumes
// only the live one, drops the other from the settings and says so in
// the window in a sentence; the gateway never resumed the ended one.
func TestSavedSessionThatEndedIsDropped(t *testing.T) {
	keyring.MockInit()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	t.Cleanup(srv.Close)
	_, ended := srv.CreateSession()
	srv.Restart() // while Herald was not running
	live, stored := srv.CreateSession()
	settings, _ := NewSettingsStore(t.TempDir())
	st := DefaultSettings()
	st.Gateways = []GatewaySettings{{Name: "lab", URL: srv.URL, Kind: "ws", Auth: "token", Sessions: []string{ended, stored}}}
	if err := settings.Save(st); err != nil {
		t.Fatal(err)
	}
	secrets := NewSecrets(OSKeyring{})
	if err := secrets.Set("lab", "token", srv.Token()); err != nil {
		t.Fatal(err)
	}
	a := New(Deps{Version: "test", Settings: settings, Secrets: secrets, Store: approval.NewMemoryStore(), Autostart: Autostart{Dir: t.TempDir()}})
	t.Cleanup(a.Close)
	p := newFakePlatform()
	a.Attach(p)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	waitAttached(t, srv, live)
	said := func(s Snapshot) bool {
		return slices.ContainsFunc(s.Warnings, func(w string) bool {
			return strings.Contains(w, ended) && strings.Contains(w, "ended on lab while Herald was not running")
		})
	}
	p.waitFor(t, "the window to say the ended session is no longer followed", func(*fakePlatform) bool { return said(a.Snapshot()) })
	saved, err := settings.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := saved.Gateways[0].Sessions; !slices.Equal(got, []string{stored}) {
		t.Errorf("saved sessions %v, want only the live %s", got, stored)
	}
	for _, s := range srv.Sessions() {
		if s.StoredID == ended {
			t.Errorf("the ended session %s was resumed on the gateway (as %s)", ended, s.ID)
		}
	}
}
