package main

import "path/filepath"

// webkitSetting is one variable the window process sets for WebKitGTK
// and the libraries under it (webkit_linux.go, before Wails makes its web
// view; WebKit's web and network processes inherit it).
type webkitSetting struct {
	name, value string
	// withoutGPU: only on a machine with no GPU render node
	// (/dev/dri/renderD*), where Mesa can only draw in software.
	withoutGPU bool
}

// webkitSettings is every setting of the window's WebKit, in one place,
// each with what it saves and why it is safe. The figures are PSS with
// the window open after 60 s idle (scripts/footprint.sh, medians of 3,
// Xvfb, no GPU; BENCHMARKS.md has the table). Each figure is the setting
// alone; they overlap: WebKit's defaults 241 MiB, the first two 228 MiB,
// all of them 225 MiB. HERALD_WEBKIT_DEFAULTS=1 leaves WebKit its
// defaults, to compare; a variable the user set is left as it is.
var webkitSettings = []webkitSetting{
	// JavaScriptCore without its JIT: 7 MiB less in the web process.
	// The window runs one small local page, nothing compute-heavy.
	{name: "JSC_useJIT", value: "0"},
	// The shared-memory renderer instead of DMA-BUF: 5 MiB less in the
	// window process. The web view draws without hardware acceleration
	// anyway (linux.WebviewGpuPolicyNever), so nothing uses DMA-BUF.
	{name: "WEBKIT_DISABLE_DMABUF_RENDERER", value: "1"},
	// GTK's own OpenGL off: GDK no longer sets up GLX (and through it
	// Mesa's renderer) to choose its visuals when the window process
	// starts: 2.1 MiB less. The window has no GL widget, and WebKit
	// draws the page without GTK's GL (see above).
	{name: "GDK_GL", value: "disable"},
	// One glibc malloc arena instead of one per thread in WebKit's web
	// and network processes (the window process's own malloc is set up
	// before Herald runs): 1.4 MiB less. WebKit allocates with its own
	// allocator (libpas); what goes through glibc there (GLib, GTK) is
	// light, so sharing one arena's lock costs nothing noticeable.
	{name: "MALLOC_ARENA_MAX", value: "1"},
	// Mesa's softpipe instead of llvmpipe when there is no GPU: 2.2 MiB
	// less (llvmpipe sets LLVM up in the window and web processes,
	// which open an EGL display even though nothing draws with it).
	// With a GPU, Mesa uses the GPU's driver and this is not set.
	{name: "GALLIUM_DRIVER", value: "softpipe", withoutGPU: true},
}

// webkitEnv is what tuneWebKit sets: webkitSettings that the environment
// (lookup) does not set already, those for machines without a GPU only
// when gpu is false; nothing with HERALD_WEBKIT_DEFAULTS=1.
func webkitEnv(lookup func(string) (string, bool), gpu bool) [][2]string {
	if v, _ := lookup("HERALD_WEBKIT_DEFAULTS"); v == "1" {
		return nil
	}
	var out [][2]string
	for _, s := range webkitSettings {
		if _, set := lookup(s.name); set || (s.withoutGPU && gpu) {
			continue
		}
		out = append(out, [2]string{s.name, s.value})
	}
	return out
}

// hasGPU reports whether the machine has a GPU render node Mesa can use.
func hasGPU() bool {
	m, _ := filepath.Glob("/dev/dri/renderD*")
	return len(m) > 0
}
