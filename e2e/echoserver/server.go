package echoserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"syscall"

	"google.golang.org/grpc"
)

// Exit codes of the original: cobra's errors and a failed start exit -1.
const exitFailed = 255

// Endpoint is one endpoint the server listens on.
type Endpoint struct {
	Port
	Addr string // where it listens (the port filled in when 0 was asked)
}

// Server is a running echo server.
type Server struct {
	cfg       Config
	cert      tls.Certificate
	log       *logger
	endpoints []Endpoint
	closers   []func()
}

// Start listens on every port of cfg, then serves them; an error leaves
// nothing listening. All ports listen before any answers, so the server
// is ready when Start returns (the original answers 503 until then).
func Start(cfg Config, logw io.Writer) (_ *Server, err error) {
	cfg.Ports = slices.Clone(cfg.Ports) // the ports found are written back
	s := &Server{cfg: cfg, log: &logger{w: logw}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	for _, p := range cfg.Ports {
		if p.TLS && s.cert.Certificate == nil {
			if s.cert, err = loadCertificate(cfg.CertFile, cfg.KeyFile, cfg.Hostname); err != nil {
				return nil, err
			}
		}
	}
	listeners := make([]net.Listener, len(cfg.Ports))
	for i, p := range s.cfg.Ports {
		ln, err := net.Listen("tcp", net.JoinHostPort(p.ListenIP, strconv.Itoa(p.Port)))
		if err != nil {
			return nil, fmt.Errorf("endpoint %s (%s): %w", p.Name, p.Protocol, err)
		}
		s.closers = append(s.closers, func() { ln.Close() })
		// The actual port, as the original stores it back (ServicePort).
		s.cfg.Ports[i].Port = ln.Addr().(*net.TCPAddr).Port
		listeners[i] = ln
		s.endpoints = append(s.endpoints, Endpoint{Port: s.cfg.Ports[i], Addr: ln.Addr().String()})
	}
	for i, p := range s.cfg.Ports {
		s.serve(listeners[i], p)
	}
	s.log.infof("server", "Echo server is now ready")
	return s, nil
}

// serve starts answering on ln.
func (s *Server) serve(ln net.Listener, p Port) {
	tlsNote := ""
	switch p.Protocol {
	case HTTP:
		srv := s.httpServer(p)
		if p.TLS {
			// h2 is offered first, as the original's ALPN list has it.
			ln = tls.NewListener(ln, s.tlsServerConfig([]string{"h2", "http/1.1", "http/1.0"}))
			tlsNote = "S"
		}
		s.closers = append(s.closers, func() { srv.Close() })
		go func() {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				s.log.errorf("endpoint", "Port %d listener terminated with error: %v", p.Port, err)
			}
		}()
		s.log.infof("endpoint", "Listening HTTP%s/1.1 on %v", tlsNote, p.Port)
	case GRPC:
		g := s.grpcServer(p)
		s.closers = append(s.closers, g.Stop)
		go func() {
			if err := g.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				s.log.errorf("endpoint", "Port %d listener terminated with error: %v", p.Port, err)
			}
		}()
		if p.TLS {
			tlsNote = " (over TLS)"
		}
		s.log.infof("endpoint", "Listening GRPC%s on %v", tlsNote, p.Port)
	case TCP:
		if p.TLS {
			ln = tls.NewListener(ln, s.tlsServerConfig(nil))
			tlsNote = " (over TLS)"
		}
		go s.serveTCP(ln, p)
		s.log.infof("endpoint", "Listening TCP%s on %v", tlsNote, p.Port)
	}
}

// Endpoints are the server's endpoints, in the order of its flags.
func (s *Server) Endpoints() []Endpoint { return s.endpoints }

// Close stops every endpoint.
func (s *Server) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Main runs the server with args (the command line without the command's
// name) until SIGINT or SIGTERM, logging on stdout as the original does,
// a command-line error on stderr. It returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	cfg, helped, err := parse(args, stdout)
	var usage usageError
	switch {
	case helped:
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "Error: %v\n", usage.error)
		return exitFailed
	case err != nil:
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return exitFailed
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	s, err := Start(*cfg, stdout)
	if err != nil {
		(&logger{w: stdout}).errorf("default", "%v", err)
		return exitFailed
	}
	defer s.Close()
	<-sigs
	return 0
}
