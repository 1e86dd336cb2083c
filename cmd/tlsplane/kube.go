package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlsplane/tlsplane/informers"
	"github.com/tlsplane/tlsplane/peers"
	"github.com/tlsplane/tlsplane/pipeline"
	"github.com/tlsplane/tlsplane/provisioner"
	"github.com/tlsplane/tlsplane/statuswriter"
	"github.com/tlsplane/tlsplane/translator"
)

// serviceAccountNamespace is where a Pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// kubeFlags are the Kubernetes-mode flags of `tlsplane serve`.
type kubeFlags struct {
	fs             *flag.FlagSet
	kubeconfig     string
	namespaces     string
	leaderElect    bool
	leaseNamespace string
	leaseName      string
	leaseDuration  time.Duration
	renewDeadline  time.Duration
	retryPeriod    time.Duration
	apiQPS         float64
	apiBurst       int
}

func registerKubeFlags(fs *flag.FlagSet) *kubeFlags {
	k := &kubeFlags{fs: fs}
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig of the API server to watch (Kubernetes mode); in a Pod without --dir the in-cluster config is used")
	fs.StringVar(&k.namespaces, "namespaces", "", "comma-separated namespaces to watch in Kubernetes mode; empty watches all")
	fs.BoolVar(&k.leaderElect, "leader-elect", true, "with several replicas, only the holder of a Lease writes status (BackendTLSPolicy, GatewayClass, Gateway, ListenerSet, "+routeKindList("", ", ", ", ")+"; every replica serves xDS)")
	fs.StringVar(&k.leaseNamespace, "leader-election-namespace", "", "namespace of the leader election Lease; default: the Pod's namespace, else default")
	fs.StringVar(&k.leaseName, "leader-election-id", "tlsplane-status-writer", "name of the leader election Lease")
	fs.DurationVar(&k.leaseDuration, "leader-election-lease-duration", 15*time.Second, "how long a leader's Lease is valid without renewal; the longest handover after a leader dies")
	fs.DurationVar(&k.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "how long a leader keeps retrying to renew before it stops writing")
	fs.DurationVar(&k.retryPeriod, "leader-election-retry-period", 2*time.Second, "how often candidates try to acquire or renew the Lease")
	fs.Float64Var(&k.apiQPS, "kube-api-qps", 200, "client-side rate limit of requests to the API server (queries per second), status writes above all; negative: none (the API server's priority and fairness alone)")
	fs.IntVar(&k.apiBurst, "kube-api-burst", 400, "burst of requests to the API server above --kube-api-qps")
	return k
}

// enabled reports whether serve should use the Kubernetes API as source:
// with --kubeconfig, or in a Pod (KUBERNETES_SERVICE_HOST) unless --dir is
// given (a mounted ConfigMap served by --dir is a valid in-cluster setup).
func (k *kubeFlags) enabled() bool {
	if k.kubeconfig != "" {
		return true
	}
	dir := k.fs.Lookup("dir")
	return inCluster() && (dir == nil || dir.Value.String() == "")
}

func inCluster() bool { return os.Getenv("KUBERNETES_SERVICE_HOST") != "" }

// build starts nothing; it returns the source and the status sink of
// Kubernetes mode. The caller runs the source, which also runs the status
// writer, so both stop before serve returns.
func (k *kubeFlags) build(ctx context.Context, logger *slog.Logger, reg prometheus.Registerer, controller gwv1.GatewayController, shared sharing, provision *provisionFlags) (pipeline.Source, pipeline.StatusSink, error) {
	cfg, err := k.restConfig(logger)
	if err != nil {
		return nil, nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client for %s: %w", cfg.Host, err)
	}
	gateway, err := gwclient.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("gateway api client for %s: %w", cfg.Host, err)
	}
	src, err := informers.New(informers.Options{
		Client:     client,
		Gateway:    gateway,
		Namespaces: splitList(k.namespaces),
		Logger:     logger,
		Registerer: reg,
	})
	if err != nil {
		return nil, nil, err
	}
	if controller == "" {
		controller = translator.DefaultControllerName
	}
	id := identity()
	var shares []*peers.Share
	if k.leaderElect {
		// Replicas elect a leader to write status; they share what their
		// Envoys report beside the Lease (handshake windows, and the backend
		// certificates seen), so that the leader counts them all.
		var topics []peers.Options
		if shared.tracker != nil {
			topics = append(topics, peers.Options{Tracker: shared.tracker})
		}
		if shared.inventory != nil {
			topics = append(topics, peers.Options{Inventory: shared.inventory})
		}
		for _, o := range topics {
			o.Client, o.Namespace, o.Group, o.Identity = client, k.leaseNamespaceOrDefault(), k.leaseName, id
			o.Logger, o.Registerer = logger.With("stage", "peers"), reg
			share, err := peers.New(o)
			if err != nil {
				return nil, nil, err
			}
			shares = append(shares, share)
		}
	}
	opts := statuswriter.Options{
		Gateway:    gateway,
		Controller: controller,
		Cache:      src,
		Logger:     logger,
		Registerer: reg,
	}
	var prov *provisioner.Provisioner
	if provision != nil && provision.enabled {
		// It writes only while the status writer leads: one writer of
		// the provisioned objects, whatever the replicas' versions.
		prov, err = provisioner.New(provisioner.Options{
			Client: client, Cache: src, Controller: controller, Config: provision.config,
			Namespaces: splitList(k.namespaces), Logger: logger, Registerer: reg,
		})
		if err != nil {
			return nil, nil, err
		}
		opts.Leading = prov.Lead
	}
	if k.leaderElect {
		if k.renewDeadline >= k.leaseDuration || k.retryPeriod >= k.renewDeadline {
			return nil, nil, fmt.Errorf("leader election: want --leader-election-retry-period (%s) < --leader-election-renew-deadline (%s) < --leader-election-lease-duration (%s)",
				k.retryPeriod, k.renewDeadline, k.leaseDuration)
		}
		opts.Election = &statuswriter.Election{
			Client:        client,
			Namespace:     k.leaseNamespaceOrDefault(),
			Name:          k.leaseName,
			Identity:      id,
			LeaseDuration: k.leaseDuration,
			RenewDeadline: k.renewDeadline,
			RetryPeriod:   k.retryPeriod,
		}
	}
	writer, err := statuswriter.New(opts)
	if err != nil {
		return nil, nil, err
	}
	logger.Info("kubernetes mode", "api", cfg.Host, "namespaces", k.namespaces, "leaderElect", k.leaderElect, "provisionGateways", prov != nil)
	var sink pipeline.StatusSink = writer
	if prov != nil {
		sink = pipeline.FanOut{writer, prov}
	}
	return &kubeSource{Source: src, writer: writer, shares: shares, provisioner: prov}, sink, nil
}

// restConfig is --kubeconfig's, else the Pod's in-cluster config.
func (k *kubeFlags) restConfig(logger *slog.Logger) (*rest.Config, error) {
	var (
		cfg *rest.Config
		err error
	)
	if k.kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", k.kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %q: %w", k.kubeconfig, err)
		}
	} else {
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster config: %w", err)
		}
	}
	cfg.UserAgent = "tlsplane/" + version
	cfg.QPS = float32(k.apiQPS)
	cfg.Burst = k.apiBurst
	// Requests wait out an outage here, not in the reflectors' growing backoff.
	cfg.Wrap(informers.WaitForAPIServer(logger, 250*time.Millisecond))
	return cfg, nil
}

func (k *kubeFlags) leaseNamespaceOrDefault() string {
	if k.leaseNamespace != "" {
		return k.leaseNamespace
	}
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if data, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(data)) != "" {
		return strings.TrimSpace(string(data))
	}
	return "default"
}

// identity names this replica in the Lease: the Pod name (POD_NAME, or the
// host name, which is the Pod name in a Pod) plus a random suffix, so a
// restarted process never mistakes the old holder for itself.
func identity() string {
	name := os.Getenv("POD_NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return name + "_" + hex.EncodeToString(b)
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// The informers' caches are what the status writer compares against.
var _ statuswriter.Cache = (*informers.Source)(nil)

// kubeSource runs the status writer and the sharing with peers beside the
// informers, so the pipeline's wait for its source also waits for the
// writer to release the Lease.
type kubeSource struct {
	*informers.Source
	writer *statuswriter.Writer
	shares []*peers.Share // none without leader election
	// provisioner watches what it provisioned; nil without --provision-gateways.
	provisioner *provisioner.Provisioner
}

func (s *kubeSource) Run(ctx context.Context, changed func()) error {
	var wg sync.WaitGroup
	var writerErr, provErr error
	shareErrs := make([]error, len(s.shares))
	wg.Add(2 + len(s.shares))
	go func() {
		defer wg.Done()
		writerErr = s.writer.Run(ctx)
	}()
	for i, share := range s.shares {
		go func() {
			defer wg.Done()
			shareErrs[i] = share.Run(ctx)
		}()
	}
	go func() {
		defer wg.Done()
		if s.provisioner != nil {
			provErr = s.provisioner.Run(ctx)
		}
	}()
	err := s.Source.Run(ctx, changed)
	wg.Wait()
	return errors.Join(append([]error{err, writerErr, provErr}, shareErrs...)...)
}
