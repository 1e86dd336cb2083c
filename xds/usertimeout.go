package xds

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// setUserTimeout sets TCP_USER_TIMEOUT on an accepted connection, as gRPC
// would with our keepalive: gRPC sets it only on a bare *net.TCPConn, and
// the listener hands it an admittedConn, so without this unacknowledged
// writes to a dead Envoy fall under the kernel's ~15-minute retry limit.
func setUserTimeout(c net.Conn, timeout time.Duration) error {
	tcp, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tcp.SyscallConn()
	if err != nil {
		return err
	}
	var sockErr error
	if err := raw.Control(func(fd uintptr) {
		sockErr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(timeout/time.Millisecond))
	}); err != nil {
		return err
	}
	return sockErr
}
