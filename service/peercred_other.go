//go:build !linux && !darwin

package service

import (
	"fmt"
	"net"
	"runtime"
)

// peerUID is not implemented here: the control socket refuses every
// connection rather than trust one it cannot check.
func peerUID(net.Conn) (int, error) {
	return 0, fmt.Errorf("Herald cannot check who is at the other end of the control socket on %s", runtime.GOOS)
}
