package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

func TestSettingsRoundTripWithoutSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := NewSettingsStore(filepath.Join(dir, "herald"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Load()
	if err != nil || !got.CloseToTray || got.ApprovalTimeoutSeconds != 300 {
		t.Fatalf("first-run settings = %+v, %v", got, err)
	}
	got.Gateways = []GatewaySettings{{Name: "lab", URL: "https://lab:9119", Kind: "ws", Auth: "password", Username: "me"}, {Name: "home", URL: "http://127.0.0.1:9119", Kind: "ws", Auth: "token"}}
	if err := st.Save(got); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "herald", "settings.json"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("settings file mode %v, %v; want 0600", info.Mode(), err)
	}
	again, err := st.Load()
	if err != nil || len(again.Gateways) != 2 || again.Gateways[0].Name != "home" {
		t.Fatalf("reloaded %+v, %v", again, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "herald", "settings.json"), []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged settings error = %v", err)
	}
}

type brokenKeyring struct{ block chan struct{} }

func (b brokenKeyring) Get(string, string) (string, error) {
	<-b.block
	return "", errors.New("dbus: no such service")
}
func (b brokenKeyring) Set(string, string, string) error {
	<-b.block
	return errors.New("dbus: no such service")
}
func (b brokenKeyring) Delete(string, string) error {
	<-b.block
	return errors.New("dbus: no such service")
}

func TestSecretsUseTheKeychain(t *testing.T) {
	keyring.MockInit() // process-wide: not parallel
	s := NewSecrets(OSKeyring{})
	if v, err := s.Get("home", "token"); err != nil || v != "" {
		t.Fatalf("missing secret = %q, %v", v, err)
	}
	if err := s.Set("home", "token", "tok-123"); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get("home", "token"); v != "tok-123" {
		t.Fatalf("got %q", v)
	}
	if s.SessionOnly() {
		t.Fatal("session-only with a working keychain")
	}
	if err := s.Delete("home", "token"); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get("home", "token"); v != "" {
		t.Fatalf("deleted secret still there: %q", v)
	}
}

func TestSecretsWithoutKeychainAreSessionOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		block bool
	}{{"fails", false}, {"hangs", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := brokenKeyring{block: make(chan struct{})}
			if !tc.block {
				close(b.block)
			} else {
				defer close(b.block)
			}
			s := NewSecrets(b)
			s.timeout = 10 * time.Millisecond // bound, not a timing assumption
			err := s.Set("lab", "password", "pw")
			if !errors.Is(err, ErrNoKeychain) {
				t.Fatalf("Set error = %v, want ErrNoKeychain", err)
			}
			if !strings.Contains(err.Error(), "session only") {
				t.Fatalf("error does not tell the user what happens: %v", err)
			}
			if !s.SessionOnly() {
				t.Fatal("not flagged session-only")
			}
			if v, err := s.Get("lab", "password"); err != nil || v != "pw" {
				t.Fatalf("session-only secret = %q, %v", v, err)
			}
		})
	}
}

func TestAutostartReflectsTheFile(t *testing.T) {
	t.Parallel()
	a := Autostart{Dir: t.TempDir(), Exec: "/opt/herald/herald --hidden"}
	if on, err := a.Enabled(); err != nil || on {
		t.Fatalf("enabled = %v, %v before setting", on, err)
	}
	if err := a.Set(true); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(a.Dir, "herald.desktop"))
	if !strings.Contains(string(b), "Exec=/opt/herald/herald --hidden") {
		t.Fatalf("entry = %s", b)
	}
	if on, _ := a.Enabled(); !on {
		t.Fatal("not enabled after Set(true)")
	}
	// The user disables it in their desktop's settings.
	os.WriteFile(filepath.Join(a.Dir, "herald.desktop"), append(b, []byte("Hidden=true\n")...), 0o644)
	if on, _ := a.Enabled(); on {
		t.Fatal("Hidden=true entry reported as enabled")
	}
	if err := a.Set(false); err != nil {
		t.Fatal(err)
	}
	if on, _ := a.Enabled(); on {
		t.Fatal("enabled after Set(false)")
	}
	if got := quoteExec(`/home/a b/herald`); got != `"/home/a b/herald"` {
		t.Fatalf("quoteExec = %s", got)
	}
}
