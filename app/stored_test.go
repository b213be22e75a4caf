package app

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// Every string of a stored session that the server chose reaches the
// window made safe (one visible line, bounded); the id the quick prompt
// sends back stays as the server gave it.
func TestStoredSessionsMadeSafe(t *testing.T) {
	t.Parallel()
	id := "s\u202e1"
	v := service.StoredSessionsView{Gateway: "api\x1b[31m", Note: "note\nsecond line", Sessions: []service.StoredSessionView{{
		StoredSession: source.StoredSession{ID: id, Preview: "rm -rf /\u200b\x07" + strings.Repeat("x", 500), MessageCount: 3, Turn: "run_1"},
		Name:          "Deploy\u202e notes\x1b]0;x\x07",
	}}}
	got := storedUI(v)
	s := got.Sessions[0]
	for _, f := range []string{got.Gateway, got.Note, s.Name, s.Preview, s.ShownID} {
		if strings.ContainsAny(f, "\x1b\x07\u202e\u200b\n") {
			t.Errorf("unsafe text reaches the window: %q", f)
		}
	}
	if s.ID != id || s.Turn != "run_1" || s.Messages != 3 || len(s.Preview) > storedPreviewMax+8 {
		t.Errorf("session: %+v", s)
	}
}
