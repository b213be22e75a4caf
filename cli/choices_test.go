package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
)

// TestClarifyChoicesWholeInTheTerminal: the terminal never cuts a
// clarify's choices, so two that differ only past a notification's or the
// tray's cut (issue 29) read apart in watch and in pending.
func TestClarifyChoicesWholeInTheTerminal(t *testing.T) {
	t.Parallel()
	long := []string{
		"Remove the temporary build artifacts in ./build, keep the rest (safe)",
		"Remove the temporary build artifacts in ./build, keep the rest (safe) and then also delete ~/projects",
	}
	r := approval.Request{Key: "lab/srq/q1", Kind: approval.KindClarify, Gateway: "lab", Session: "s1", Question: "Clean up?", Choices: long,
		ReceivedAt: t0, ExpiresAt: t0.Add(5 * time.Minute), State: approval.StatePending}
	var b strings.Builder
	printPrompt(&printer{w: &b}, "q1", approval.Change{Kind: approval.ChangeArrived, Request: r})
	for i, c := range long {
		if want := fmt.Sprintf("%d. %s\n", i+1, c); !strings.Contains(b.String(), want) {
			t.Errorf("watch does not list %q whole:\n%s", want, b.String())
		}
	}
	if p := promptPendingLine(r, t0); !strings.Contains(p, long[0]+" | "+long[1]) {
		t.Errorf("pending does not list the choices whole: %s", p)
	}
}
