package sidecar

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Ports the sidecar uses by default: its admin on loopback, and the
// capture listener the capture redirects to (capture.DefaultPort).
const (
	DefaultAdminPort   = 15000
	DefaultCapturePort = 15001
)

// Options are one sidecar's identity and where it reaches tlsplane.
type Options struct {
	// Namespace, Pod and ServiceAccount are the workload's: the fleet is
	// Mesh/<Namespace>, the node id <Pod>.<Namespace>; ServiceAccount is
	// metadata for logs only (the certificate is what is checked).
	Namespace, Pod, ServiceAccount string
	// XDSAddress is tlsplane's ADS, host:port; a name is resolved by DNS.
	XDSAddress string
	// APIType is "GRPC" (state of the world) or "DELTA_GRPC" (the default).
	APIType string
	// AdminPort and CapturePort are on 127.0.0.1; zero: the defaults.
	AdminPort, CapturePort int
	// XDSTLS, when set, is mutual TLS towards tlsplane.
	XDSTLS *XDSTLS
}

// XDSTLS is the sidecar's client side of xDS mutual TLS: its workload
// certificate (naming its ServiceAccount, --xds-mesh-identity) and the CA
// of tlsplane's certificate, which must name ServerName.
type XDSTLS struct {
	CertFile, KeyFile, CAFile string
	// ServerName is the SNI sent and the SAN required of tlsplane; the
	// XDSAddress's host when empty.
	ServerName string
}

// checked is o with defaults filled in, or an error naming the field.
func (o Options) checked() (Options, string, int, error) {
	names := []struct {
		field, value string
		check        func(string) []string
	}{
		{"namespace", o.Namespace, validation.IsDNS1123Label},
		{"pod", o.Pod, validation.IsDNS1123Subdomain},
		{"service account", o.ServiceAccount, validation.IsDNS1123Subdomain},
	}
	for _, n := range names {
		if errs := n.check(n.value); len(errs) > 0 {
			return o, "", 0, fmt.Errorf("sidecar bootstrap: %s %q: %s", n.field, n.value, strings.Join(errs, "; "))
		}
	}
	host, portText, err := net.SplitHostPort(o.XDSAddress)
	if err != nil {
		return o, "", 0, fmt.Errorf("sidecar bootstrap: xDS address %q: %w", o.XDSAddress, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return o, "", 0, fmt.Errorf("sidecar bootstrap: xDS address %q: want host:port with a port in 1-65535", o.XDSAddress)
	}
	if o.APIType == "" {
		o.APIType = "DELTA_GRPC"
	}
	if o.APIType != "GRPC" && o.APIType != "DELTA_GRPC" {
		return o, "", 0, fmt.Errorf("sidecar bootstrap: ADS API type %q: want GRPC or DELTA_GRPC", o.APIType)
	}
	if o.AdminPort == 0 {
		o.AdminPort = DefaultAdminPort
	}
	if o.CapturePort == 0 {
		o.CapturePort = DefaultCapturePort
	}
	for _, p := range []struct {
		name string
		port int
	}{{"admin port", o.AdminPort}, {"capture port", o.CapturePort}} {
		if p.port < 1 || p.port > 65535 {
			return o, "", 0, fmt.Errorf("sidecar bootstrap: %s %d: want 1-65535", p.name, p.port)
		}
	}
	if o.AdminPort == o.CapturePort {
		return o, "", 0, fmt.Errorf("sidecar bootstrap: admin port and capture port are both %d", o.AdminPort)
	}
	if x := o.XDSTLS; x != nil {
		if x.CertFile == "" || x.KeyFile == "" || x.CAFile == "" {
			return o, "", 0, fmt.Errorf("sidecar bootstrap: xDS mutual TLS needs a certificate, its key and the CA of tlsplane's certificate")
		}
		if x.ServerName == "" {
			c := *x
			c.ServerName = host
			o.XDSTLS = &c
		}
	}
	return o, host, port, nil
}
