package echoserver

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	// tcpRequestTimeout closes a TCP echo connection, as the original's.
	tcpRequestTimeout = 15 * time.Second
	// serverFirstMagic is what a server-first port writes before reading.
	serverFirstMagic = "server-first-protocol\n"
)

// serveTCP answers each connection of ln with the fields once the
// client has sent something (or closed), then echoes what it sends.
func (s *Server) serveTCP(ln net.Listener, p Port) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.log.infof("endpoint", "TCP accept failed: %v", err)
			}
			return
		}
		go func() {
			// The whole exchange is bounded, as the original bounds it.
			_ = conn.SetDeadline(time.Now().Add(tcpRequestTimeout))
			s.echoTCP(conn, p)
		}()
	}
}

func (s *Server) echoTCP(conn net.Conn, p Port) {
	defer conn.Close()
	if p.ServerFirst {
		if _, err := conn.Write([]byte(serverFirstMagic)); err != nil {
			return
		}
	}
	buf := make([]byte, 4096)
	first := true
	for {
		n, err := conn.Read(buf)
		// Not before the first read: a server-first client reads the
		// magic string alone.
		if first {
			first = false
			if _, werr := conn.Write([]byte(s.tcpFields(conn, p))); werr != nil {
				return
			}
		}
		if n > 0 {
			if _, werr := conn.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.log.infof("endpoint", "TCP read failed: %v", err)
			}
			return
		}
	}
}

// tcpFields are the original's TCP response fields, in its order.
func (s *Server) tcpFields(conn net.Conn, p Port) string {
	var b strings.Builder
	ip, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
	writeField(&b, fieldStatusCode, strconv.Itoa(http.StatusOK))
	writeNonEmpty(&b, fieldCluster, s.cfg.Cluster)
	writeNonEmpty(&b, fieldIstioVersion, s.cfg.IstioVersion)
	writeField(&b, fieldServiceVersion, s.cfg.Version)
	writeField(&b, fieldServicePort, strconv.Itoa(p.Port))
	writeField(&b, fieldIP, ip)
	writeField(&b, fieldProto, "TCP")
	writeField(&b, fieldHostname, s.cfg.Hostname)
	return b.String()
}
