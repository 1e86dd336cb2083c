package translator_test

import (
	"path/filepath"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// TestEnvoyAcceptsXBackendClusters puts every XBackend cluster of the
// golden XBackend cases (each mode and protocol: DNS discovery through
// envoy.clusters.dns, upstream TLS with SDS over ADS, HTTP protocol
// options) with each case's fleet listeners to Envoy 1.40's
// `--mode validate`.
func TestEnvoyAcceptsXBackendClusters(t *testing.T) {
	envoy := translator.EnvoyBinary(t)
	paths, err := filepath.Glob(filepath.Join(goldenDir, "xbackend-*.in.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no XBackend golden inputs (%v)", err)
	}
	static := &bootstrapv3.Bootstrap_StaticResources{Clusters: []*clusterv3.Cluster{xdsCluster()}}
	for _, path := range paths {
		in, err := manifests.Unadmitted.Read([]string{path}, func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		out := translator.Translate(in, nil, goldenNow, goldenOptions(t, path))
		for _, c := range out.Clusters {
			if strings.HasPrefix(c.Name, "XBackend/") {
				static.Clusters = append(static.Clusters, c)
			}
		}
	}
	if len(static.Clusters) < 2 {
		t.Fatal("no XBackend cluster to validate")
	}
	t.Logf("%d XBackend clusters", len(static.Clusters)-1)
	envoyValidates(t, envoy, "shop/edge", static)
}
