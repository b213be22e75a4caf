package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
)

func TestLimitsShownInTheTerminal(t *testing.T) {
	t.Parallel()
	r := approval.Request{Key: "gw/srq/1", Gateway: "gw", Command: "echo aaa", Choices: []string{"once", "deny"}, State: approval.StatePending, Truncated: true, CommandBytes: 70000}
	block := strings.Join(approvalBlock(r, 1), "\n")
	if !strings.Contains(block, "truncated") || !strings.Contains(block, "70000 bytes") || !strings.Contains(block, "only deny") {
		t.Fatalf("block:\n%s", block)
	}
	r.Truncated, r.Conflict = false, "the gateway sent different commands under the same request id \"1\", so Herald cannot tell which one an approval would run"
	if l := pendingLine(r, r.ExpiresAt); !strings.Contains(l, "conflict") || !strings.Contains(l, "deny only") {
		t.Fatalf("pending line %q", l)
	}

	// An id-less answer Herald cannot bind: deny only, and why.
	r.Conflict, r.Unbound, r.Choices = "", "Herald restarted while this request waited, so it cannot prove that this is still the session's oldest waiting approval", []string{"deny"}
	block = strings.Join(approvalBlock(r, 1), "\n")
	if l := pendingLine(r, r.ExpiresAt); !strings.Contains(block, "deny only: Herald restarted") || !strings.Contains(l, "deny only: Herald restarted") {
		t.Fatalf("block:\n%s\npending line %q", block, l)
	}
	// An answer of unknown outcome: said plainly, no retry invited.
	r.Unbound, r.State, r.Outcome = "", approval.StateSentUnknown, approval.Outcome{Choice: "once"}
	if l := pendingLine(r, r.ExpiresAt); !strings.Contains(l, "outcome unknown") || strings.Contains(l, "try again") {
		t.Fatalf("pending line %q", l)
	}
	// ... with why, when Herald knows more than that the link dropped.
	r.Outcome.Detail = "answer sent, outcome unknown: the gateway no longer waits for this request"
	if l := pendingLine(r, r.ExpiresAt); !strings.Contains(l, "no longer waits") || strings.Contains(l, "link dropped") {
		t.Fatalf("pending line %q", l)
	}

	var buf bytes.Buffer
	out := &printer{w: &buf}
	for i := range 1000 {
		printRefused(out, approval.Request{Gateway: "gw", Command: "junk " + strings.Repeat("x", i%3), Outcome: approval.Outcome{Error: "refused: gateway gw already has 256 approvals open"}}, 1)
	}
	got := buf.String()
	if n := strings.Count(got, "\n"); n != 5 || !strings.Contains(got, "refused: junk") || !strings.Contains(got, "1000 approvals refused") {
		t.Fatalf("%d lines for 1000 refusals:\n%s", n, got)
	}
	// Refusals the gateway's link merged count as many: a milestone is
	// said once it is passed.
	buf.Reset()
	for _, n := range []int{7, 5, 100, 3} {
		printRefused(out, approval.Request{Gateway: "gw2", Command: "junk", Outcome: approval.Outcome{Error: "refused: 7 requests were not taken in"}}, n)
	}
	got = buf.String()
	if n := strings.Count(got, "\n"); n != 4 || !strings.Contains(got, "12 approvals refused") || !strings.Contains(got, "112 approvals refused") {
		t.Fatalf("%d lines for merged refusals:\n%s", n, got)
	}
}
