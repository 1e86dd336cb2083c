package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Without --admin, status reaches a tlsplane Pod through the API server, as
// `istioctl proxy-status` does: kubeconfig, Pod, port-forward, query.

const (
	// defaultStatusNamespace is where README and deploy/ install tlsplane.
	defaultStatusNamespace = "tlsplane-system"
	// defaultPodSelector is the label the chart and deploy/ put on every
	// tlsplane Pod, whatever the release name.
	defaultPodSelector = "app.kubernetes.io/name=tlsplane"
	// defaultAdminPort is the chart's name for the admin container port.
	defaultAdminPort = "admin"
	// statusLease is serve's default --leader-election-id: its holder is
	// the replica writing statuses, the one to ask first.
	statusLease = "tlsplane-status-writer"
)

// statusRBACNeeded is what the kubeconfig's user must be granted.
const statusRBACNeeded = "tlsplane status needs, in the Pods' namespace: pods get and list, pods/portforward get and create (leases get, optional: to ask the status writer first)"

// kubeTarget is how status finds the cluster and the Pod.
type kubeTarget struct {
	kubeconfig, context, namespace string
	selector, adminPort            string
}

func (k *kubeTarget) register(fs *flag.FlagSet) {
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "`PATH` of the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&k.context, "context", "", "kubeconfig `CONTEXT` to use (default: its current context)")
	fs.StringVar(&k.namespace, "namespace", "", "`NAMESPACE` of the tlsplane Pods (default: the context's, else "+defaultStatusNamespace+")")
	fs.StringVar(&k.namespace, "n", "", "short for --namespace `NAMESPACE`")
	fs.StringVar(&k.selector, "selector", defaultPodSelector, "label `SELECTOR` of the tlsplane Pods")
	fs.StringVar(&k.selector, "l", defaultPodSelector, "short for --selector `SELECTOR`")
	fs.StringVar(&k.adminPort, "admin-port", defaultAdminPort, "the Pod's admin container `PORT`: its name or number")
}

// cluster is a loaded kubeconfig.
type cluster struct {
	config    *rest.Config
	client    kubernetes.Interface
	namespace string
}

// loadCluster reads the kubeconfig as kubectl does; the errors say which
// file or context is missing.
func (k *kubeTarget) loadCluster() (*cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.kubeconfig
	rules.MigrationRules = nil // never rewrite the user's files
	overrides := &clientcmd.ConfigOverrides{CurrentContext: k.context}
	overrides.Context.Namespace = k.namespace
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := loader.ClientConfig()
	switch {
	case clientcmd.IsEmptyConfig(err):
		return nil, fmt.Errorf("no kubeconfig: %s; pass --kubeconfig PATH, or --admin ADDR for a port you forwarded", kubeconfigSearched())
	case err != nil && k.kubeconfig != "":
		return nil, fmt.Errorf("--kubeconfig %q: %w", k.kubeconfig, err)
	case err != nil:
		return nil, fmt.Errorf("kubeconfig (%s): %w", kubeconfigSearched(), err)
	}
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return &cluster{config: cfg, client: client, namespace: statusNamespace(k.namespace, k.context, raw.CurrentContext, raw.Contexts)}, nil
}

// kubeconfigSearched names the files the default rules read.
func kubeconfigSearched() string {
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		return "none of KUBECONFIG=" + env + " exists"
	}
	return "KUBECONFIG is unset and " + filepath.Join(clientcmd.RecommendedConfigDir, clientcmd.RecommendedFileName) + " does not exist"
}

// statusNamespace is -n, else the namespace of the context in use, else
// the one README installs into (kubectl's "default" never holds tlsplane).
func statusNamespace(flagNS, flagContext, current string, contexts map[string]*clientcmdapi.Context) string {
	if flagNS != "" {
		return flagNS
	}
	name := current
	if flagContext != "" {
		name = flagContext
	}
	if c := contexts[name]; c != nil && c.Namespace != "" {
		return c.Namespace
	}
	return defaultStatusNamespace
}

// reachPod finds the Pod to ask and its admin port, saying on stderr
// which Pod and why.
func (k *kubeTarget) reachPod(ctx context.Context, c *cluster, stderr io.Writer) (*corev1.Pod, int32, error) {
	sel, err := labels.Parse(k.selector)
	if err != nil {
		return nil, 0, fmt.Errorf("--selector %q: %v", k.selector, err)
	}
	list, err := c.client.CoreV1().Pods(c.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, 0, kubeAccessError(err, "list", "pods", c.namespace)
	}
	leader := leaseHolder(ctx, c.client, c.namespace)
	pod, why, err := choosePod(list.Items, sel.String(), c.namespace, leader)
	if err != nil {
		return nil, 0, err
	}
	port, err := adminPortOf(pod, k.adminPort)
	if err != nil {
		return nil, 0, err
	}
	fmt.Fprintf(stderr, "tlsplane status: Pod %s/%s, admin port %d: %s\n", pod.Namespace, pod.Name, port, why)
	return pod, port, nil
}

// leaseHolder is the Pod name holding the status writer's Lease, or ""
// when it cannot be read (no Lease, no leader election, or no RBAC for it:
// then any Ready Pod answers as well).
func leaseHolder(ctx context.Context, c kubernetes.Interface, ns string) string {
	lease, err := c.CoordinationV1().Leases(ns).Get(ctx, statusLease, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	// serve's identity is the Pod name, "_", a random suffix.
	id := *lease.Spec.HolderIdentity
	if i := strings.LastIndex(id, "_"); i > 0 {
		id = id[:i]
	}
	return id
}

// kubeAccessError names the verb and resource RBAC refused.
func kubeAccessError(err error, verb, resource, ns string) error {
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("RBAC forbids %s %s in namespace %s: %v\n%s", verb, resource, ns, apiMessage(err), statusRBACNeeded)
	}
	if apierrors.IsUnauthorized(err) {
		return fmt.Errorf("the API server refused the kubeconfig's credentials (%s %s in namespace %s): %v", verb, resource, ns, apiMessage(err))
	}
	return fmt.Errorf("%s %s in namespace %s: %w", verb, resource, ns, err)
}

func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}
