package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/herald-desktop/herald/approval/spooftest"
)

// spoofFixture is the spoofing table as the window gets it (the approval
// views app sends the page), for the frontend's ApprovalSheet test: the
// HTML surface runs against the same table as every other surface.
const spoofFixture = "../frontend/src/components/testdata/spoofcases.json"

type spoofFixtureCase struct {
	Name     string       `json:"name"`
	Show     []string     `json:"show"`
	Hidden   string       `json:"hidden,omitempty"`
	Approval ApprovalView `json:"approval"`
}

// TestSpoofFixtureIsCurrent fails when the frontend's copy of the table is
// stale. Regenerate it with: HERALD_UPDATE_SPOOF=1 go test ./app -run TestSpoofFixtureIsCurrent
func TestSpoofFixtureIsCurrent(t *testing.T) {
	t.Parallel()
	var cases []spoofFixtureCase
	for i, c := range spooftest.Cases {
		cases = append(cases, spoofFixtureCase{Name: c.Name, Show: c.Show, Hidden: c.Hidden, Approval: approvalView(pendingRequest(fmt.Sprintf("lab/srq/srq-%d", i), c.Command))})
	}
	checkFixture(t, spoofFixture, cases, "HERALD_UPDATE_SPOOF")
}

// checkFixture fails when the frontend's copy of v at path is not v as
// JSON, or, with the environment variable update set, rewrites it.
func checkFixture(t *testing.T, path string, v any, update string) {
	t.Helper()
	want, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if os.Getenv(update) != "" {
		if err := os.WriteFile(filepath.FromSlash(path), want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is stale (%v): regenerate it with %s=1 go test ./app -run %s", path, err, update, t.Name())
	}
}
