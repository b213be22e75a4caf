//go:build bindings

package main

// generatingBindings: `wails generate module` builds Herald with the
// bindings tag and runs it to write frontend/wailsjs; that run opens no
// window, so it needs no display.
const generatingBindings = true
