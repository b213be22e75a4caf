package cli

import (
	"bytes"
	"context"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestCAFile: a gateway whose certificate the system does not trust is
// refused with advice the command line can follow (--ca-file,
// SSL_CERT_FILE), and --ca-file with its CA gets through. The connect
// timeout is generous: a loaded CI machine can take seconds to dial.
func TestCAFile(t *testing.T) {
	t.Parallel()
	gw := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, TLS: true})
	defer gw.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: gw.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(extra ...string) string {
		var out, errb bytes.Buffer
		args := append([]string{"stop", "--gateway", gw.URL, "--token", gw.Token(), "--connect-timeout", "20s"}, extra...)
		Main(context.Background(), append(args, "no-such-session"), strings.NewReader(""), &out, &errb)
		return errb.String()
	}
	if msg := run(); !strings.Contains(msg, "not trusted") || !strings.Contains(msg, "--ca-file") || !strings.Contains(msg, "SSL_CERT_FILE") {
		t.Errorf("without --ca-file: %q", msg)
	}
	if msg := run("--ca-file", ca); strings.Contains(msg, "not trusted") {
		t.Errorf("with --ca-file: %q", msg)
	}
	if msg := run("--ca-file", filepath.Join(t.TempDir(), "none.pem")); !strings.Contains(msg, "--ca-file") || !strings.Contains(msg, "cannot read the CA file") {
		t.Errorf("missing CA file: %q", msg)
	}
}
