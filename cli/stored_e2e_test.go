package cli

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/apiservertest"
)

// `herald sessions --api URL` lists an API server's stored sessions by
// name; `herald ask --session ID --api URL` continues one on its chat
// stream, prints the streamed reply, and says plainly what such a turn
// cannot do on a server whose stream cannot ask (0.18.2/0.19.0).
func TestSessionsAndAskOnAnAPIServer(t *testing.T) {
	t.Parallel()
	api := apiservertest.NewServer(apiservertest.Options{})
	defer api.Close()
	sid := api.AddSession("", "Release checklist", "what is left?", "two steps")
	out, e, code := run(t, "sessions", "--api", api.URL, "--api-key", api.Key())
	if code != 0 || !strings.Contains(out, "Release checklist  (2 messages") || !strings.Contains(out, "id "+sid) {
		t.Fatalf("sessions: exit %d %q %q", code, out, e)
	}
	out, e, code = run(t, "ask", "--api", api.URL, "--api-key", api.Key(), "--session", sid, "approve-me: git reset --hard HEAD")
	if code != 0 || !strings.Contains(out, ", in session "+sid+")") || !strings.Contains(out, "pending: git reset --hard HEAD") ||
		!strings.Contains(out, "note: This API server cannot ask for your approval in a turn sent to a session") {
		t.Fatalf("ask: exit %d %q %q", code, out, e)
	}
	if si, _ := api.Session(sid); len(si.Messages) != 4 {
		t.Errorf("the session holds %v", si.Messages)
	}
	out, e, code = run(t, "ask", "--api", api.URL, "--api-key", api.Key(), "--session", "gone", "hello")
	if code == 0 || !strings.Contains(e, `no session "gone"`) {
		t.Errorf("unknown session: exit %d %q %q", code, out, e)
	}
}
