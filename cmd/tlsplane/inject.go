package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/tlsplane/tlsplane/inject"
	"github.com/tlsplane/tlsplane/translator/mesh"
)

// A subcommand, not a serve flag: the webhook sits on every Pod creation
// of the mesh's namespaces, so it runs as its own Deployment with its own
// failure domain, its own serving certificate, and a ClusterRole that
// reads namespaces only; it needs none of serve's informers, snapshots or
// leader election, and serve keeps no private key the API server dials.
const injectHelp = `Usage: tlsplane inject --tls-cert FILE --tls-key FILE --sidecar-image IMAGE --tlsplane-image IMAGE --sidecar-xds-address HOST:PORT [flags]

Serves the mesh's mutating admission webhook (docs/mesh.md, "Injection")
at https://ADDRESS` + inject.Path + `: a Pod created in a namespace in the mesh
(--mesh-namespaces), unless annotated tlsplane.io/mesh: disabled or
injected already, gets the capture init step (tlsplane capture), the
bootstrap init step (tlsplane sidecar-bootstrap, written to an emptyDir)
and a native sidecar Envoy. Reads namespaces from the Kubernetes API
(--kubeconfig, or in a Pod its in-cluster config).
`

var injectFlagGroups = []flagGroup{
	{"Webhook", []string{"address", "tls-cert", "tls-key", "mesh-namespaces"}},
	{"Injected Pods", []string{"sidecar-image", "tlsplane-image", "sidecar-xds-address", "sidecar-uid", "capture-port", "sidecar-admin-port", "sidecar-identity-csi-driver"}},
	{"Kubernetes", []string{"kubeconfig"}},
	{"Logging", []string{"log-format", "log-level"}},
}

type injectFlags struct {
	address, certFile, keyFile, kubeconfig string
	logFormat, logLevel                    string
	selector                               *mesh.Selector
	pods                                   inject.Config
}

func newInjectFlags() (*injectFlags, *flag.FlagSet) {
	f := &injectFlags{pods: inject.DefaultConfig()}
	fs := flag.NewFlagSet("inject", flag.ContinueOnError)
	fs.StringVar(&f.address, "address", "127.0.0.1:9443", "address of the webhook's HTTPS server (the Service's target port in a cluster)")
	fs.StringVar(&f.certFile, "tls-cert", "", "PEM serving certificate the API server verifies (the webhook configuration's caBundle issued it); re-read when it changes")
	fs.StringVar(&f.keyFile, "tls-key", "", "PEM private key of --tls-cert")
	registerMeshNamespaces(fs, &f.selector)
	fs.StringVar(&f.pods.SidecarImage, "sidecar-image", "", "the Envoy image of the injected sidecar (envoy on its PATH)")
	fs.StringVar(&f.pods.TLSPlaneImage, "tlsplane-image", "", "the tlsplane image that runs the capture and the bootstrap steps")
	fs.StringVar(&f.pods.XDSAddress, "sidecar-xds-address", "", "tlsplane serve's xDS address as the sidecars dial it, HOST:PORT (e.g. tlsplane-xds.tlsplane-system.svc:18000)")
	fs.Int64Var(&f.pods.SidecarUID, "sidecar-uid", f.pods.SidecarUID, "the sidecar's UID and GID; the capture never redirects its connections")
	fs.IntVar(&f.pods.CapturePort, "capture-port", f.pods.CapturePort, "the sidecar's capture listener port on 127.0.0.1")
	fs.IntVar(&f.pods.AdminPort, "sidecar-admin-port", f.pods.AdminPort, "the sidecar's Envoy admin port on 127.0.0.1")
	fs.StringVar(&f.pods.IdentityCSIDriver, "sidecar-identity-csi-driver", "", "CSI driver that mounts each workload's certificate (tls.crt, tls.key, ca.crt), e.g. spiffe.csi.cert-manager.io: the sidecar speaks xDS mutual TLS with it (tlsplane serve --xds-mesh-identity); empty: plaintext xDS")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the API server whose namespaces are read; in a Pod the in-cluster config is used")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	return f, fs
}

func runInject(args []string, stdout io.Writer) error {
	f, fs := newInjectFlags()
	positional, err := parseFlags(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, fs, injectHelp, injectFlagGroups)
			return nil
		}
		return fmt.Errorf("%w (tlsplane inject --help lists the flags)", err)
	}
	if len(positional) > 0 {
		return fmt.Errorf("unexpected arguments %q: every input is a flag (tlsplane inject --help)", positional)
	}
	if err := f.pods.Check(); err != nil {
		return fmt.Errorf("injected Pods (--sidecar-image, --tlsplane-image, --sidecar-xds-address, --sidecar-uid, --capture-port, --sidecar-admin-port): %w", err)
	}
	logger, err := newLogger(os.Stderr, f.logFormat, f.logLevel)
	if err != nil {
		return err
	}
	k := &kubeFlags{kubeconfig: f.kubeconfig, apiQPS: 50, apiBurst: 100}
	if k.kubeconfig == "" && !inCluster() {
		return errors.New("no API server: give --kubeconfig, or run in a Pod")
	}
	cfg, err := k.restConfig(logger)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	srv, err := inject.Listen(f.address, f.certFile, f.keyFile)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	began := time.Now()
	namespaces, synced := inject.WatchNamespaces(ctx, client)
	if !synced {
		return errors.New("stopped before the namespace cache synced")
	}
	srv.Handler = &inject.Handler{Config: f.pods, Selector: f.selector, Namespaces: namespaces, Logger: logger}
	logger.Info("mesh injection webhook serving", "address", srv.Addr().String(), "path", inject.Path,
		"meshNamespaces", f.selector.String(), "namespaceCacheSynced", time.Since(began).Round(time.Millisecond).String())
	return srv.Serve(ctx)
}
