package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/pipeline"
)

// kubeFlags are the Kubernetes-mode flags of `tlsplane serve`.
// Placeholder: the Kubernetes work (issue 4) replaces this file.
type kubeFlags struct {
	kubeconfig string
}

func registerKubeFlags(fs *flag.FlagSet) *kubeFlags {
	k := &kubeFlags{}
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig of the API server to watch (Kubernetes mode)")
	return k
}

// enabled reports whether serve should use the Kubernetes API as source.
func (k *kubeFlags) enabled() bool { return k.kubeconfig != "" }

// build starts nothing; it returns the source and the status sink of
// Kubernetes mode. The caller runs the source.
func (k *kubeFlags) build(ctx context.Context, logger *slog.Logger, reg prometheus.Registerer, controller gwv1.GatewayController) (pipeline.Source, pipeline.StatusSink, error) {
	return nil, nil, errors.New("kubernetes mode is not built yet")
}
