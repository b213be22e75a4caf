package cli

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/source"
)

// TestRefusalNamesTheDriversSignIns: a refused sign-in names the flags
// and variables the transport's driver gives its sign-ins, and for a
// transport with one secret, which secret and where it comes from.
func TestRefusalNamesTheDriversSignIns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		st        source.Status
		want, not []string
	}{
		{"API server", source.Status{Gateway: "api", Kind: "api", State: source.StateAuthFailed, Err: "GET /v1/capabilities answered HTTP 401"},
			[]string{"api: the API server refused the API key: pass the right one with --api-key or HERALD_API_KEY", "API_SERVER_KEY"}, []string{"--token", "HERALD_PASSWORD"}},
		{"dashboard", source.Status{Gateway: "lab", Kind: "ws", State: source.StateAuthFailed, Err: "the gateway refused the connection."},
			[]string{"lab: the gateway refused the connection (sign in with --token or HERALD_TOKEN, or --username/--password or HERALD_USERNAME/HERALD_PASSWORD)"}, []string{"--api-key"}},
		{"default kind", source.Status{Gateway: "lab", State: source.StateAuthFailed, Err: "the gateway ended the session (4401)"},
			[]string{"lab: the gateway ended the session (4401)", "--token"}, nil},
		{"not a sign-in", source.Status{Gateway: "api", Kind: "api", State: source.StateConfigError, Err: "no API server here"},
			[]string{"api: no API server here"}, []string{"--api-key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := refusal(tc.st).Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q does not say %q", got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("%q names %q", got, n)
				}
			}
		})
	}
}
