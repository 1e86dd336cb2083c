package translator_test

import (
	"path/filepath"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// A cluster whose policy (or XBackend annotation) names a crypto profile
// carries it in filter_metadata["tlsplane.io"].profile; a cluster without
// any option carries no metadata and no cipher, curve or signature list,
// so Envoy's own defaults (and their post-quantum group) apply. Envoy 1.40
// accepts every profile's cluster.
func TestClusterCarriesProfile(t *testing.T) {
	cases := []struct {
		golden string
		want   map[string]string // cluster name -> profile, "" for none
	}{
		{"options-profiles", map[string]string{
			"shop/modern/443":       tlsopts.ProfileModern,
			"shop/intermediate/443": tlsopts.ProfileIntermediate,
			"shop/post-quantum/443": tlsopts.ProfilePostQuantum,
			"shop/fips/443":         tlsopts.ProfileFIPS,
			"shop/custom/443":       tlsopts.ProfileIntermediate,
			"shop/none/443":         "",
		}},
		{"xbackend-profile", map[string]string{
			"XBackend/shop/partner/443":    tlsopts.ProfileFIPS,
			"XBackend/shop/unprofiled/443": "",
		}},
	}
	envoy := translator.EnvoyBinary(t)
	static := &bootstrapv3.Bootstrap_StaticResources{Clusters: []*clusterv3.Cluster{xdsCluster()}}
	for _, c := range cases {
		in := readCase(t, c.golden)
		out := translator.Translate(in, nil, goldenNow, goldenOptions(t, filepath.Join(goldenDir, c.golden+".in.yaml")))
		seen := map[string]bool{}
		for _, cl := range out.Clusters {
			want, ok := c.want[cl.Name]
			if !ok {
				continue
			}
			seen[cl.Name] = true
			static.Clusters = append(static.Clusters, cl)
			got := cl.GetMetadata().GetFilterMetadata()[tlsopts.ClusterMetadataNamespace].GetFields()[tlsopts.ClusterMetadataProfile].GetStringValue()
			if got != want {
				t.Errorf("%s: cluster %s carries profile %q, want %q (metadata %v)", c.golden, cl.Name, got, want, cl.GetMetadata())
			}
			if want == "" && cl.GetMetadata() != nil {
				t.Errorf("%s: cluster %s without a profile has metadata %v", c.golden, cl.Name, cl.GetMetadata())
			}
			params := tlsParams(t, cl)
			if want == "" && (len(params.GetCipherSuites()) > 0 || len(params.GetEcdhCurves()) > 0 || len(params.GetSignatureAlgorithms()) > 0) {
				t.Errorf("%s: cluster %s without any option emits lists, hiding Envoy's defaults: %v", c.golden, cl.Name, params)
			}
			if want != "" && len(params.GetEcdhCurves()) == 0 {
				t.Errorf("%s: cluster %s with profile %s has no curve list: %v", c.golden, cl.Name, want, params)
			}
		}
		for name := range c.want {
			if !seen[name] {
				t.Errorf("%s: no cluster %s", c.golden, name)
			}
		}
	}
	envoyValidates(t, envoy, "shop/edge", static)
}

func tlsParams(t *testing.T, cl *clusterv3.Cluster) *tlsv3.TlsParameters {
	t.Helper()
	ctx := &tlsv3.UpstreamTlsContext{}
	if err := cl.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx); err != nil {
		t.Fatalf("cluster %s: %v", cl.Name, err)
	}
	return ctx.GetCommonTlsContext().GetTlsParams()
}
