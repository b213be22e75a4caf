package app

import "testing"

// A secret the keychain could not give is named as its sign-in's field
// names it, for every transport.
func TestSecretWord(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		g    GatewaySettings
		want string
	}{
		{GatewaySettings{}, "token"},
		{GatewaySettings{Kind: "ws", Auth: "password"}, "password"},
		{GatewaySettings{Kind: "api", Auth: "key"}, "API key"},
		{GatewaySettings{Kind: "apiserver"}, "API key"},
		{GatewaySettings{Kind: "nope", Auth: "token"}, "secret"},
	} {
		if got := secretWord(tc.g); got != tc.want {
			t.Errorf("secretWord(%+v) = %q, want %q", tc.g, got, tc.want)
		}
	}
}
