package translator_test

import (
	"path/filepath"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// TestEnvoyAcceptsTrafficPolicies puts what each XBackendTrafficPolicy
// golden input translates to (clusters with retry budgets, the stateful
// session filter in every connection manager, cookie and header sessions
// per route) to Envoy 1.40's `--mode validate`.
func TestEnvoyAcceptsTrafficPolicies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Envoy; skipped with -short")
	}
	envoy := translator.EnvoyBinary(t)
	inputs, err := filepath.Glob(filepath.Join(goldenDir, "xtraffic-*.in.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no XBackendTrafficPolicy golden inputs (%v)", err)
	}
	for _, path := range inputs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in, err := manifests.Unadmitted.Read([]string{path}, func(msg string) { t.Log("warning:", msg) })
			if err != nil {
				t.Fatal(err)
			}
			envoyValidatesFleet(t, in, "shop/edge")
			out := translator.Translate(in, nil, time.Now(), translator.Options{ListenerAddress: "127.0.0.1"})
			if len(out.Clusters) == 0 {
				t.Fatal("no cluster to validate")
			}
			envoyValidates(t, envoy, "shop/edge", &bootstrapv3.Bootstrap_StaticResources{
				Clusters: append([]*clusterv3.Cluster{xdsCluster()}, out.Clusters...),
			})
		})
	}
}
