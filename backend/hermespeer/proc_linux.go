package hermespeer

import "syscall"

// The server gets its own process group (so a SIGKILL reaches a child it
// spawned, such as git) and SIGTERM if the test binary dies without running
// its cleanups (a go test -timeout panic).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
