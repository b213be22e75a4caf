//go:build unix

package hermespeer

import (
	"errors"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestFindHonoursHermesPeer(t *testing.T) {
	t.Setenv("HERMES_PEER", t.TempDir())
	dir, why := Available()
	if dir != "" || !strings.Contains(why, "HERMES_PEER=") {
		t.Fatalf("Available() = %q, %q; want no dir and a reason naming HERMES_PEER", dir, why)
	}
}

// One real server of each kind: READY, answers on its port, restarts with
// the same home and port, and is gone (by pid) after Stop.
// Run by make integration (HERALD_INTEGRATION=1), with the real servers.
func TestStartRestartStop(t *testing.T) {
	if os.Getenv("HERALD_INTEGRATION") == "" {
		t.Skip("real servers: run make integration")
	}
	for _, kind := range []Kind{WS, API} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			p := Start(t, kind, Versions[len(Versions)-1])
			get := func() int {
				t.Helper()
				path := "/api/status"
				req, _ := http.NewRequest("GET", p.Base+path, nil)
				if kind == API {
					req, _ = http.NewRequest("GET", p.Base+"/v1/models", nil)
					req.Header.Set("Authorization", "Bearer "+p.Secret)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("GET: %v", err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if c := get(); c != 200 {
				t.Fatalf("status %d, want 200", c)
			}
			if _, err := os.Stat(p.Home + "/config.yaml"); err != nil {
				t.Fatalf("HERMES_HOME not used: %v", err)
			}
			pid := p.Pid()
			p.Restart(t)
			if p.Pid() == pid || p.Pid() == 0 {
				t.Fatalf("restart kept pid %d", pid)
			}
			if c := get(); c != 200 {
				t.Fatalf("after restart: status %d, want 200", c)
			}
			pid = p.Pid()
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Fatalf("pid %d still there after Stop: %v", pid, err)
			}
		})
	}
}
