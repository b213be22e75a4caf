package gateway

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestCheckExercisesTheWebSocketLeg: the add-gateway "Test" fails at the
// stage that is wrong, with a message for people, and passes only after a
// real gateway.ready.
func TestCheckExercisesTheWebSocketLeg(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	defer srv.Close()
	for _, tc := range []struct {
		name, url, token, stage, say string
	}{
		{"ok", srv.URL, srv.Token(), "handshake", ""},
		{"bad token", srv.URL, "WRONG", "websocket", "HTTP 403"},
		{"no token", srv.URL, "", "websocket", "Herald has none (HTTP 403): start the dashboard with HERMES_DASHBOARD_SESSION_TOKEN"},
		{"unreachable", "http://127.0.0.1:1", "x", "http", "cannot reach"},
		{"bad url", "ftp://x", "x", "http", "not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stage, err := Check(ctxT(t), Config{URL: tc.url, Token: tc.token})
			if stage != tc.stage {
				t.Fatalf("stage %q, want %q (err %v)", stage, tc.stage, err)
			}
			if tc.say == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.say) {
				t.Fatalf("error %v, want it to say %q", err, tc.say)
			}
		})
	}
}
