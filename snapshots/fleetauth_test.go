package snapshots

import (
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// A fleet restricted to namespaces gets the clusters the translator says
// are of those namespaces, never a cluster whose name merely begins with
// one: Service web of namespace "shop/sneaky" (a name the API server
// refuses, once possible in a manifest) is cluster shop/sneaky/web/80.
func TestFleetNamespacesComeFromTheTranslatorNotFromNames(t *testing.T) {
	sneaky := st.Backend{Namespace: "shop/sneaky", Service: "web", Port: 80, SNI: "web.sneaky"}
	out := st.Output(payments, sneaky)
	p := New(Options{FleetNamespaces: map[string][]string{"shop-edge": {"shop"}}})
	p.NodeStreamOpened(&corev3.Node{Id: "a", Cluster: "shop-edge"})
	if _, err := p.Publish(out); err != nil {
		t.Fatal(err)
	}
	s := served(t, p, "shop-edge")
	for _, typeURL := range backendTypes {
		for name := range s.GetResources(typeURL) {
			if name == sneaky.ClusterName() || name == sneaky.SecretName() {
				t.Errorf("fleet shop-edge is served %s %s of namespace %q", typeURL, name, sneaky.Namespace)
			}
		}
	}
	if _, ok := s.GetResources(resource.ClusterType)[payments.ClusterName()]; !ok {
		t.Errorf("fleet shop-edge lost its own cluster %s", payments.ClusterName())
	}

	// A cluster the translator names no namespace for is no fleet's to
	// restrict: restricted fleets do not get it.
	delete(out.ClusterNamespaces, payments.ClusterName())
	if _, err := p.Publish(out); err != nil {
		t.Fatal(err)
	}
	if n := len(served(t, p, "shop-edge").GetResources(resource.ClusterType)); n != 0 {
		t.Errorf("restricted fleet served %d clusters of no known namespace", n)
	}
}
