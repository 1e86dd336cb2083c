package conformance

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"

	"github.com/tlsplane/tlsplane/e2e/harness"
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
// profiles: CONFORMANCE_MESH=1. Off by default until the node agent runs
// injected Pods (init containers, native sidecars, runAsUser) and serves
// cluster DNS (branch f/meshnode-s47): without them every mesh test fails
// on its timeouts, minutes per channel, and proves nothing about tlsplane.
func meshEnabled() bool {
	return os.Getenv("CONFORMANCE_MESH") == "1"
}

// startInjector runs `tlsplane inject` on loopback over TLS (the API
// server runs on this host) with a serving certificate for 127.0.0.1 from
// a CA of the run's, and registers it as deploy/mesh-injection.yaml does,
// by URL instead of a Service: Pods created in the suite's mesh
// namespaces get the capture, the bootstrap and the native sidecar that
// dials xdsAddress (tlsplane's xDS on the bridge).
func startInjector(t *testing.T, kubeconfig, tlsplaneBin, logDir, xdsAddress string, kube kubernetes.Interface) {
	t.Helper()
	dir := t.TempDir()
	ca := harness.NewAuthority(t, "tlsplane conformance injection CA")
	leaf := ca.IssueFiles(t, harness.LeafSpec{CommonName: "127.0.0.1", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}},
		filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	addr := "127.0.0.1:" + strconv.Itoa(harness.FreePort(t))
	p := harness.Start(t, logDir, "tlsplane-inject", tlsplaneBin, "inject", "--kubeconfig", kubeconfig, "--address", addr,
		"--tls-cert", leaf.CertFile, "--tls-key", leaf.KeyFile, "--mesh-namespaces", meshNamespaces,
		"--sidecar-image", sidecarImage, "--tlsplane-image", tlsplaneImage+":conformance", "--sidecar-xds-address", xdsAddress)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	harness.WaitProbe(t, p, 30*time.Second, func() error {
		resp, err := probe.Get("https://" + addr + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("tlsplane inject /healthz: %s", resp.Status)
		}
		return nil
	})
	_, err := kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(context.Background(),
		injectionWebhook("https://"+addr+"/inject", ca.PEM), metav1.CreateOptions{})
	must(t, err)
}

// injectionWebhook is deploy/mesh-injection.yaml's configuration with the
// suite's namespaces as its namespaceSelector (the same selector as
// --mesh-namespaces) and the webhook reached by url.
func injectionWebhook(url string, caPEM []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	fail, none, never := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.NeverReinvocationPolicy
	scope := admissionregistrationv1.NamespacedScope
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "tlsplane-mesh-injection"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         "inject.mesh.tlsplane.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: &scope},
			}},
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "gateway-conformance", Operator: metav1.LabelSelectorOpIn, Values: []string{"mesh", "mesh-consumer"},
			}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			ReinvocationPolicy:      &never,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          new(int32(10)),
		}},
	}
}

// meshRunFeatures are the features a run with the mesh profiles gives the
// suite: the GatewayClass's status.supportedFeatures (what inference
// would read) and tlsplane's mesh.SupportedFeatures, the one list in
// tlsplane's code. Given by hand because no XMesh of ours carries them
// yet (docs/mesh.md, "Conformance"); a manual list turns the suite's own
// inference off, so the class's list is read here instead.
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
	webhook, err := metav1.LabelSelectorAsSelector(injectionWebhook("https://127.0.0.1:1/inject", nil).Webhooks[0].NamespaceSelector)
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
