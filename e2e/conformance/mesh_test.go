package conformance

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
	"github.com/tlsplane/tlsplane/e2e/node"
	"github.com/tlsplane/tlsplane/translator/mesh"
)

// meshNamespaces is the --mesh-namespaces selector that puts the suite's
// two mesh namespaces (labelled by its own manifests) in the mesh.
const meshNamespaces = "gateway-conformance in (mesh,mesh-consumer)"

// The images the injected containers name; the node agent runs them as
// the tlsplane binary and the Envoy under test (tags are ignored).
const (
	sidecarImage  = "envoyproxy/envoy:conformance"
	tlsplaneImage = "tlsplane/tlsplane"
)

// meshEnabled says whether this run includes the MESH-HTTP and MESH-GRPC
// profiles: on unless CONFORMANCE_MESH=0, since the node agent runs the
// injected Pods with cluster DNS (f/meshpods-s48) and the mesh tests that
// pass are on the ratchet.
func meshEnabled() bool {
	return os.Getenv("CONFORMANCE_MESH") != "0"
}

// startInjector runs `tlsplane inject` on loopback over TLS (the API
// server runs on this host) with a serving certificate for 127.0.0.1 from
// a CA of the run's, and registers it as deploy/mesh-injection.yaml does,
// by URL instead of a Service: Pods created in the suite's mesh
// namespaces get the capture, the bootstrap and the native sidecar that
// dials xdsAddress (tlsplane's xDS on the bridge).
func startInjector(t *testing.T, kubeconfig, tlsplaneBin, logDir, xdsAddress string, kube kubernetes.Interface) {
	t.Helper()
	_, addr, ca := harness.StartInjector(t, logDir, tlsplaneBin, "--kubeconfig", kubeconfig, "--mesh-namespaces", meshNamespaces,
		"--sidecar-image", sidecarImage, "--tlsplane-image", tlsplaneImage+":conformance", "--sidecar-xds-address", xdsAddress)
	_, err := kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(context.Background(),
		injectionWebhook(t, "https://"+addr+"/inject", ca.PEM), metav1.CreateOptions{})
	must(t, err)
}

// injectionWebhook is deploy/mesh-injection.yaml's configuration with the
// suite's namespaces as its namespaceSelector (the same selector as
// --mesh-namespaces) and the webhook reached by url.
func injectionWebhook(t *testing.T, url string, caPEM []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "deploy", "mesh-injection.yaml"))
	must(t, err)
	cfg, err := apiserver.MutatingWebhookAt(data, url, caPEM)
	must(t, err)
	cfg.Webhooks[0].NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "gateway-conformance", Operator: metav1.LabelSelectorOpIn, Values: []string{"mesh", "mesh-consumer"},
	}}}
	return cfg
}

// meshRunFeatures are the features a run with the mesh profiles gives the
// suite: the GatewayClass's status.supportedFeatures (what inference
// would read) and tlsplane's mesh.SupportedFeatures, the one list in
// tlsplane's code. Given by hand unless the run infers them from an XMesh
// of ours (xmeshInferred, off by default until a full run proves it); a
// manual list turns the suite's own inference off, so the class's list is
// read here instead.
func meshRunFeatures(t *testing.T, cl client.Client) []features.FeatureName {
	t.Helper()
	gc := &gwv1.GatewayClass{}
	must(t, cl.Get(context.Background(), client.ObjectKey{Name: GatewayClassName}, gc))
	var names []features.FeatureName
	for _, f := range gc.Status.SupportedFeatures {
		if slices.Contains(mesh.SupportedFeatures, f.Name) {
			t.Fatalf("GatewayClass %s lists the mesh feature %q in status.supportedFeatures: the suite drops it there", GatewayClassName, f.Name)
		}
		names = append(names, features.FeatureName(f.Name))
	}
	for _, f := range mesh.SupportedFeatures {
		names = append(names, features.FeatureName(f))
	}
	return names
}

// TestInjectionWebhookSelectsMeshNamespaces: the webhook configuration's
// namespaceSelector and tlsplane's --mesh-namespaces pick the same
// namespaces (the suite's two mesh namespaces, not its infra one).
func TestInjectionWebhookSelectsMeshNamespaces(t *testing.T) {
	flag, err := labels.Parse(meshNamespaces)
	must(t, err)
	webhook, err := metav1.LabelSelectorAsSelector(injectionWebhook(t, "https://127.0.0.1:1/inject", nil).Webhooks[0].NamespaceSelector)
	must(t, err)
	for _, tc := range []struct {
		label string
		want  bool
	}{{"mesh", true}, {"mesh-consumer", true}, {"infra", false}, {"", false}} {
		ns := labels.Set{}
		if tc.label != "" {
			ns["gateway-conformance"] = tc.label
		}
		if got := flag.Matches(ns); got != tc.want {
			t.Errorf("--mesh-namespaces %q on gateway-conformance=%q: %v, want %v", meshNamespaces, tc.label, got, tc.want)
		}
		if got := webhook.Matches(ns); got != tc.want {
			t.Errorf("webhook namespaceSelector on gateway-conformance=%q: %v, want %v", tc.label, got, tc.want)
		}
	}
}

// serviceClusterIPRange is the API server's --service-cluster-ip-range
// (e2e/apiserver/server.go).
const serviceClusterIPRange = "10.0.0.0/24"

// meshAgentOptions, in a run with the mesh, are the cluster DNS the mesh
// client resolves Service names with and the route to the cluster IPs the
// capture redirects; without them `client http://echo` fails before its
// connection reaches the sidecar. None without the mesh: the gateway
// profiles' Pods keep the node's resolv.conf, as their ratchet was set.
func meshAgentOptions(ctx context.Context, t *testing.T, kube kubernetes.Interface, network *node.Network) []node.AgentOption {
	t.Helper()
	if !meshEnabled() {
		return nil
	}
	dns, err := node.StartClusterDNS(ctx, t, kube, network)
	must(t, err)
	return []node.AgentOption{node.WithClusterDNS(dns.Address), node.WithServiceCIDR(serviceClusterIPRange)}
}
