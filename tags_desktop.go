//go:build desktop

package main

// windowBinary: this build holds the web view (herald-window, or the
// single-process app on macOS and Windows).
const windowBinary = true
