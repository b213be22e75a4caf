package acceptance_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/herald-desktop/herald/"

// imports lists the packages the non-test Go files of dir import.
func imports(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			out[p] = true
		}
	}
	return out
}

// transports are the backend packages that register a driver.
func transports(t *testing.T) []string {
	t.Helper()
	var out []string
	dirs, _ := filepath.Glob("../backend/*")
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.go"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if !strings.HasSuffix(f, "_test.go") && strings.Contains(string(b), "source.Register(") {
				out = append(out, module+"backend/"+filepath.Base(d))
				break
			}
		}
	}
	return out
}

// TestNothingAboveBackendNamesATransport: the window, the command line
// and the desktop glue reach transports only through the service and the
// contract (backend/source), so a new transport touches none of them.
func TestNothingAboveBackendNamesATransport(t *testing.T) {
	ts := transports(t)
	if len(ts) < 2 {
		t.Fatalf("found transports %v: the registration scan is broken", ts)
	}
	for _, dir := range []string{"../service", "../app", "../cli", "../desktop", ".."} {
		im := imports(t, dir)
		for _, tr := range ts {
			if im[tr] {
				t.Errorf("%s imports the transport %s: go through service and backend/source", dir, tr)
			}
		}
	}
	// The contract imports no transport either.
	for p := range imports(t, "../backend/source") {
		for _, tr := range ts {
			if p == tr {
				t.Errorf("backend/source imports %s", tr)
			}
		}
	}
}
