//go:build !bindings

package main

// generatingBindings is false in every real build (see tags_bindings.go).
const generatingBindings = false
