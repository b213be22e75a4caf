//go:build !desktop

package main

// windowBinary: this build has no web view; on Linux it is the always-on
// process and starts herald-window for the window.
const windowBinary = false
