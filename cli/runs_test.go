package cli

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/service"
)

// TestRunLineShowsIDsVisibly: `herald stop` lists runs by the id the
// gateway sent; a hostile id cannot rewrite the terminal line.
func TestRunLineShowsIDsVisibly(t *testing.T) {
	t.Parallel()
	line := runLine(service.RunRef{Gateway: "lab", ID: "run\x1b[2K\rfake", Transport: "api", Tool: "terminal: ls"})
	if strings.ContainsAny(line, "\x1b\r") || !strings.Contains(line, "terminal: ls") {
		t.Fatalf("runLine = %q", line)
	}
}
