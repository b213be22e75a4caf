package cli

import (
	"fmt"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
)

// limitLines are the warnings of an approval block for a request that hit
// one of Herald's bounds. The reasons are Herald's own words (gateway
// text in them is shown as approval.VisibleLine already), so they go
// through surface.Line, which keeps their markers (⟦U+FFFD⟧) as written.
func limitLines(r approval.Request) []string {
	var out []string
	if r.Truncated {
		out = append(out, fmt.Sprintf("┃ ⚠ command truncated: the gateway sent %d bytes, Herald keeps the first %d, so only deny is accepted here (review it in Hermes)", r.CommandBytes, len(r.Command)))
	}
	if r.Conflict != "" {
		out = append(out, "┃ ⚠ "+surface.Line(r.Conflict)+"; only deny is accepted")
	}
	if r.Unbound != "" && r.Conflict == "" {
		out = append(out, "┃ ⚠ deny only: "+surface.Line(r.Unbound))
	}
	return out
}

// printRefused reports approvals refused while a gateway floods Herald:
// the first one in full, then at 10, 100, 1000, ... so a flood cannot
// flood the terminal too, yet nothing goes unsaid. n is how many requests
// the refusal stands for.
func printRefused(out *printer, r approval.Request, n int) {
	out.mu.Lock()
	if out.refused == nil {
		out.refused = map[string]int{}
	}
	before := out.refused[r.Gateway]
	out.refused[r.Gateway] += max(n, 1)
	after := out.refused[r.Gateway]
	out.mu.Unlock()
	if before == 0 {
		out.line("! %s", approval.VisibleLine(r.Outcome.Error))
		out.line("  refused: %s", r.CommandFirstLine())
	}
	if p := powerOf10Upto(after); p >= 10 && p > before {
		out.line("! %s: %d approvals refused so far (over Herald's limits for a gateway); they time out at the gateway and do not run", approval.VisibleLine(r.Gateway), after)
	}
}

// powerOf10Upto is the largest power of 10 not above n (0 for n < 1).
func powerOf10Upto(n int) int {
	p := 0
	for q := 1; q <= n; q *= 10 {
		p = q
	}
	return p
}
