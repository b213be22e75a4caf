package app

import (
	"testing"

	"github.com/herald-desktop/herald/backend/source"
)

// choicesFixture is the one table of choices as the page gets it in its
// snapshot, for the frontend's tests: the sheet is tested against the
// table, not against labels of its own.
const choicesFixture = "../frontend/src/lib/testdata/choices.json"

// TestChoicesFixtureIsCurrent fails when the frontend's copy is stale.
// Regenerate it with: HERALD_UPDATE_CHOICES=1 go test ./app -run TestChoicesFixtureIsCurrent
func TestChoicesFixtureIsCurrent(t *testing.T) {
	t.Parallel()
	checkFixture(t, choicesFixture, source.ChoiceTable(), "HERALD_UPDATE_CHOICES")
}
