package apiserver

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// StopAPIServer stops kube-apiserver only: etcd keeps running, so
// StartAPIServer brings the same cluster back, as after an API server
// outage in a real cluster.
func (s *Server) StopAPIServer() { s.apiserver.stop(15 * time.Second) }

// StartAPIServer starts kube-apiserver again with its first arguments (the
// same port and etcd) and waits until it is ready.
func (s *Server) StartAPIServer(ctx context.Context) error {
	if done, _ := s.apiserver.exited(); !done {
		return fmt.Errorf("kube-apiserver %s is still running", s.URL)
	}
	p, err := startProcess("kube-apiserver", s.apiserver.cmd.Path, s.nextLog("kube-apiserver"), s.apiserver.cmd.Args[1:]...)
	if err != nil {
		return err
	}
	s.apiserver = p
	return s.waitReady(ctx, 120*time.Second)
}

// Second is another kube-apiserver on the same etcd, on a port of its own:
// changes made through it while the first one is stopped are the changes a
// client of the first one must catch up with.
type Second struct {
	// Config is the admin rest.Config of the second API server.
	Config *rest.Config
	proc   *process
}

// StartSecond runs a second kube-apiserver on etcd and waits until ready.
func (s *Server) StartSecond(ctx context.Context) (*Second, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	args := append([]string(nil), s.apiserver.cmd.Args[1:]...)
	for i := range args {
		if args[i] == "--secure-port" && i+1 < len(args) {
			args[i+1] = strconv.Itoa(ports[0])
		}
		if args[i] == "--cert-dir" && i+1 < len(args) {
			args[i+1] = filepath.Join(s.Dir, "certs-second")
		}
	}
	p, err := startProcess("kube-apiserver-second", s.apiserver.cmd.Path, s.nextLog("kube-apiserver-second"), args...)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(s.Config)
	cfg.Host = "https://127.0.0.1:" + strconv.Itoa(ports[0])
	second := &Server{Config: cfg, URL: cfg.Host, etcd: s.etcd, apiserver: p}
	if err := second.waitReady(ctx, 120*time.Second); err != nil {
		p.stop(15 * time.Second)
		return nil, err
	}
	return &Second{Config: cfg, proc: p}, nil
}

// Stop ends the second API server.
func (s *Second) Stop() { s.proc.stop(15 * time.Second) }

// nextLog is a log path not used yet, so a restart keeps the earlier logs.
func (s *Server) nextLog(name string) string {
	return filepath.Join(s.Dir, name+"-"+strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")+".log")
}
