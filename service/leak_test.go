package service

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them. Run
// with HERALD_CONTROL_HELPER set, the test binary is instead a helper
// process (another local user in the two-uid control socket test).
func TestMain(m *testing.M) {
	if mode := os.Getenv("HERALD_CONTROL_HELPER"); mode != "" {
		os.Exit(controlHelper(mode, os.Getenv("HERALD_CONTROL_PATH")))
	}
	goleak.VerifyTestMain(m)
}
