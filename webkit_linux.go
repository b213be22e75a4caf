//go:build desktop && linux && webkit2_41

package main

/*
#cgo pkg-config: webkit2gtk-4.1
#include <webkit2/webkit2.h>

static void herald_cache_model(int browser) {
	webkit_web_context_set_cache_model(webkit_web_context_get_default(),
		browser ? WEBKIT_CACHE_MODEL_WEB_BROWSER : WEBKIT_CACHE_MODEL_DOCUMENT_VIEWER);
}
*/
import "C"

import "os"

// webkitEnv is what the window sets for WebKit's processes (they inherit
// it) unless the user set it: JavaScriptCore without its JIT (the window
// runs one small local page; measured with scripts/footprint.sh: 7 MiB
// less PSS in the web process) and the shared-memory renderer instead of
// DMA-BUF (the web view draws without hardware acceleration anyway,
// linux.WebviewGpuPolicyNever; 6 MiB less in the window process).
// HERALD_WEBKIT_DEFAULTS=1 leaves WebKit's defaults, to compare.
var webkitEnv = [][2]string{
	{"JSC_useJIT", "0"},
	{"WEBKIT_DISABLE_DMABUF_RENDERER", "1"},
}

// tuneWebKit sets what WebKitGTK keeps for the window before Wails makes
// its web view (on the default web context): webkitEnv, and the
// document-viewer cache model, which keeps no page or memory cache of
// pages not on screen (the window shows one local page), where WebKit's
// default is a browser's. HERALD_WEBKIT_CACHE=browser restores WebKit's
// default cache model, for scripts/footprint.sh to compare. The window has
// one web view, so one web process.
func tuneWebKit() {
	if os.Getenv("HERALD_WEBKIT_DEFAULTS") != "1" {
		for _, kv := range webkitEnv {
			if _, set := os.LookupEnv(kv[0]); !set {
				os.Setenv(kv[0], kv[1])
			}
		}
	}
	browser := 0
	if os.Getenv("HERALD_WEBKIT_CACHE") == "browser" {
		browser = 1
	}
	C.herald_cache_model(C.int(browser))
}
