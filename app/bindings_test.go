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

// The window calls App's methods through bindings Wails generates
// (frontend/wailsjs/go/app/App.js and .d.ts, committed). Wails binds every
// exported method except those main.go passes as lifecycle hooks
// (OnShutdown, OnBeforeClose), so the committed files must name exactly
// those.
var lifecycleHooks = map[string]bool{"Shutdown": true, "BeforeClose": true}

func TestWailsBindingsMatchTheAppMethods(t *testing.T) {
	t.Parallel()
	var methods []string
	typ := reflect.TypeOf(&App{})
	for i := 0; i < typ.NumMethod(); i++ {
		if name := typ.Method(i).Name; !lifecycleHooks[name] {
			methods = append(methods, name)
		}
	}
	sort.Strings(methods)
	dir := filepath.Join("..", "frontend", "wailsjs", "go", "app")
	for _, f := range []struct{ name, pattern string }{
		{"App.d.ts", `(?m)^export function (\w+)\(`},
		{"App.js", `(?m)^export function (\w+)\(`},
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
			t.Errorf("frontend/wailsjs/go/app/%s binds %v,\nbut App has %v:\nrun `make bindings` (wails generate module) and commit frontend/wailsjs", f.name, bound, methods)
		}
	}
}
