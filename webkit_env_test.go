package main

import (
	"slices"
	"strings"
	"testing"
)

// TestWebKitEnv: the window sets its WebKit settings unless the user set
// the variable, the software-rendering one only on a machine without a
// GPU, and none with HERALD_WEBKIT_DEFAULTS=1.
func TestWebKitEnv(t *testing.T) {
	t.Parallel()
	names := func(kvs [][2]string) []string {
		var out []string
		for _, kv := range kvs {
			out = append(out, kv[0]+"="+kv[1])
		}
		return out
	}
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	all := names(webkitEnv(env(), false))
	for _, want := range []string{"JSC_useJIT=0", "WEBKIT_DISABLE_DMABUF_RENDERER=1", "GALLIUM_DRIVER=softpipe"} {
		if !slices.Contains(all, want) {
			t.Errorf("without a GPU the window sets %v, not %s", all, want)
		}
	}
	if got := names(webkitEnv(env(), true)); slices.Contains(got, "GALLIUM_DRIVER=softpipe") || len(got) != len(all)-1 {
		t.Errorf("with a GPU the window sets %v: want all but the software renderer's", got)
	}
	if got := names(webkitEnv(env("JSC_useJIT", "1", "GALLIUM_DRIVER", "llvmpipe"), false)); slices.Contains(got, "JSC_useJIT=0") || slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "GALLIUM_DRIVER=") }) {
		t.Errorf("the user's own settings were overridden: %v", got)
	}
	if got := webkitEnv(env("HERALD_WEBKIT_DEFAULTS", "1"), false); got != nil {
		t.Errorf("HERALD_WEBKIT_DEFAULTS=1 still sets %v", got)
	}
}
