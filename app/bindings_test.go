package app

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The window calls WindowAPI's methods through bindings Wails generates
// (frontend/wailsjs/go/app/WindowAPI.js and .d.ts, committed). Wails binds
// every exported method of WindowAPI, so the committed files must name
// exactly those.
func TestWailsBindingsMatchTheWindowAPI(t *testing.T) {
	t.Parallel()
	var methods []string
	typ := reflect.TypeOf(&WindowAPI{})
	for i := 0; i < typ.NumMethod(); i++ {
		methods = append(methods, typ.Method(i).Name)
	}
	sort.Strings(methods)
	dir := filepath.Join("..", "frontend", "wailsjs", "go", "app")
	for _, f := range []struct{ name, pattern string }{
		{"WindowAPI.d.ts", `(?m)^export function (\w+)\(`},
		{"WindowAPI.js", `(?m)^export function (\w+)\(`},
	} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		var bound []string
		for _, m := range regexp.MustCompile(f.pattern).FindAllStringSubmatch(string(b), -1) {
			bound = append(bound, m[1])
		}
		sort.Strings(bound)
		if strings.Join(bound, " ") != strings.Join(methods, " ") {
			t.Errorf("frontend/wailsjs/go/app/%s binds %v,\nbut WindowAPI has %v:\nrun `make bindings` (wails generate module) and commit frontend/wailsjs", f.name, bound, methods)
		}
	}
}

// TestWindowAPIIsWhatThePageCalls: every WindowAPI method but the window
// process's own RememberWindow is called by the page (bridge.ts), and the
// page calls nothing else.
func TestWindowAPIIsWhatThePageCalls(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "frontend", "src", "lib", "bridge.ts"))
	if err != nil {
		t.Fatal(err)
	}
	called := map[string]bool{}
	for _, m := range regexp.MustCompile(`\bApp\.(\w+)\(`).FindAllStringSubmatch(string(b), -1) {
		called[m[1]] = true
	}
	typ := reflect.TypeOf(&WindowAPI{})
	for i := 0; i < typ.NumMethod(); i++ {
		name := typ.Method(i).Name
		if !called[name] && name != "RememberWindow" {
			t.Errorf("WindowAPI.%s is bound but the page never calls it", name)
		}
		delete(called, name)
	}
	for name := range called {
		t.Errorf("the page calls %s, which WindowAPI lacks", name)
	}
}
