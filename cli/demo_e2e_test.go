package cli

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/herald-desktop/herald/backend/gateway"
)

// TestDemoPrintsWhatTheWindowNeeds: `herald watch --demo` prints its
// gateway's URL and token, and that pair signs in (the window's Add
// gateway can follow the demo); the token is not a fixed, guessable one.
func TestDemoPrintsWhatTheWindowNeeds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(heraldBin, "watch", "--demo", "--control", filepath.Join(dir, "run", "ctl.sock"), "--db", filepath.Join(dir, "audit.db"))
	cmd.Env = append(cmd.Environ(), "HERALD_TOKEN=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	re := regexp.MustCompile(`URL (http://\S+), token (\S+)$`)
	sc := bufio.NewScanner(out)
	var url, token string
	for i := 0; i < 5 && sc.Scan(); i++ {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			url, token = m[1], m[2]
			break
		}
	}
	if url == "" {
		t.Fatal("watch --demo printed no URL and token for the window")
	}
	if token == "test-token" {
		t.Fatal("the demo gateway's token is the fixed test token")
	}
	if stage, err := gateway.Check(context.Background(), gateway.Config{URL: url, Token: token}); err != nil {
		t.Fatalf("the printed URL and token do not sign in: %s: %v", stage, err)
	}
	if _, err := gateway.Check(context.Background(), gateway.Config{URL: url, Token: "test-token"}); err == nil {
		t.Fatal("the demo gateway takes the fixed test token")
	}
	go func() {
		for sc.Scan() {
		}
	}()
}
