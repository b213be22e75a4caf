package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
)

// readingOrder is the root package's files in the order they read (see
// the package comment in main.go).
var readingOrder = []string{
	"main.go", "desktop.go", "assemble.go", "crash.go", "webkit_linux.go", "webkit_other.go", "webkit_env.go",
	"tags_desktop.go", "tags_nodesktop.go", "tags_bindings.go", "tags_nobindings.go",
}

// TestNoCallClimbsBackUp: in the root package every function calls only
// functions written below it, in its file or a later one of
// readingOrder, so the program reads from main down, once. A new file
// must take its place in readingOrder.
func TestNoCallClimbsBackUp(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			have = append(have, f)
		}
	}
	slices.Sort(have)
	want := slices.Sorted(slices.Values(readingOrder))
	if !slices.Equal(have, want) {
		t.Fatalf("the root's files are %v; readingOrder lists %v: give each file its place", have, want)
	}
	type decl struct {
		file string
		rank int // its place in the reading order
		fn   *ast.FuncDecl
	}
	fset := token.NewFileSet()
	funcs := map[string]decl{}   // top-level functions by name
	methods := map[string]decl{} // methods of the root's types, by name
	var all []decl
	for i, name := range readingOrder {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			dd := decl{file: name, rank: i<<20 | fset.Position(fn.Pos()).Line, fn: fn}
			all = append(all, dd)
			if fn.Recv != nil {
				methods[fn.Name.Name] = dd
			} else {
				funcs[fn.Name.Name] = dd
			}
		}
	}
	if len(funcs) < 10 {
		t.Fatalf("found %d functions: the scan is broken", len(funcs))
	}
	for _, d := range all {
		if d.fn.Body == nil {
			continue
		}
		sels := map[*ast.Ident]bool{}
		check := func(id *ast.Ident, callee decl, ok bool) {
			if ok && callee.rank < d.rank {
				t.Errorf("%s (%s) uses %s (%s:%d), which is above it: move %s below, or the caller above", d.fn.Name.Name, d.file, id.Name, callee.file, callee.rank&(1<<20-1), id.Name)
			}
		}
		ast.Inspect(d.fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				sels[n.Sel] = true
				callee, ok := methods[n.Sel.Name]
				check(n.Sel, callee, ok && !ast.IsExported(n.Sel.Name))
			case *ast.Ident:
				if sels[n] || (n.Obj != nil && n.Obj.Kind != ast.Fun) {
					return true // a field, a method of another package, a local name
				}
				callee, ok := funcs[n.Name]
				check(n, callee, ok)
			}
			return true
		})
	}
}

// TestLogReadsTheHistoryTheAppWrites: with HERALD_CONFIG_DIR set, the
// history the desktop app writes (as newApp opens it) is the one `herald
// log` reads when no Herald runs: both find it with service.HistoryPath.
func TestLogReadsTheHistoryTheAppWrites(t *testing.T) {
	t.Parallel()
	cfg := t.TempDir()
	getenv := func(k string) string {
		if k == "HERALD_CONFIG_DIR" {
			return cfg
		}
		return ""
	}
	p, err := assemble(desktopFlags{noTray: true}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	a := p.newApp()
	if p.store == nil {
		a.Close()
		t.Fatal("the app opened no history")
	}
	err = p.store.Record(approval.Entry{At: time.Now(), Kind: approval.ChangeArrived, Key: "gw/k1", Gateway: "gw", Session: "s1",
		Command: "rm -rf ./written-by-the-app", State: approval.StatePending})
	a.Close()
	p.close()
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "log")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_CONFIG_DIR=") && !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	// No Herald runs (an empty runtime folder), and the usual
	// configuration folder is elsewhere: only HERALD_CONFIG_DIR leads to
	// the history.
	cmd.Env = append(env, "HERALD_TEST_AS_MAIN=1", "HERALD_CONFIG_DIR="+cfg, "XDG_RUNTIME_DIR="+t.TempDir(),
		"XDG_CONFIG_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "rm -rf ./written-by-the-app") {
		t.Fatalf("herald log with HERALD_CONFIG_DIR: %v\n%s", err, out)
	}
}
