package app

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/zalando/go-keyring"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestNoCredentialOnDisk runs a full session (password sign-in, tickets,
// approvals whose commands carry secrets, failures) and then searches the
// config dir, the audit database and the logs for every credential used.
func TestNoCredentialOnDisk(t *testing.T) {
	keyring.MockInit()
	const password = "correct-horse-battery-9f3a"
	const cmdToken = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Password: password})
	defer srv.Close()
	live, stored := srv.CreateSession()

	dir := t.TempDir()
	settings, _ := NewSettingsStore(filepath.Join(dir, "config"))
	store, err := approval.OpenStore(filepath.Join(dir, "config", "audit.db"), approval.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuf
	a := New(Deps{
		Settings: settings, Secrets: NewSecrets(OSKeyring{}), Store: store,
		Autostart: Autostart{Dir: filepath.Join(dir, "autostart")},
		Logger:    slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	p := newFakePlatform()
	a.Attach(p)
	a.Start()
	// A wrong password first (its error is shown and logged), then the
	// right one through the add-gateway flow.
	if r := a.TestGateway(AddGatewayRequest{URL: srv.URL, Auth: "password", Secret: "wrong-" + password}); r.OK {
		t.Fatal("wrong password passed the test")
	}
	if r := a.TestGateway(AddGatewayRequest{URL: srv.URL, Auth: "password", Secret: password}); !r.OK {
		t.Fatalf("test with the right password: %+v", r)
	}
	if err := a.AddGateway(AddGatewayRequest{Name: "lab", URL: srv.URL, Auth: "password", Secret: password}); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "connected", func(f *fakePlatform) bool {
		return len(f.last.Gateways) == 1 && f.last.Gateways[0].State == "connected"
	})
	src, _ := a.Service().Source("lab")
	if err := src.Follow(context.Background(), stored); err != nil {
		t.Fatal(err)
	}
	_, agent, _ := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "GITHUB_TOKEN=" + cmdToken + " git push"})
	p.waitFor(t, "approval", func(f *fakePlatform) bool { return len(f.last.Approvals) == 1 })
	if n := p.notified[0]; strings.Contains(n.Body, cmdToken) {
		t.Fatalf("notification shows the secret: %q", n.Body)
	}
	if err := a.Answer(p.last.Approvals[0].Key, "deny", false); err != nil {
		t.Fatal(err)
	}
	<-agent
	dials := srv.Dials()
	srv.RevokeAuth() // the gateway ends the session: "sign in again"
	p.waitFor(t, "auth failed", func(f *fakePlatform) bool {
		return len(f.last.Gateways) == 1 && f.last.Gateways[0].State == "auth_failed"
	})
	a.Reconnect("lab") // the user signs in again: the keychain password is used
	p.waitFor(t, "reconnected", func(f *fakePlatform) bool {
		return len(f.last.Gateways) == 1 && f.last.Gateways[0].State == "connected" && srv.Dials() == dials+1
	})
	a.Close()
	store.Close()

	secrets := []string{password, cmdToken}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		for _, s := range secrets {
			if !bytes.Contains(b, []byte(s)) {
				continue
			}
			// The audit log is evidence of what ran: it keeps the command
			// as sent, in a file only the user can read.
			if info, err := d.Info(); s == cmdToken && filepath.Base(path) == "audit.db" && err == nil && info.Mode().Perm() == 0o600 {
				continue
			}
			t.Errorf("%s contains a credential", path)
		}
		return nil
	})
	for _, s := range secrets {
		if strings.Contains(logs.String(), s) {
			t.Errorf("logs contain a credential")
		}
	}
	if v, _ := keyring.Get(KeyringService, "lab/password"); v != password {
		t.Fatal("the password is not in the keychain")
	}
}
