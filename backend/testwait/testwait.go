// Package testwait is the one way Herald's tests wait for a fake server:
// re-check a condition each time the server signals a change, with a guard
// that fails the test instead of hanging. No sleeps, no polling.
package testwait

import (
	"testing"
	"time"
)

// Until blocks until cond holds. changed returns a channel that is closed
// at the server's next state change (take it before checking cond, so no
// change is missed). After guard the test fails, naming what.
func Until(t testing.TB, guard time.Duration, what string, changed func() <-chan struct{}, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(guard)
	defer deadline.Stop()
	for {
		ch := changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
