//go:build !windows

package app

import "errors"

var errNoRunKey = errors.New("start at login through the Run key works only on Windows")

// Enabled is false: there is no Run key here.
func (RunKey) Enabled() (bool, error) { return false, nil }

// Set fails: there is no Run key here.
func (RunKey) Set(bool) error { return errNoRunKey }
