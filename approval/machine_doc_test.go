package approval

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// machineDoc is the machine as docs/architecture.md shows it: the state
// diagram (Mermaid) and the table of flags, both generated from machine.
func machineDoc() string {
	var b strings.Builder
	b.WriteString("```mermaid\nstateDiagram-v2\n")
	for _, s := range allStates {
		if mermaidName(s) != string(s) {
			fmt.Fprintf(&b, "    state \"%s\" as %s\n", s, mermaidName(s))
		}
	}
	for _, s := range arrivalStates {
		fmt.Fprintf(&b, "    [*] --> %s\n", mermaidName(s))
	}
	for _, from := range allStates {
		for _, to := range machine[from].to {
			fmt.Fprintf(&b, "    %s --> %s\n", mermaidName(from), mermaidName(to))
		}
	}
	for _, s := range allStates {
		if len(machine[s].to) == 0 {
			fmt.Fprintf(&b, "    %s --> [*]\n", mermaidName(s))
		}
	}
	b.WriteString("```\n\n| state | moves to | may hold | always holds |\n|---|---|---|---|\n")
	names := func(f flag) string {
		if f == 0 {
			return ""
		}
		return strings.ReplaceAll(f.String(), "+", ", ")
	}
	for _, s := range allStates {
		rule := machine[s]
		to := make([]string, len(rule.to))
		for i, x := range rule.to {
			to[i] = string(x)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s, firstOf(strings.Join(to, ", "), "(final)"), names(rule.may), names(rule.must))
	}
	return b.String()
}

// mermaidName is a state's name as a Mermaid identifier.
func mermaidName(s State) string { return strings.ReplaceAll(string(s), "-", "_") }

const (
	docBegin = "<!-- approval machine: generated from approval/machine.go by TestStateDiagramInDocs; HERALD_UPDATE_DOCS=1 go test ./approval -run TestStateDiagramInDocs rewrites it -->\n"
	docEnd   = "<!-- end of the generated approval machine -->"
)

// TestStateDiagramInDocs: docs/architecture.md shows the machine as the
// table says it (HERALD_UPDATE_DOCS=1 rewrites it).
func TestStateDiagramInDocs(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "docs", "architecture.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, docBegin), strings.Index(doc, docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated approval machine (markers %q ... %q)", path, docBegin, docEnd)
	}
	shown, want := doc[i+len(docBegin):j], machineDoc()
	if shown == want {
		return
	}
	if os.Getenv("HERALD_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(doc[:i+len(docBegin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s shows another approval machine than machine.go has; rerun with HERALD_UPDATE_DOCS=1 to regenerate it. Want:\n%s", path, want)
}
