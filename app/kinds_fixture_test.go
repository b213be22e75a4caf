package app

import "testing"

// kindsFixture is GatewayKinds as the page gets it, for the frontend's
// gateway form tests: the form is tested against the registered drivers,
// not against a list of its own.
const kindsFixture = "../frontend/src/lib/testdata/gatewaykinds.json"

// TestGatewayKindsFixtureIsCurrent fails when the frontend's copy is
// stale. Regenerate it with: HERALD_UPDATE_KINDS=1 go test ./app -run TestGatewayKindsFixtureIsCurrent
func TestGatewayKindsFixtureIsCurrent(t *testing.T) {
	t.Parallel()
	checkFixture(t, kindsFixture, (&App{}).GatewayKinds(), "HERALD_UPDATE_KINDS")
}
