package cli

import (
	"crypto/rand"
	"encoding/hex"
)

// demoToken is a fresh token for `herald watch --demo`'s gateway: it is
// printed (the demo is a throwaway), but no other local user can guess it.
func demoToken() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "demo-" + hex.EncodeToString(b)
}
