package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"

	"github.com/tlsplane/tlsplane/xds"
)

// xdsAuthFlags secure the xDS port: whoever can read a fleet's xDS
// learns which backends it trusts and with which CA, so plaintext is
// allowed only where no one else can connect.
type xdsAuthFlags struct {
	certFile, keyFile, clientCAFile string
	fleetIdentity                   string
	meshIdentity                    string
	insecure                        bool
}

func registerXDSAuthFlags(fs *flag.FlagSet) *xdsAuthFlags {
	f := &xdsAuthFlags{}
	fs.StringVar(&f.certFile, "xds-tls-cert", "", "PEM certificate of the xDS server; with --xds-tls-key and --xds-client-ca turns on mutual TLS (TLS 1.2+); files are re-read when they change")
	fs.StringVar(&f.keyFile, "xds-tls-key", "", "PEM private key of --xds-tls-cert")
	fs.StringVar(&f.clientCAFile, "xds-client-ca", "", "PEM CA bundle that issues the Envoys' client certificates; a client without a certificate it verifies is refused")
	fs.StringVar(&f.fleetIdentity, "xds-fleet-identity", xds.DefaultFleetIdentity, "with mutual TLS, the identity (URI or DNS SAN) a client certificate must carry to read a fleet; "+xds.ClusterPlaceholder+" is replaced by the node's cluster")
	registerMeshIdentityFlag(fs, &f.meshIdentity)
	fs.BoolVar(&f.insecure, "insecure-xds", false, "serve plaintext xDS on a non-loopback --xds-address: anyone who can connect reads every fleet's configuration")
	return f
}

// serverOptions checks the flags against the xDS address and builds the
// server's security; errors stop startup before any port is bound.
func (f *xdsAuthFlags) serverOptions(addr string, logger *slog.Logger) (xds.Security, error) {
	given := 0
	for _, v := range []string{f.certFile, f.keyFile, f.clientCAFile} {
		if v != "" {
			given++
		}
	}
	switch {
	case given == 3 && f.insecure:
		return xds.Security{}, errors.New("--insecure-xds and the --xds-tls-* flags contradict each other: give one")
	case given == 3:
		sec, err := xds.MutualTLS(f.certFile, f.keyFile, f.clientCAFile, f.fleetIdentity, func(err error) {
			logger.Error("xDS TLS files could not be re-read; serving the last good certificate and CA", "error", err)
		})
		if err != nil {
			return sec, err
		}
		return withMeshIdentity(sec, f.meshIdentity)
	case given > 0:
		return xds.Security{}, errors.New("mutual TLS needs all of --xds-tls-cert, --xds-tls-key and --xds-client-ca")
	case f.insecure:
		logger.Warn("plaintext xDS with --insecure-xds: anyone who can connect to the xDS address reads every fleet's configuration", "address", addr)
		return xds.Security{}, nil
	case !loopback(addr):
		return xds.Security{}, fmt.Errorf("--xds-address %q is not a loopback address, and plaintext xDS there would hand every fleet's configuration to anyone who can connect: give --xds-tls-cert, --xds-tls-key and --xds-client-ca for mutual TLS, or --insecure-xds to accept that", addr)
	}
	return xds.Security{}, nil
}

// loopback: only a literal loopback IP or "localhost"; an empty host
// listens everywhere, and other names may resolve anywhere.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// mutualTLS reports whether all three --xds-tls-* files are given.
func (f *xdsAuthFlags) mutualTLS() bool {
	return f.certFile != "" && f.keyFile != "" && f.clientCAFile != ""
}
