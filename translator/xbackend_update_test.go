package translator_test

import (
	"slices"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

const xbackendWorld = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: pay, namespace: shop}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: pay}]}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: pay, namespace: shop}
spec:
  type: ExternalHostname
  externalHostname: {hostname: api.pay.example}
  port: {port: 443}
  tls:
    mode: ClientAndServer
    clientCertificateRef: {name: client}
    validation:
      caCertificateRefs: [{kind: ConfigMap, name: ca}]`

// TestXBackendRotationRebuildsNoCluster: a CA bundle or client
// certificate rotated changes its SDS secret alone, never a cluster
// (D5); Update equals Translate, and the XBackend, not a policy, is the
// origin of its resources.
func TestXBackendRotationRebuildsNoCluster(t *testing.T) {
	in := gatewayInputs(t, xbackendWorld)
	cm := &corev1.ConfigMap{Data: map[string]string{"ca.crt": translatortest.CA}}
	cm.Namespace, cm.Name = "shop", "ca"
	in.ConfigMaps = []*corev1.ConfigMap{cm}
	in.Secrets = []*corev1.Secret{translatortest.TLSSecret(t, "shop", "client", "gateway.shop.example")}
	opts := translator.Options{}
	tr := translator.New()
	last := tr.Translate(in, nil, fuzzNow, opts)
	if !slices.ContainsFunc(last.Clusters, func(c *clusterv3.Cluster) bool { return c.GetName() == "XBackend/shop/pay/443" }) {
		t.Fatalf("no XBackend cluster: %v", last.Clusters)
	}
	pay := types.NamespacedName{Namespace: "shop", Name: "pay"}
	for _, name := range []string{"XBackend/shop/pay/443", "CA/shop/configmap/ca", "Client/shop/client"} {
		if got := last.XBackendOrigins[name]; !slices.Equal(got, []types.NamespacedName{pay}) || last.Origins[name] != nil {
			t.Errorf("origins of %s: XBackends %v, policies %v; want the XBackend alone", name, got, last.Origins[name])
		}
	}

	rotatedCA := configMap(cm, "2", translatortest.CA2)
	rotatedCert := translatortest.TLSSecret(t, "shop", "client", "gateway.shop.example")
	for _, step := range []struct {
		change translator.Change
		secret string
		apply  func(*translator.Inputs)
	}{
		{translator.Change{Kind: translator.KindConfigMap, Key: types.NamespacedName{Namespace: "shop", Name: "ca"}, Object: rotatedCA},
			"CA/shop/configmap/ca", func(in *translator.Inputs) { in.ConfigMaps = []*corev1.ConfigMap{rotatedCA} }},
		{translator.Change{Kind: translator.KindSecret, Key: types.NamespacedName{Namespace: "shop", Name: "client"}, Object: rotatedCert},
			"Client/shop/client", func(in *translator.Inputs) { in.Secrets = []*corev1.Secret{rotatedCert} }},
	} {
		step.apply(&in)
		got, ok := tr.Update([]translator.Change{step.change}, nil, fuzzNow, opts)
		if !ok {
			t.Fatalf("%s: Update refused", step.secret)
		}
		if diff := fuzzOutputDifference(translator.Translate(in, nil, fuzzNow, opts), got); diff != "" {
			t.Fatalf("%s: Update differs from Translate: %s", step.secret, diff)
		}
		if len(got.Changed.Clusters) != 0 || !slices.Equal(got.Changed.Secrets, []string{step.secret}) {
			t.Errorf("rotating %s changed clusters %v and secrets %v; want that secret alone", step.secret, got.Changed.Clusters, got.Changed.Secrets)
		}
		checkChanged(t, 1, last, got)
		last = got
	}
}
