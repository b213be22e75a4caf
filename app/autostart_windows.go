//go:build windows

package app

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/windows/registry"
)

// Enabled reports whether the Run value exists and Task Manager has not
// switched it off (StartupApproved\Run: first byte 2 on, 3 off).
func (r RunKey) Enabled() (bool, error) {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKeyPath, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cannot read the Run key: %v", err)
	}
	defer k.Close()
	if _, _, err := k.GetStringValue(runValueName); errors.Is(err, registry.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("cannot read the Run key: %v", err)
	}
	a, err := registry.OpenKey(registry.CURRENT_USER, runApprovedPath, registry.QUERY_VALUE)
	if err != nil {
		return true, nil
	}
	defer a.Close()
	if b, _, err := a.GetBinaryValue(runValueName); err == nil && len(b) > 0 && b[0]&1 == 1 {
		return false, nil
	}
	return true, nil
}

// Set writes or deletes the Run value (and clears Task Manager's switch,
// so turning it on in Herald turns it on).
func (r RunKey) Set(on bool) error {
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKeyPath, registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("cannot open the Run key: %v", err)
	}
	defer k.Close()
	if a, err := registry.OpenKey(registry.CURRENT_USER, runApprovedPath, registry.SET_VALUE); err == nil {
		a.DeleteValue(runValueName)
		a.Close()
	}
	if !on {
		if err := k.DeleteValue(runValueName); err != nil && !errors.Is(err, registry.ErrNotExist) {
			return fmt.Errorf("cannot remove Herald from the Run key: %v", err)
		}
		return nil
	}
	args, err := selfArgs(r.Args)
	if err != nil {
		return err
	}
	q := make([]string, len(args))
	for i, s := range args {
		q[i] = syscall.EscapeArg(s)
	}
	if len(args) > 0 && !strings.HasPrefix(q[0], `"`) {
		q[0] = `"` + q[0] + `"` // the program path is always quoted
	}
	if err := k.SetStringValue(runValueName, strings.Join(q, " ")); err != nil {
		return fmt.Errorf("cannot add Herald to the Run key: %v", err)
	}
	return nil
}
