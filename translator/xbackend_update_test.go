package translator_test

import (
	"path/filepath"
	"slices"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// TestXBackendRotationRebuildsNoCluster: a CA bundle or client
// certificate rotated changes its SDS secret alone, never a cluster
// (D5); Update equals Translate, and the XBackend, not a policy, is the
// origin of its resources.
func TestXBackendRotationRebuildsNoCluster(t *testing.T) {
	// The golden case of every mode: shop/mtls presents Secret
	// shop/envoy-client and trusts ConfigMap shop/payments-ca.
	in, err := manifests.Unadmitted.Read([]string{filepath.Join(goldenDir, "xbackend-modes.in.yaml")}, nil)
	if err != nil || len(in.ConfigMaps) != 1 || len(in.Secrets) != 1 {
		t.Fatalf("xbackend-modes: %v", err)
	}
	cm := in.ConfigMaps[0]
	opts := translator.Options{}
	tr := translator.New()
	last := tr.Translate(in, nil, fuzzNow, opts)
	if !slices.ContainsFunc(last.Clusters, func(c *clusterv3.Cluster) bool { return c.GetName() == "XBackend/shop/mtls/443" }) {
		t.Fatalf("no XBackend cluster: %v", last.Clusters)
	}
	mtls := types.NamespacedName{Namespace: "shop", Name: "mtls"}
	for _, name := range []string{"XBackend/shop/mtls/443", "Client/shop/envoy-client"} {
		if got := last.XBackendOrigins[name]; !slices.Equal(got, []types.NamespacedName{mtls}) || last.Origins[name] != nil {
			t.Errorf("origins of %s: XBackends %v, policies %v; want the XBackend alone", name, got, last.Origins[name])
		}
	}

	// A fleet is served the variants its routes reach (D2), not the rest.
	reached := last.Fleets["shop/edge"].Reached
	for name, want := range map[string]bool{"XBackend/shop/mtls/443": true, "XBackend/shop/bare/443/grpc": true, "XBackend/shop/bare/443": false,
		"XBackend/shop/db/5433/tcp": true, "XBackend/shop/db/5433": false, "XBackend/shop/stream/5432/grpc": false} {
		if slices.Contains(reached, name) != want {
			t.Errorf("fleet shop/edge reaches %s: %v, want %v (reached %v)", name, !want, want, reached)
		}
	}

	rotatedCA := configMap(cm, "2", translatortest.CA2)
	rotatedCert := translatortest.TLSSecret(t, "shop", "envoy-client", "gateway.shop.example")
	for _, step := range []struct {
		change translator.Change
		secret string
		apply  func(*translator.Inputs)
	}{
		{translator.Change{Kind: translator.KindConfigMap, Key: types.NamespacedName{Namespace: "shop", Name: "payments-ca"}, Object: rotatedCA},
			"CA/shop/configmap/payments-ca", func(in *translator.Inputs) { in.ConfigMaps = []*corev1.ConfigMap{rotatedCA} }},
		{translator.Change{Kind: translator.KindSecret, Key: types.NamespacedName{Namespace: "shop", Name: "envoy-client"}, Object: rotatedCert},
			"Client/shop/envoy-client", func(in *translator.Inputs) { in.Secrets = []*corev1.Secret{rotatedCert} }},
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
