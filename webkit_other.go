//go:build !(desktop && linux && webkit2_41)

package main

// tuneWebKit has nothing to set outside WebKitGTK 4.1 (webkit_linux.go).
func tuneWebKit() {}
