package acceptance_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/source"
)

// choiceTableFile is the one place a choice's label is written.
const choiceTableFile = "backend/source/choice.go"

// labelPatterns finds a choice's label written out: every multi-word label
// of the table (and "Approve once", the label notifications once had) in
// any text, and a one-word label ("Deny") as a whole string literal or
// element text.
func labelPatterns(t *testing.T) (multi []string, single []*regexp.Regexp) {
	t.Helper()
	multi = []string{"Approve once"}
	for _, c := range source.ChoiceTable() {
		if strings.Contains(c.Label, " ") {
			multi = append(multi, c.Label)
			continue
		}
		q := regexp.QuoteMeta(c.Label)
		single = append(single, regexp.MustCompile(`["'`+"`"+`>]\s*`+q+`\s*["'`+"`"+`<]`))
	}
	if len(multi) < 3 || len(single) == 0 {
		t.Fatalf("the choice table has %d multi-word and %d one-word labels: the guard is broken", len(multi)-1, len(single))
	}
	return multi, single
}

// goLabels lists the string literals of a Go file that write a label.
func goLabels(t *testing.T, path string, src []byte, multi []string, single []*regexp.Regexp) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		if hit := textLabels(strconv.Quote(v), multi, single); len(hit) > 0 {
			out = append(out, hit...)
		}
		return true
	})
	return out
}

// textLabels lists the labels text writes.
func textLabels(text string, multi []string, single []*regexp.Regexp) []string {
	var out []string
	for _, m := range multi {
		if strings.Contains(text, m) {
			out = append(out, m)
		}
	}
	for _, re := range single {
		if re.MatchString(text) {
			out = append(out, re.String())
		}
	}
	return out
}

// surfaceFiles are the files of every surface and transport: the Go
// program (tests aside), the window's source (tests aside), the Hermes
// plugin.
func surfaceFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "dist", "wailsjs", ".git", "testdata", "build", "tests", ".tools":
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		switch {
		case filepath.ToSlash(rel) == choiceTableFile:
		case strings.HasSuffix(name, "_test.go"), strings.Contains(name, ".test."):
		case strings.HasSuffix(name, ".go"), strings.HasSuffix(name, ".ts"), strings.HasSuffix(name, ".svelte"), strings.HasSuffix(name, ".py"):
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// scan lists "file: label" for every label a surface writes itself.
func scan(t *testing.T, root string) []string {
	t.Helper()
	multi, single := labelPatterns(t)
	var bad []string
	for _, p := range surfaceFiles(t, root) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var hits []string
		if strings.HasSuffix(p, ".go") {
			hits = goLabels(t, p, src, multi, single)
		} else {
			hits = textLabels(string(src), multi, single)
		}
		for _, h := range hits {
			rel, _ := filepath.Rel(root, p)
			bad = append(bad, filepath.ToSlash(rel)+": "+h)
		}
	}
	return bad
}

// TestChoiceLabelsOnlyInTable: every surface (notifications, tray, window,
// terminal) and every transport words an approval choice from the one
// table (source.ChoiceTable, which the window gets in its snapshot); a
// label written anywhere else fails here, so two surfaces can no longer
// say "Approve once" and "Allow once" for one choice.
func TestChoiceLabelsOnlyInTable(t *testing.T) {
	t.Parallel()
	if bad := scan(t, ".."); len(bad) > 0 {
		t.Errorf("choice labels written outside %s (take them from source.ChoiceTable / ChoiceLabel, or the snapshot's choices in the window):\n  %s", choiceTableFile, strings.Join(bad, "\n  "))
	}
}

// TestChoiceGuardFindsALabel: the guard fails on a surface that writes its
// own label, in Go and in the window's source, and not on prose that only
// uses the words.
func TestChoiceGuardFindsALabel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"app/tray.go":               "package app\n\nvar item = \"Allow once\"\n",
		"app/deny.go":               "package app\n\nvar d = [2]string{\"deny\", \"Deny\"}\n",
		"frontend/src/Sheet.svelte": "<button>Always allow</button>\n",
		"frontend/src/b.svelte":     "<button> Deny </button>\n",
		"app/prose.go":              "package app\n\n// Deny it here.\nvar p = \"deny it, or review it in Hermes\"\n",
		"app/sheet_test.go":         "package app\n\nvar item = \"Allow once\"\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	for _, b := range scan(t, dir) {
		got[strings.SplitN(b, ":", 2)[0]] = true
	}
	for _, want := range []string{"app/tray.go", "app/deny.go", "frontend/src/Sheet.svelte", "frontend/src/b.svelte"} {
		if !got[want] {
			t.Errorf("the guard missed the label in %s (found %v)", want, got)
		}
	}
	for _, not := range []string{"app/prose.go", "app/sheet_test.go"} {
		if got[not] {
			t.Errorf("the guard flagged %s, which writes no label on a surface", not)
		}
	}
}
