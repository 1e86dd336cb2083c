package xds

import (
	"net"
	"sync"
	"time"
)

// limitedListener admits each accepted connection under the
// ConnectionLimits before gRPC sees it. A refused or evicted connection
// is reset at once: no TLS work, no goroutine, no buffer.
type limitedListener struct {
	net.Listener
	adm     *admission
	refused func(reason string, conn net.Conn)
	// userTimeout is TCP_USER_TIMEOUT for admitted connections (gRPC's
	// keepalive timeout, which gRPC cannot set through the wrapper).
	userTimeout time.Duration
}

// Accept returns the next admitted connection; refused ones are closed
// and counted here and never returned.
func (l *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ac := &admittedConn{Conn: c, adm: l.adm}
		s, evicted, reason := l.adm.admit(sourceOf(c.RemoteAddr()), ac)
		for _, e := range evicted {
			l.refused(RefusedHandshakeEvicted, e.conn)
			e.conn.(*admittedConn).reset()
		}
		if reason != "" {
			l.refused(reason, c)
			resetConn(c)
			continue
		}
		ac.slot = s
		if err := setUserTimeout(c, l.userTimeout); err != nil {
			// gRPC too ends a transport whose user timeout cannot be set.
			ac.Close()
			continue
		}
		return ac, nil
	}
}

// admittedConn holds its slot until closed.
type admittedConn struct {
	net.Conn
	adm  *admission
	slot *slot
	once sync.Once
}

// Close frees the slot; gRPC closes a connection once it is done with it,
// whatever ended it.
func (c *admittedConn) Close() error {
	c.release()
	return c.Conn.Close()
}

// reset frees the slot and resets the connection (an eviction).
func (c *admittedConn) reset() {
	c.release()
	resetConn(c.Conn)
}

func (c *admittedConn) release() {
	c.once.Do(func() {
		if c.slot != nil {
			c.adm.release(c.slot)
		}
	})
}

// established reports whether c may be served now that its handshake
// completed: false when it was evicted meanwhile.
func (c *admittedConn) established() bool {
	return c.slot != nil && c.adm.established(c.slot)
}

// resetConn closes c with a TCP reset: the client learns at once, and no
// TIME_WAIT is left behind for each of a flood's connections.
func resetConn(c net.Conn) {
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = c.Close()
}
