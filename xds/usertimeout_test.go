package xds

import (
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// acceptedConns hands each accepted connection to the test too.
type acceptedConns struct {
	net.Listener
	conns chan net.Conn
}

func (l acceptedConns) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.conns <- c
	}
	return c, err
}

// The server side of a real connection carries TCP_USER_TIMEOUT equal to
// KeepaliveTimeout, as gRPC's keepalive intends: gRPC itself skips it for
// the listener's wrapped connections.
func TestAcceptedConnectionHasKeepaliveUserTimeout(t *testing.T) {
	srv := NewServer(nil, Options{})
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lis := acceptedConns{Listener: inner, conns: make(chan net.Conn, 1)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	defer func() {
		srv.grpc.Stop()
		<-served
	}()
	client, err := net.DialTimeout("tcp", inner.Addr().String(), patience)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := io.WriteString(client, http2Preface); err != nil {
		t.Fatal(err)
	}
	var server net.Conn
	select {
	case server = <-lis.conns:
	case <-time.After(patience):
		t.Fatal("no connection accepted")
	}
	want := int(KeepaliveTimeout / time.Millisecond)
	var got int
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got = userTimeoutOf(t, server); got == want {
			return
		}
	}
	t.Fatalf("server side TCP_USER_TIMEOUT = %d ms, want %d ms (KeepaliveTimeout)", got, want)
}

func userTimeoutOf(t *testing.T, c net.Conn) int {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ms int
	var sockErr error
	if err := raw.Control(func(fd uintptr) {
		ms, sockErr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
	}); err != nil {
		t.Fatal(err)
	}
	if sockErr != nil {
		t.Fatal(sockErr)
	}
	return ms
}
