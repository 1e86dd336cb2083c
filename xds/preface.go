package xds

import (
	"errors"
	"io"
	"net"
	"os"
)

// http2Preface is what every HTTP/2 client sends first (RFC 9113 §3.4).
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// readPreface completes a plaintext "handshake" only once the client's
// HTTP/2 preface arrived (under gRPC's handshake deadline): without TLS,
// a connection that sends nothing must stay evictable like a stalled
// TLS handshake. The bytes read are handed back to gRPC.
func readPreface(conn net.Conn) (net.Conn, error) {
	buf := make([]byte, len(http2Preface))
	if _, err := io.ReadFull(conn, buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF
		}
		return nil, err
	}
	return &replayConn{Conn: conn, first: buf}, nil
}

// replayConn reads first, then the connection.
type replayConn struct {
	net.Conn
	first []byte
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(p, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// isTimeout: the handshake deadline passed.
func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
