//go:build !bindings

package main

// generatingBindings is false in every real build (see bindings_on.go).
const generatingBindings = false
