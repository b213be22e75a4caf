//go:build linux || darwin

package service

import (
	"fmt"
	"net"
)

// peerUID returns the uid of the process at the other end of a Unix
// socket connection, as the kernel reports it (fdPeerUID: SO_PEERCRED on
// Linux, LOCAL_PEERCRED on macOS).
func peerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("not a Unix socket connection")
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var uid int
	var cerr error
	if err := rc.Control(func(fd uintptr) { uid, cerr = fdPeerUID(int(fd)) }); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, fmt.Errorf("cannot read the peer's credentials: %v", cerr)
	}
	return uid, nil
}
