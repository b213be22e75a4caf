package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
)

// TestUndecodableOfferedAsDenyOnly (issue 29): a command that lost bytes
// on the way (U+FFFD, invalid UTF-8) is offered as deny only in watch and
// pending, as an unbound one is, and Herald's own explanation keeps its
// ⟦U+FFFD⟧ as written instead of marking the marker (⟦U+27E6⟧U+FFFD⟧).
func TestUndecodableOfferedAsDenyOnly(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"rm -rf ./a\ufffd", "rm -rf ./a\xff"} {
		r := hostileRequest(1, cmd)
		r.Conflict = approval.UndecodableWhy // as the inbox flags it on arrival
		block := strings.Join(approvalBlock(r, 1), "\n")
		pend := pendingLine(r, t0)
		for name, text := range map[string]string{"watch": block, "pending": pend} {
			if !strings.Contains(text, "[deny]") || strings.Contains(text, "once") || strings.Contains(text, "o once") {
				t.Errorf("%s offers more than deny for %q:\n%s", name, cmd, text)
			}
			if !strings.Contains(text, "shown as ⟦U+FFFD⟧") || strings.Contains(text, "⟦U+27E6⟧") {
				t.Errorf("%s marks Herald's own marker:\n%s", name, text)
			}
		}
		if !strings.Contains(block, "keys: "+choiceKeys([]string{"deny"})+" (") {
			t.Errorf("watch keys for %q:\n%s", cmd, block)
		}
	}
}

// TestKeysRefusalKeepsHeraldsMarkers: the line watch prints when an answer
// is refused quotes Herald's reason with its markers as written.
func TestKeysRefusalKeepsHeraldsMarkers(t *testing.T) {
	t.Parallel()
	f := newKeysFixture()
	f.k.in = refusingInbox{f.in, &approval.ConflictError{Why: approval.UndecodableWhy}}
	id := f.arrive("a", "rm -rf ./a\ufffd")
	out := f.press(t, "o "+id)
	if !strings.Contains(out, "shown as ⟦U+FFFD⟧") || strings.Contains(out, "⟦U+27E6⟧") {
		t.Fatalf("watch printed %q", out)
	}
}

// refusingInbox refuses every answer with err.
type refusingInbox struct {
	*fakeInbox
	err error
}

func (r refusingInbox) Answer(context.Context, string, string, string, approval.Confirmed) error {
	return r.err
}
