package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tlsplane/tlsplane/sidecar"
)

const sidecarBootstrapHelp = `Usage:
  tlsplane sidecar-bootstrap --namespace NS --pod POD --service-account SA --xds-address HOST:PORT [-o FILE]

Prints the static Envoy bootstrap of a mesh sidecar (docs/mesh.md): ADS to
tlsplane as fleet Mesh/<namespace>, node id <pod>.<namespace>, a capture
listener on 127.0.0.1 (what tlsplane capture redirects to) that hands each
connection to the xDS listener of its original destination, and a
passthrough for every other connection. The identity flags default to
$POD_NAMESPACE, $POD_NAME and $POD_SERVICE_ACCOUNT (the downward API).
`

var sidecarBootstrapFlagGroups = []flagGroup{
	{"Workload", []string{"namespace", "pod", "service-account"}},
	{"tlsplane", []string{"xds-address", "xds-api-type", "xds-tls-cert", "xds-tls-key", "xds-tls-ca", "xds-server-name"}},
	{"Sidecar", []string{"admin-port", "capture-port", "o"}},
}

// sidecarBootstrapFlags are the command's flags.
type sidecarBootstrapFlags struct {
	o      sidecar.Options
	tls    sidecar.XDSTLS
	output string
}

func newSidecarBootstrapFlags() (*sidecarBootstrapFlags, *flag.FlagSet) {
	f := &sidecarBootstrapFlags{}
	o, tls := &f.o, &f.tls
	fs := flag.NewFlagSet("sidecar-bootstrap", flag.ContinueOnError)
	fs.StringVar(&o.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the workload's namespace: the sidecar reads fleet Mesh/<namespace>")
	fs.StringVar(&o.Pod, "pod", os.Getenv("POD_NAME"), "the workload's Pod: node id <pod>.<namespace>")
	fs.StringVar(&o.ServiceAccount, "service-account", os.Getenv("POD_SERVICE_ACCOUNT"), "the workload's ServiceAccount, in node metadata for logs (its certificate is what tlsplane checks)")
	fs.StringVar(&o.XDSAddress, "xds-address", "", "tlsplane's xDS address, HOST:PORT (an IP, or a name resolved by DNS)")
	fs.StringVar(&o.APIType, "xds-api-type", "DELTA_GRPC", "ADS flavour: DELTA_GRPC (incremental) or GRPC (state of the world)")
	fs.StringVar(&tls.CertFile, "xds-tls-cert", "", "the workload's PEM client certificate for xDS mutual TLS (naming its ServiceAccount, tlsplane serve --xds-mesh-identity); with --xds-tls-key and --xds-tls-ca")
	fs.StringVar(&tls.KeyFile, "xds-tls-key", "", "PEM private key of --xds-tls-cert")
	fs.StringVar(&tls.CAFile, "xds-tls-ca", "", "PEM CA bundle that issued tlsplane's serving certificate")
	fs.StringVar(&tls.ServerName, "xds-server-name", "", "the name tlsplane's certificate must carry, sent as SNI; --xds-address's host when empty")
	fs.IntVar(&o.AdminPort, "admin-port", sidecar.DefaultAdminPort, "the sidecar's admin port on 127.0.0.1")
	fs.IntVar(&o.CapturePort, "capture-port", sidecar.DefaultCapturePort, "the capture listener's port on 127.0.0.1 (tlsplane capture --port)")
	fs.StringVar(&f.output, "o", "", "write the bootstrap to this file instead of standard output")
	return f, fs
}

func runSidecarBootstrap(args []string, stdout io.Writer) error {
	f, fs := newSidecarBootstrapFlags()
	positional, err := parseFlags(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, fs, sidecarBootstrapHelp, sidecarBootstrapFlagGroups)
			return nil
		}
		return fmt.Errorf("%w (tlsplane sidecar-bootstrap --help lists the flags)", err)
	}
	if len(positional) > 0 {
		return fmt.Errorf("unexpected arguments %q: every input is a flag (tlsplane sidecar-bootstrap --help)", positional)
	}
	o, tls, output := f.o, f.tls, f.output
	if tls != (sidecar.XDSTLS{}) {
		o.XDSTLS = &tls
	}
	boot, err := sidecar.YAML(o)
	if err != nil {
		return err
	}
	if output == "" {
		_, err = stdout.Write(boot)
		return err
	}
	// 0644: the sidecar runs under its own UID and must read it.
	return os.WriteFile(output, boot, 0o644)
}
