//go:build !unix

package hermespeer

import (
	"os"
	"syscall"
)

// The peer runs on Linux (and macOS); elsewhere Start fails at exec.
func sysProcAttr() *syscall.SysProcAttr { return nil }

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
