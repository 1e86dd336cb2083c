package xds

import (
	"errors"
	"net"
	"time"

	"google.golang.org/grpc/credentials"
)

// DefaultHandshakeTimeout bounds a connection's handshake (TLS and the
// HTTP/2 preface) unless Options.HandshakeTimeout says otherwise: Envoy
// completes it in milliseconds, and gRPC's own default (120 s) lets a
// client that stalls hold its file descriptor for two minutes.
const DefaultHandshakeTimeout = 5 * time.Second

// errEvicted ends a handshake that completed after its slot was given to a
// newer connection.
var errEvicted = errors.New("xDS connection: handshake completed after its slot was given to a newer connection")

// admittingCredentials wraps the server's transport credentials: a
// connection whose handshake completed leaves the handshake budgets, one
// that timed out is counted.
type admittingCredentials struct {
	credentials.TransportCredentials
	timedOut func(conn net.Conn)
	// plaintext: the handshake completes with the client's HTTP/2 preface.
	plaintext bool
}

func (c admittingCredentials) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(raw)
	if err == nil && c.plaintext {
		conn, err = readPreface(conn)
	}
	if err != nil {
		if isTimeout(err) {
			c.timedOut(raw)
		}
		raw.Close()
		return nil, nil, err
	}
	if ac, ok := raw.(*admittedConn); ok && !ac.established() {
		conn.Close()
		return nil, nil, errEvicted
	}
	return conn, info, nil
}

func (c admittingCredentials) Clone() credentials.TransportCredentials {
	return admittingCredentials{TransportCredentials: c.TransportCredentials.Clone(), timedOut: c.timedOut, plaintext: c.plaintext}
}
