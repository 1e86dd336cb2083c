package echoserver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/spf13/pflag"
)

// Protocol is what an endpoint speaks.
type Protocol string

const (
	HTTP Protocol = "HTTP" // HTTP/1.1 and h2c; HTTPS and h2 under TLS
	GRPC Protocol = "GRPC"
	TCP  Protocol = "TCP"
)

// Port is one endpoint of the server, as the original names them
// ("http-0", "grpc-0", "tcp-0" in flag order).
type Port struct {
	Name     string
	Protocol Protocol
	Port     int // 0: any free port
	TLS      bool
	// ServerFirst: a TCP endpoint writes the magic string before reading.
	ServerFirst bool
	// ListenIP is where the endpoint listens; empty is every address.
	ListenIP string
}

// Config is the server's command line.
type Config struct {
	Ports        []Port
	Version      string // ServiceVersion
	Cluster      string // Cluster, written when set
	IstioVersion string // IstioVersion, written when set
	CertFile     string // --crt, for the TLS ports
	KeyFile      string // --key
	DisableALPN  bool
	// Hostname is the Hostname field: the Pod's name (see hostname).
	Hostname string
}

// notImplemented are the original's flags this server refuses rather
// than ignores: each changes what it serves.
var notImplemented = []string{"udp", "hbone", "uds", "xds-grpc-server", "metrics"}

// usageError is a bad command line (cobra's "Error: ..." and exit 255).
type usageError struct{ error }

// parse reads the command line as the original does (pflag; a port
// flag repeated or comma-separated adds ports, and the first use replaces
// the default).
func parse(args []string, stdout io.Writer) (*Config, bool, error) {
	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var httpPorts, grpcPorts, tcpPorts, tlsPorts, bindIP, bindLocalhost, serverFirst []int
	c := &Config{}
	// The original's defaults (Istio 1.21, pkg/test/echo/cmd/server).
	fs.IntSliceVar(&httpPorts, "port", []int{8080}, "HTTP/1.1 ports")
	fs.IntSliceVar(&grpcPorts, "grpc", []int{7070}, "GRPC ports")
	fs.IntSliceVar(&tcpPorts, "tcp", []int{9090}, "TCP ports")
	fs.IntSliceVar(&tlsPorts, "tls", nil, "Ports that are using TLS. These must be defined as http/grpc/tcp.")
	fs.IntSliceVar(&bindIP, "bind-ip", nil, "Ports that are bound to INSTANCE_IP rather than wildcard IP.")
	fs.IntSliceVar(&bindLocalhost, "bind-localhost", nil, "Ports that are bound to localhost rather than wildcard IP.")
	fs.IntSliceVar(&serverFirst, "server-first", nil, "Ports that are server first. These must be defined as tcp.")
	fs.StringVar(&c.Version, "version", "", "Version string")
	fs.StringVar(&c.Cluster, "cluster", "", "Cluster where this server is deployed")
	fs.StringVar(&c.CertFile, "crt", "", "gRPC TLS server-side certificate")
	fs.StringVar(&c.KeyFile, "key", "", "gRPC TLS server-side key")
	fs.StringVar(&c.IstioVersion, "istio-version", "", "Istio sidecar version")
	fs.BoolVar(&c.DisableALPN, "disable-alpn", false, "disable ALPN negotiation")
	for _, name := range notImplemented {
		fs.String(name, "", "not implemented by this server")
	}
	fs.BoolP("help", "h", false, "help for server")
	if err := fs.Parse(args); err != nil {
		return nil, false, usageError{err}
	}
	if help, _ := fs.GetBool("help"); help {
		fmt.Fprintf(stdout, "Echo server application (the e2e node agent's).\n\nUsage:\n  server [flags]\n\nFlags:\n%s", fs.FlagUsages())
		return nil, true, nil
	}
	for _, name := range notImplemented {
		if fs.Changed(name) {
			return nil, false, usageError{fmt.Errorf("flag --%s of the echo-advanced server is not implemented by the e2e node agent's", name)}
		}
	}
	if fs.NArg() > 0 {
		return nil, false, usageError{fmt.Errorf("unknown command %q for \"server\"", fs.Arg(0))}
	}
	listenIP := map[int]string{}
	for _, p := range bindLocalhost {
		listenIP[p] = "127.0.0.1"
	}
	for _, p := range bindIP {
		if _, set := listenIP[p]; set {
			continue // the original looks at --bind-localhost first
		}
		ip, ok := os.LookupEnv("INSTANCE_IP")
		if !ok {
			return nil, false, errors.New("--bind-ip set but INSTANCE_IP undefined")
		}
		listenIP[p] = ip
	}
	for _, set := range []struct {
		proto      Protocol
		flag, name string
		ports      []int
	}{{HTTP, "port", "http", httpPorts}, {GRPC, "grpc", "grpc", grpcPorts}, {TCP, "tcp", "tcp", tcpPorts}} {
		for i, p := range set.ports {
			if p < 0 || p > 65535 {
				return nil, false, usageError{fmt.Errorf("--%s: port %d is out of range", set.flag, p)}
			}
			c.Ports = append(c.Ports, Port{Name: set.name + "-" + strconv.Itoa(i), Protocol: set.proto, Port: p,
				TLS: slices.Contains(tlsPorts, p), ServerFirst: slices.Contains(serverFirst, p), ListenIP: listenIP[p]})
		}
	}
	c.Hostname = hostname()
	return c, false, nil
}

// hostname is the Hostname field. The original writes os.Hostname(),
// which in a Pod is the Pod's name; the node agent runs Pods in network
// namespaces only, sharing the machine's host name, and gives each
// container HOSTNAME as the kubelet does, so that comes first.
func hostname() string {
	if h := os.Getenv("HOSTNAME"); h != "" {
		return h
	}
	h, _ := os.Hostname()
	return h
}
