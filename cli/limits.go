package cli

import (
	"fmt"

	"github.com/herald-desktop/herald/approval"
)

// limitLines are the warnings of an approval block for a request that hit
// one of Herald's bounds.
func limitLines(r approval.Request) []string {
	var out []string
	if r.Truncated {
		out = append(out, fmt.Sprintf("┃ ⚠ command truncated: the gateway sent %d bytes, Herald keeps the first %d, so only deny is accepted here (review it in Hermes)", r.CommandBytes, len(r.Command)))
	}
	if r.Conflict != "" {
		out = append(out, "┃ ⚠ "+approval.VisibleLine(r.Conflict)+"; only deny is accepted")
	}
	return out
}

// printRefused reports approvals refused while a gateway floods Herald:
// the first one in full, then at 10, 100, 1000, ... so a flood cannot
// flood the terminal too, yet nothing goes unsaid.
func printRefused(out *printer, r approval.Request) {
	out.mu.Lock()
	if out.refused == nil {
		out.refused = map[string]int{}
	}
	out.refused[r.Gateway]++
	n := out.refused[r.Gateway]
	out.mu.Unlock()
	switch {
	case n == 1:
		out.line("! %s", approval.VisibleLine(r.Outcome.Error))
		out.line("  refused: %s", r.CommandFirstLine())
	case isPowerOf10(n):
		out.line("! %s: %d approvals refused so far (over Herald's limit of open approvals per gateway); they time out at the gateway and do not run", approval.VisibleLine(r.Gateway), n)
	}
}

func isPowerOf10(n int) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}
