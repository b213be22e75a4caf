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

// tuneWebKit sets what WebKitGTK keeps for the window before Wails makes
// its web view (on the default web context): webkitEnv's variables (see
// webkitSettings), and the document-viewer cache model, which keeps no
// page or memory cache of pages not on screen (the window shows one
// local page), where WebKit's default is a browser's.
// HERALD_WEBKIT_DEFAULTS=1 leaves WebKit's defaults and
// HERALD_WEBKIT_CACHE=browser restores WebKit's default cache model, for
// scripts/footprint.sh to compare. The window has one web view, so one
// web process.
func tuneWebKit() {
	for _, kv := range webkitEnv(os.LookupEnv, hasGPU()) {
		os.Setenv(kv[0], kv[1])
	}
	browser := 0
	if os.Getenv("HERALD_WEBKIT_CACHE") == "browser" {
		browser = 1
	}
	C.herald_cache_model(C.int(browser))
}
