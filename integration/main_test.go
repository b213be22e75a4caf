// Package integration runs Herald against the REAL Hermes servers (the
// hermes-peer of ../shared: hermes-agent 0.18.2 and 0.19.0 with a stub
// agent), and checks the fake gateway (backend/hermestest) against them.
// It runs with HERALD_INTEGRATION=1 (make integration; make test includes
// it) so that go test ./... stays fast. See CONTRIBUTING.md, "Testing".
package integration

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/herald-desktop/herald/backend/hermespeer"
)

// shared are the servers tests share (one ws and one api server per
// version), started once in TestMain; tests that restart a server or
// need a clean one start their own with hermespeer.Start.
var shared = map[string]*hermespeer.Peer{}

func sharedKey(kind hermespeer.Kind, version string) string { return string(kind) + " " + version }

func TestMain(m *testing.M) {
	if os.Getenv("HERALD_INTEGRATION") == "" {
		fmt.Println("integration: skipped; run `make integration` (HERALD_INTEGRATION=1) to test against the real Hermes servers")
		os.Exit(0)
	}
	dir, why := hermespeer.Available()
	if dir == "" {
		fmt.Println(hermespeer.AbsentMessage(why))
		if hermespeer.InCI() {
			os.Exit(1)
		}
		os.Exit(0)
	}
	tmp, err := os.MkdirTemp("", "herald-integration")
	if err != nil {
		panic(err)
	}
	code := func() int {
		if err := buildHerald(tmp); err != nil {
			fmt.Fprintln(os.Stderr, "building herald failed:", err)
			return 1
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		var failed []error
		for _, v := range hermespeer.Versions {
			for _, k := range []hermespeer.Kind{hermespeer.WS, hermespeer.API} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					home, _ := os.MkdirTemp(tmp, "home")
					p, err := hermespeer.Launch(dir, k, v, home, tmp)
					mu.Lock()
					defer mu.Unlock()
					if p != nil {
						defer func() { shared[sharedKey(k, v)] = p }()
					}
					if err != nil {
						failed = append(failed, err)
					}
				}()
			}
		}
		wg.Wait()
		defer func() {
			for _, p := range shared {
				if err := p.Stop(); err != nil {
					fmt.Fprintln(os.Stderr, err)
				}
			}
		}()
		if len(failed) > 0 {
			for _, err := range failed {
				fmt.Fprintln(os.Stderr, err)
			}
			return 1 // a real server that cannot start fails the suite
		}
		return m.Run()
	}()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// realWS is the shared ws gateway of version.
func realWS(t *testing.T, version string) *hermespeer.Peer {
	t.Helper()
	p := shared[sharedKey(hermespeer.WS, version)]
	if p == nil {
		t.Fatalf("no shared ws %s", version)
	}
	return p
}

// realAPI is the shared API server of version.
func realAPI(t *testing.T, version string) *hermespeer.Peer {
	t.Helper()
	p := shared[sharedKey(hermespeer.API, version)]
	if p == nil {
		t.Fatalf("no shared api %s", version)
	}
	return p
}
