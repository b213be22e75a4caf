package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestMissedEventsInWords: watch's normal output says why events may have
// been missed in words, never the reason code; --json keeps the code.
func TestMissedEventsInWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code, words string
	}{
		{"no-replay", "this gateway cannot send what happened while Herald was away"},
		{"epoch", "the gateway restarted"},
		{"truncated", "the gateway no longer holds everything"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			out := &printer{w: &buf}
			newStatusPrinter(out).show(source.Status{Gateway: "lab", State: source.StateConnected, MayHaveMissedEvents: true, MissedReason: tc.code})
			ev := wire.Event{Gateway: "lab", Session: "s1", Kind: wire.Resync, Payload: []byte(`{"reason":"` + tc.code + `"}`)}
			ev.DecodeData()
			printEvent(out, ev, "")
			got := buf.String()
			if strings.Count(got, tc.words) != 2 || strings.Contains(got, tc.code) {
				t.Errorf("watch printed %q: want %q twice and no %q", got, tc.words, tc.code)
			}
			var js bytes.Buffer
			newStatusPrinter(&printer{w: &js, json: true}).show(source.Status{Gateway: "lab", State: source.StateConnected, MayHaveMissedEvents: true, MissedReason: tc.code})
			if !strings.Contains(js.String(), `"`+tc.code+`"`) {
				t.Errorf("--json lost the code: %s", js.String())
			}
		})
	}
}

// TestHelpSaysNoVersionNames: the help of every command says how a
// gateway behaves, not which Hermes version behaves so, and carries no
// protocol jargon. bridge is the exception: which Hermes has approval
// transports is what its user must check (hermes --version).
func TestHelpSaysNoVersionNames(t *testing.T) {
	t.Parallel()
	jargon := regexp.MustCompile(`(^|[^\d.])0\.\d+(\.\d+)?\b|\bv0\.|srq|desktop_contract|no-replay|\b1006\b`)
	for cmd := range commands {
		if cmd == "bridge" || cmd == "help" {
			continue
		}
		out, _, _ := runMain(t, cmd, "--help")
		if m := jargon.FindAllString(out, -1); len(m) > 0 {
			t.Errorf("%s --help says %q:\n%s", cmd, m, out)
		}
	}
	out, _, _ := runMain(t, "help")
	if m := jargon.FindAllString(out, -1); len(m) > 0 {
		t.Errorf("help says %q:\n%s", m, out)
	}
}
