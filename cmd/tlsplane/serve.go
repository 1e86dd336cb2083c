package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/backendcerts"
	"github.com/tlsplane/tlsplane/dirsource"
	"github.com/tlsplane/tlsplane/handshakes"
	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/pipeline"
	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/mesh"
	"github.com/tlsplane/tlsplane/translator/xbackend"
	"github.com/tlsplane/tlsplane/xds"
)

// shutdownGrace bounds a graceful stop: Envoys hold ADS streams open
// forever, so waiting for them to end on their own would never finish.
const shutdownGrace = 10 * time.Second

// serveConfig is the flags of `tlsplane serve`.
type serveConfig struct {
	dir                     string
	dirResync               time.Duration
	xdsAddress              string
	adminAddress            string
	logFormat               string
	logLevel                string
	controllerName          string
	systemCABundle          string
	allowInsecureSkipVerify bool
	listenerAddress         string
	gatewayAPIChannel       translator.Channel
	xbackendHostnames       *xbackend.Hostnames
	meshNamespaces          *mesh.Selector
	fleetNamespaces         map[string][]string
	fleetScope              snapshots.FleetScope
	handshakeWindow         time.Duration
	caExpiryWarning         time.Duration
	backendCertificates     translator.BackendCertificates
	handshakeRefresh        time.Duration
	certExpiryWarning       time.Duration
	certRetention           time.Duration
	certMaxEntries          int
	kube                    *kubeFlags
	xdsAuth                 *xdsAuthFlags
	xdsLimits               *xdsLimitFlags
	dirLimits               *manifests.Limits
	provision               *provisionFlags
	crlFetch                *crlFetchFlags
	// xdsConnections are xdsLimits completed for the file limit (runServe);
	// zero bounds nothing.
	xdsConnections xds.ConnectionLimits
	// seeXDSOptions, when set (tests only), is shown the xDS server's
	// options serve built, to drive the callbacks an Envoy's streams would.
	seeXDSOptions func(xds.Options)
}

// serveHelp heads `tlsplane serve --help`; serveFlagGroups orders the rest.
const serveHelp = `Usage: tlsplane serve --dir DIR | --kubeconfig FILE | (in a Pod) [flags]

Serves Envoy fleets over ADS (state-of-the-world and delta xDS v3) from
exactly one source: a directory of manifests, or the Kubernetes API.
Flags may be given as --flag value or --flag=value.
`

var serveFlagGroups = []flagGroup{
	{"Source (exactly one)", []string{"dir", "dir-resync", "kubeconfig", "namespaces"}},
	dirLimitsGroup,
	{"xDS and admin", []string{"xds-address", "admin-address", "fleet-namespaces", "fleet-scope", "handshake-window", "handshake-message-refresh",
		"backend-certificate-sample", "xds-cluster-name", "backend-certificate-expiry-warning", "backend-certificate-retention", "backend-certificate-max-entries"}},
	{"Translation", []string{"controller-name", "gateway-api-channel", "listener-address", "system-ca-bundle", "allow-insecure-skip-verify", "ca-expiry-warning", "xbackend-hostnames", "mesh-namespaces"}},
	{"Security of the xDS channel", []string{"xds-tls-cert", "xds-tls-key", "xds-client-ca", "xds-fleet-identity", "xds-mesh-identity", "insecure-xds"}},
	xdsLimitsGroup,
	{"Kubernetes mode", []string{"leader-elect", "leader-election-namespace", "leader-election-id",
		"leader-election-lease-duration", "leader-election-renew-deadline", "leader-election-retry-period",
		"kube-api-qps", "kube-api-burst"}},
	{"Gateway provisioning (Kubernetes mode)", []string{"provision-gateways", "provision-namespaces",
		"provision-allowed-label-keys", "provision-allowed-annotation-keys", "provision-denied-keys", "gateway-envoy-image", "gateway-xds-address", "gateway-service-type", "gateway-xds-client-secret"}},
	crlFetchGroup,
	{"Logging", []string{"log-format", "log-level"}},
}

// parseServeFlags parses args with a FlagSet of its own; -h and --help
// print the grouped help to stdout and return flag.ErrHelp.
func parseServeFlags(args []string, stdout io.Writer) (*serveConfig, error) {
	cfg, fs := newServeFlags()
	rest, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, fs, serveHelp, serveFlagGroups)
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w (tlsplane serve --help lists the flags)", err)
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("unexpected argument %q: serve takes only flags (tlsplane serve --help)", rest[0])
	}
	if err := cfg.checkOneSource(); err != nil {
		return nil, err
	}
	// A directory stands for a cluster with this channel's CRDs installed.
	cfg.dirLimits.CRDChannel = string(cfg.gatewayAPIChannel)
	if err := cfg.provision.check(cfg.kube.enabled(), cfg.xdsAuth.mutualTLS(), cfg.kube.namespaces); err != nil {
		return nil, err
	}
	if cfg.dirResync <= 0 {
		return nil, fmt.Errorf("--dir-resync %s: want a positive duration", cfg.dirResync)
	}
	if cfg.handshakeWindow < time.Second {
		return nil, fmt.Errorf("--handshake-window %s: want at least 1s", cfg.handshakeWindow)
	}
	if cfg.handshakeRefresh < 100*time.Millisecond {
		return nil, fmt.Errorf("--handshake-message-refresh %s: want at least 100ms", cfg.handshakeRefresh)
	}
	if cfg.certRetention < time.Minute {
		return nil, fmt.Errorf("--backend-certificate-retention %s: want at least 1m", cfg.certRetention)
	}
	if cfg.certExpiryWarning < 0 {
		return nil, fmt.Errorf("--backend-certificate-expiry-warning %s: want 0 (never warn) or more", cfg.certExpiryWarning)
	}
	if cfg.certMaxEntries < 1 {
		return nil, fmt.Errorf("--backend-certificate-max-entries %d: want at least 1", cfg.certMaxEntries)
	}
	if err := cfg.xdsLimits.check(); err != nil {
		return nil, err
	}
	if err := cfg.crlFetch.check(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// newServeFlags defines serve's flags on a FlagSet of their own.
func newServeFlags() (*serveConfig, *flag.FlagSet) {
	cfg := &serveConfig{}
	fs := flag.NewFlagSet("tlsplane serve", flag.ContinueOnError)
	fs.StringVar(&cfg.dir, "dir", "", "directory of manifests to serve and watch (*.yaml, *.yml, *.json; a mounted ConfigMap works)")
	// Events carry every edit; the walk catches what the kernel dropped
	// (an inotify queue overflow, a filesystem without events).
	fs.DurationVar(&cfg.dirResync, "dir-resync", dirsource.DefaultResync, "with --dir: how often the whole directory is walked again even without file events; edits never wait for a walk")
	fs.StringVar(&cfg.xdsAddress, "xds-address", "127.0.0.1:18000", "address of the ADS gRPC server (SotW and delta xDS v3)")
	fs.StringVar(&cfg.adminAddress, "admin-address", "127.0.0.1:19000", "address of the admin HTTP server: /healthz /readyz /metrics /debug/snapshot?node=ID /debug/status /debug/connections /debug/pprof/NAME")
	fs.StringVar(&cfg.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&cfg.controllerName, "controller-name", string(translator.DefaultControllerName), "controllerName written into the policy status entries this control plane owns")
	fs.StringVar(&cfg.systemCABundle, "system-ca-bundle", translator.DefaultSystemCABundlePath, "CA bundle file, on the Envoy hosts, trusted by wellKnownCACertificates: System")
	fs.BoolVar(&cfg.allowInsecureSkipVerify, "allow-insecure-skip-verify", false, "honour the tlsplane.io/insecureSkipVerify option; without this flag such a policy is Invalid")
	registerListenerAddress(fs, &cfg.listenerAddress)
	registerGatewayAPIChannel(fs, &cfg.gatewayAPIChannel)
	registerXBackendHostnames(fs, &cfg.xbackendHostnames)
	registerMeshNamespaces(fs, &cfg.meshNamespaces)
	fs.Func("fleet-namespaces", "restrict each listed fleet (an Envoy node's cluster, --service-cluster) to namespaces, and grant it the private keys of their clusters' client certificates: `FLEET=NS[,NS...][;FLEET=NS...]`, e.g. edge=shop,pay;internal=ops; a fleet not listed is served as --fleet-scope says", func(v string) error {
		fleets, err := parseFleetNamespaces(v)
		cfg.fleetNamespaces = fleets
		return err
	})
	cfg.fleetScope = snapshots.ScopeReached
	fs.Func("fleet-scope", "what a fleet --fleet-namespaces does not list is served of the clusters: reached (default: a Gateway's fleet gets the clusters its routes reach and what they read; any other fleet every cluster but those presenting a BackendTLSPolicy client certificate, whose private key it never gets) or all (every cluster, load assignment and secret, private keys included)", func(v string) error {
		scope, err := snapshots.ParseFleetScope(v)
		cfg.fleetScope = scope
		return err
	})
	fs.DurationVar(&cfg.handshakeWindow, "handshake-window", handshakes.DefaultWindow, "how far back the upstream TLS counters Envoys report on the metrics service count towards a policy's tlsplane.io/HandshakesSucceeding condition, and how long it stays without reports")
	fs.DurationVar(&cfg.handshakeRefresh, "handshake-message-refresh", handshakes.DefaultRefresh, "how often a failing tlsplane.io/HandshakesSucceeding condition's counts are brought up to date when only they changed (a flip is written at once)")
	fs.DurationVar(&cfg.certExpiryWarning, "backend-certificate-expiry-warning", backendcerts.DefaultExpiryWarning, "a backend certificate Envoys saw that expires within this long makes its policy's tlsplane.io/BackendCertificatesValid False with reason Expiring; 0 never warns (Expired still applies)")
	fs.DurationVar(&cfg.certRetention, "backend-certificate-retention", backendcerts.DefaultRetention, "how long an upstream host's certificate stays in the inventory after Envoys last reported it (at least 1m)")
	fs.IntVar(&cfg.certMaxEntries, "backend-certificate-max-entries", backendcerts.DefaultMaxEntries, "most (fleet, cluster, upstream host) entries the inventory of backend certificates keeps; when full, the one seen longest ago is dropped (tlsplane_backend_certificate_evictions_total)")
	fs.DurationVar(&cfg.caExpiryWarning, "ca-expiry-warning", translator.DefaultCAExpiryWarning, "warn in an accepted policy's Accepted message when a CA it trusts expires within this long, or has expired; 0 never warns")
	registerBackendCertificateFlags(fs, &cfg.backendCertificates)
	cfg.kube = registerKubeFlags(fs)
	cfg.xdsAuth = registerXDSAuthFlags(fs)
	cfg.xdsLimits = registerXDSLimitFlags(fs)
	cfg.dirLimits = registerDirLimits(fs)
	cfg.provision = registerProvisionFlags(fs)
	cfg.crlFetch = registerCRLFetchFlags(fs)
	return cfg, fs
}

// checkOneSource: exactly one of --dir and Kubernetes mode, checked before
// any port is bound.
func (cfg *serveConfig) checkOneSource() error {
	kube := cfg.kube != nil && cfg.kube.enabled()
	switch {
	case cfg.dir != "" && kube:
		return errors.New("--dir and the Kubernetes flags both select a source: give exactly one")
	case cfg.dir == "" && !kube:
		return errors.New("no source: give --dir DIR, or the Kubernetes flags (tlsplane serve --help)")
	}
	return nil
}

// registerListenerAddress adds --listener-address, shared by serve and
// translate. It must be an IP: Envoy rejects a listener bound to a name.
func registerListenerAddress(fs *flag.FlagSet, addr *string) {
	*addr = translator.DefaultListenerAddress
	fs.Func("listener-address", "the `IP` address every Gateway listener binds on the Envoy hosts, at each listener's port (default "+
		translator.DefaultListenerAddress+": every IPv4 address)", func(v string) error {
		ip, err := netip.ParseAddr(v)
		if err != nil || ip.Zone() != "" {
			return fmt.Errorf("%q is not an IP address", v)
		}
		*addr = ip.String()
		return nil
	})
}

// registerGatewayAPIChannel adds --gateway-api-channel, shared by serve
// and translate.
func registerGatewayAPIChannel(fs *flag.FlagSet, channel *translator.Channel) {
	*channel = translator.ChannelStandard
	fs.Func("gateway-api-channel", "the release `channel` of the cluster's Gateway API CRDs, standard or experimental (default standard): "+
		"on experimental, GatewayClasses also claim the features whose fields only those CRDs keep ("+featureList(translator.ExperimentalFeatures)+")",
		func(v string) error {
			c, err := translator.ParseChannel(v)
			*channel = c
			return err
		})
}

func featureList(features []gwv1.FeatureName) string {
	names := make([]string, len(features))
	for i, f := range features {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// parseFleetNamespaces reads `edge=shop,pay;internal=ops`.
func parseFleetNamespaces(v string) (map[string][]string, error) {
	fleets := map[string][]string{}
	for _, entry := range strings.Split(v, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		fleet, list, ok := strings.Cut(entry, "=")
		fleet = strings.TrimSpace(fleet)
		if !ok || fleet == "" {
			return nil, fmt.Errorf("fleet entry %q: want FLEET=NAMESPACE[,NAMESPACE...]", entry)
		}
		if _, dup := fleets[fleet]; dup {
			return nil, fmt.Errorf("fleet %q: listed twice", fleet)
		}
		var namespaces []string
		for _, ns := range strings.Split(list, ",") {
			if ns = strings.TrimSpace(ns); ns != "" && !slices.Contains(namespaces, ns) {
				namespaces = append(namespaces, ns)
			}
		}
		if len(namespaces) == 0 {
			return nil, fmt.Errorf("fleet %q: no namespaces given", fleet)
		}
		slices.Sort(namespaces)
		fleets[fleet] = namespaces
	}
	return fleets, nil
}

// runServe is `tlsplane serve`: it runs until SIGTERM or SIGINT.
func runServe(args []string) error {
	cfg, err := parseServeFlags(args, os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	logger, err := newLogger(os.Stderr, cfg.logFormat, cfg.logLevel)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// After the first signal, a second one kills at once, as people expect.
	go func() { <-ctx.Done(); stop() }()

	security, err := cfg.xdsAuth.serverOptions(cfg.xdsAddress, logger)
	if err != nil {
		return err
	}
	if cfg.xdsConnections, err = cfg.xdsLimits.limits(); err != nil {
		return err
	}
	applyMemoryLimit(logger)
	xdsLis, err := net.Listen("tcp", cfg.xdsAddress)
	if err != nil {
		return fmt.Errorf("--xds-address %q: %w", cfg.xdsAddress, err)
	}
	adminLis, err := net.Listen("tcp", cfg.adminAddress)
	if err != nil {
		xdsLis.Close()
		return fmt.Errorf("--admin-address %q: %w", cfg.adminAddress, err)
	}
	return serve(ctx, cfg, security, logger, xdsLis, adminLis)
}

// serve wires source, pipeline, snapshots, xDS (with security, checked
// against the address by the caller) and admin, and runs them until ctx
// ends or one of them fails. It owns and closes both listeners.
func serve(ctx context.Context, cfg *serveConfig, security xds.Security, logger *slog.Logger, xdsLis, adminLis net.Listener) error {
	defer xdsLis.Close()
	defer adminLis.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	reg := newRegistry()
	controller := gwv1.GatewayController(cfg.controllerName)
	// The tracker hears Envoys (xDS server) and peers (Kubernetes mode),
	// and tells the pipeline; pl is set before any of them starts.
	var pl *pipeline.Pipeline
	tracker := handshakes.New(handshakes.Options{
		Window: cfg.handshakeWindow, Refresh: cfg.handshakeRefresh, Registerer: reg,
		OnChange: func() { pl.Changed() },
	})
	// The inventory hears Envoys' access logs (xDS server) and peers, as
	// the tracker does.
	inventory := backendcerts.New(backendcerts.Options{
		Retention: cfg.certRetention, ExpiryWarning: certExpiryWarning(cfg.certExpiryWarning), MaxEntries: cfg.certMaxEntries,
		Registerer: reg, OnChange: func() { pl.Changed() },
	})
	source, sink, err := buildSource(ctx, cfg, logger, reg, sharing{tracker, inventory})
	if err != nil {
		return err
	}
	store := pipeline.NewStatusStore(logger.With("stage", "status"), controller)
	if sink != nil {
		sink = pipeline.FanOut{store, sink}
	} else {
		sink = store
	}
	pub := snapshots.New(snapshots.Options{
		FleetNamespaces: cfg.fleetNamespaces,
		Scope:           cfg.fleetScope,
		Logger:          logger.With("stage", "snapshots"),
		Registerer:      reg,
		// A fleet's Envoy builds withheld a cluster, or gave it back: its
		// policies' statuses say so at the next pass.
		OnRefusalsChanged: func() { pl.Changed() },
	})
	fetcher := cfg.crlFetch.fetcher(reg)
	pl, err = pipeline.New(pipeline.Options{
		Source:    source,
		Publisher: pub,
		Sink:      sink,
		// Both are pipeline.XBackendConditions too (serve_handshakes_test.go,
		// serve_backendcerts_test.go).
		Conditions: []pipeline.Conditions{tracker, inventory},
		Translator: translator.Options{
			ControllerName:          controller,
			SystemCABundlePath:      cfg.systemCABundle,
			AllowInsecureSkipVerify: cfg.allowInsecureSkipVerify,
			ListenerAddress:         cfg.listenerAddress,
			GatewayAPIChannel:       cfg.gatewayAPIChannel,
			CAExpiryWarning:         caExpiryWarning(cfg.caExpiryWarning),
			Provisioning:            cfg.provision.policy(),
			CRLFetch:                fetcher != nil,
			BackendCertificates:     cfg.backendCertificates,
			XBackendHostnames:       cfg.xbackendHostnames,
			MeshNamespaces:          cfg.meshNamespaces,
		},
		CRLFetcher: crlFetcherOf(fetcher),
		Logger:     logger.With("stage", "pipeline"),
		Registerer: reg,
	})
	if err != nil {
		return err
	}
	xdsOpts := xds.Options{
		Logger:           logger.With("stage", "xds"),
		Registerer:       reg,
		Security:         security,
		Limits:           cfg.xdsConnections,
		HandshakeTimeout: cfg.xdsLimits.handshakeTimeout,
		OnNACK: func(n xds.NACK) {
			pl.RecordNACK(pipeline.Rejection{Node: n.NodeID, Fleet: n.Fleet, TypeURL: n.TypeURL,
				Version: n.Version, Message: n.Message, Resources: n.Resources, Policies: n.Policies})
		},
		OnACK: func(a xds.ACK) { pl.RecordACK(a.Fleet, a.TypeURL, a.Version) },
		OnClusterStats: func(c xds.ClusterStats) {
			tracker.Record(handshakes.Report{Node: c.NodeID, Fleet: c.Fleet, Flush: c.Flush, Counters: c.Counters})
		},
		OnCertificateSighting: func(s xds.CertificateSighting) {
			if sg, ok := certificateSighting(s); ok {
				inventory.Record(sg)
			}
		},
	}
	if cfg.seeXDSOptions != nil {
		cfg.seeXDSOptions(xdsOpts)
	}
	xdsServer := xds.NewServer(pub, xdsOpts)
	store.ShowRejections(pl.Rejections)
	store.ShowHandshakes(func() any { return tracker.Debug() })
	store.ShowBackendCertificates(func() any { return inventory.Debug() })
	store.ShowClusters(pub.Governed)
	store.ShowRefusals(pub.Refusals)
	store.ShowWithheld(pub.WithheldClusters)
	if fetcher != nil {
		store.ShowFetchedCRLs(func() any { return fetcher.Status() })
	}
	admin := &http.Server{
		Handler:           newAdminHandler(pub, store, xdsServer, reg),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}

	// Each part reports once; the first error, or ctx, stops them all.
	done := make(chan error, 3)
	go func() { done <- wrapErr("xds server", xdsServer.Serve(xdsLis)) }()
	go func() {
		err := admin.Serve(adminLis)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- wrapErr("admin server", err)
	}()
	go func() { done <- wrapErr("pipeline", pl.Run(ctx)) }()
	// Not a part that can fail: it stops with ctx.
	go tracker.Run(ctx)
	go inventory.Run(ctx)
	logger.Info("serving", "xds", xdsLis.Addr().String(), "admin", adminLis.Addr().String(), "source", sourceName(cfg))

	var first error
	pending := 3
	select {
	case <-ctx.Done():
		logger.Info("shutting down: signal received")
	case first = <-done:
		pending--
		if first == nil {
			// Each part only returns on its own when it failed.
			first = errors.New("a server stopped without an error before shutdown")
		}
		logger.Error("shutting down", "error", first)
	}
	cancel()
	stopCtx, stopCancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer stopCancel()
	xdsServer.Stop(stopCtx)
	if err := admin.Shutdown(stopCtx); err != nil {
		admin.Close()
	}
	for ; pending > 0; pending-- {
		select {
		case <-done: // errors after shutdown began are its consequence
		case <-stopCtx.Done():
			return errors.Join(first, errors.New("shutdown: timed out waiting for the servers to stop"))
		}
	}
	return first
}

// buildSource picks exactly one source; the sink is nil in dir mode.
func buildSource(ctx context.Context, cfg *serveConfig, logger *slog.Logger, reg prometheus.Registerer, shared sharing) (pipeline.Source, pipeline.StatusSink, error) {
	if err := cfg.checkOneSource(); err != nil {
		return nil, nil, err
	}
	if cfg.dir == "" {
		return cfg.kube.build(ctx, logger.With("stage", "kubernetes"), reg, gwv1.GatewayController(cfg.controllerName), shared, cfg.provision)
	}
	info, err := os.Stat(cfg.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("--dir %q: %w", cfg.dir, err)
	}
	if !info.IsDir() {
		return nil, nil, fmt.Errorf("--dir %q: not a directory", cfg.dir)
	}
	src, err := dirsource.New(cfg.dirSourceOptions(logger.With("stage", "source"), reg))
	return src, nil, err
}

// dirSourceOptions are the directory source's options from serve's flags.
func (cfg *serveConfig) dirSourceOptions(srcLog *slog.Logger, reg prometheus.Registerer) dirsource.Options {
	return dirsource.Options{
		Dir:    cfg.dir,
		Limits: *cfg.dirLimits,
		Parse: cfg.dirLimits.Parser(func(msg string) {
			// Skipped documents and unknown fields alike; the message says which.
			srcLog.Warn("manifest warning", "warning", msg)
		}),
		Resync:     cfg.dirResync,
		Logger:     srcLog,
		Registerer: reg,
	}
}

func sourceName(cfg *serveConfig) string {
	if cfg.dir != "" {
		return "dir " + cfg.dir
	}
	return "kubernetes"
}

func wrapErr(part string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", part, err)
}

// caExpiryWarning maps the flag's 0 ("never") to the translator's negative:
// the translator's zero is its default.
func caExpiryWarning(flag time.Duration) time.Duration {
	if flag <= 0 {
		return -1
	}
	return flag
}
