package snapshots

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// A Gateway's backend client certificate changes its fleet's clusters
// only: the fleet is served its own version of shop/mtls/443 (presenting
// GatewayClient/shop/edge) and that key; every other fleet is served the
// cluster without it and never the key; the load assignment the own
// version reads is versioned with it, so Envoy gets it again when the
// version changes. The translation is the real one, of the golden input.
func TestGatewayClientCertificateChangesItsFleetOnly(t *testing.T) {
	in, err := manifests.Read([]string{"../testdata/translator/gateway-backend-client-certificate.in.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	p := New(Options{FleetNamespaces: map[string][]string{"shop/foreign": {"bank"}}})
	for _, fleet := range []string{"shop/edge", "shop/missing", "shop/foreign", "mesh"} {
		p.NodeStreamOpened(&corev3.Node{Id: fleet, Cluster: fleet})
	}
	if _, err := p.Publish(out); err != nil {
		t.Fatal(err)
	}
	const mtls, ownCert, key = "shop/mtls/443", "shop/own-cert/443", "GatewayClient/shop/edge"
	edge, missing, foreign, mesh := served(t, p, "shop/edge"), served(t, p, "shop/missing"), served(t, p, "shop/foreign"), served(t, p, "mesh")

	clusterOf := func(s *servedSnapshot, name string) *clusterv3.Cluster {
		c, _ := s.GetResources(resource.ClusterType)[name].(*clusterv3.Cluster)
		if c == nil {
			t.Fatalf("cluster %s not served", name)
		}
		return c
	}
	presents := func(s *servedSnapshot, name string) []string {
		refs, err := referencedSecrets(clusterOf(s, name))
		if err != nil {
			t.Fatal(err)
		}
		return refs
	}
	if refs := presents(edge, mtls); !slices.Contains(refs, key) {
		t.Errorf("fleet shop/edge: %s reads %v, want the Gateway's certificate %s", mtls, refs, key)
	}
	if refs := presents(mesh, mtls); slices.Contains(refs, key) || len(refs) != 1 {
		t.Errorf("fleet mesh: %s reads %v, want its CA only", mtls, refs)
	}
	if refs := presents(missing, mtls); len(refs) != 0 {
		t.Errorf("fleet shop/missing (its Gateway's certificate does not exist): %s reads %v, want the fail-closed context, which reads none", mtls, refs)
	}
	if i, ok := slices.BinarySearchFunc(out.Clusters, ownCert, func(c *clusterv3.Cluster, n string) int { return strings.Compare(c.GetName(), n) }); !ok || clusterOf(edge, ownCert) != out.Clusters[i] {
		t.Errorf("%s presents its policy's certificate: the Gateway's fleet must be served the cluster every fleet would be", ownCert)
	}
	// Its policy's key is no fleet's without a Gateway or a grant.
	if _, ok := mesh.GetResources(resource.ClusterType)[ownCert]; ok {
		t.Errorf("fleet mesh is served %s, which reads its policy's client key", ownCert)
	}
	for fleet, s := range map[string]*servedSnapshot{"shop/edge": edge, "shop/missing": missing, "shop/foreign": foreign, "mesh": mesh} {
		_, has := s.GetResources(resource.SecretType)[key]
		if has != (fleet == "shop/edge") {
			t.Errorf("fleet %s is served %s: %v", fleet, key, has)
		}
	}
	if _, ok := foreign.GetResources(resource.ClusterType)[mtls]; ok {
		t.Errorf("fleet shop/foreign is restricted to bank, but is served %s", mtls)
	}
	edgeEDS, meshEDS := edge.VersionMap[resource.EndpointType], mesh.VersionMap[resource.EndpointType]
	if edgeEDS[mtls] == meshEDS[mtls] {
		t.Errorf("load assignment versions: %s %q vs %q (want different: its cluster is the fleet's own)", mtls, edgeEDS[mtls], meshEDS[mtls])
	}
	if edge.GetVersion(resource.ClusterType) == mesh.GetVersion(resource.ClusterType) {
		t.Error("the fleet with its own cluster has the CDS version of every fleet")
	}

	// Restricted to another namespace, the fleet gets neither the cluster
	// nor the key it would have presented (a key no cluster reads would
	// also be refused by the consistency check).
	restricted := New(Options{FleetNamespaces: map[string][]string{"shop/edge": {"bank"}}})
	restricted.NodeStreamOpened(&corev3.Node{Id: "edge", Cluster: "shop/edge"})
	if _, err := restricted.Publish(out); err != nil {
		t.Fatal(err)
	}
	r := served(t, restricted, "shop/edge")
	if _, ok := r.GetResources(resource.SecretType)[key]; ok {
		t.Errorf("fleet shop/edge restricted to bank is served %s", key)
	}
	if _, ok := r.GetResources(resource.ClusterType)[mtls]; ok {
		t.Errorf("fleet shop/edge restricted to bank is served %s", mtls)
	}
}

// An endpoint change behind a fleet's own cluster is patched into the
// fleet's snapshot (patchEndpointVersions): the versions it serves are
// those a publisher that never saw the change before would serve, and the
// load assignment its own cluster reads gets a new version.
func TestGatewayClientCertificateEndpointPatch(t *testing.T) {
	in, err := manifests.Read([]string{"../testdata/translator/gateway-backend-client-certificate.in.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tr := translator.New()
	patched := New(Options{})
	patched.NodeStreamOpened(&corev3.Node{Id: "edge", Cluster: "shop/edge"})
	if _, err := patched.Publish(tr.Translate(in, nil, now, translator.Options{})); err != nil {
		t.Fatal(err)
	}
	const mtls = "shop/mtls/443"
	before := served(t, patched, "shop/edge").VersionMap[resource.EndpointType][mtls]
	var slice *discoveryv1.EndpointSlice
	for _, es := range in.EndpointSlices {
		if es.Name == "mtls-1" {
			slice = es.DeepCopy()
		}
	}
	slice.Endpoints[0].Addresses = []string{"10.0.0.99"}
	out, ok := tr.Update([]translator.Change{{Kind: translator.KindEndpointSlice, Key: types.NamespacedName{Namespace: "shop", Name: "mtls-1"}, Object: slice}}, nil, now, translator.Options{})
	if !ok {
		t.Fatal("Update refused the change")
	}
	if _, err := patched.Publish(out); err != nil {
		t.Fatal(err)
	}
	fresh := New(Options{})
	fresh.NodeStreamOpened(&corev3.Node{Id: "edge", Cluster: "shop/edge"})
	if _, err := fresh.Publish(out); err != nil {
		t.Fatal(err)
	}
	got, want := served(t, patched, "shop/edge").VersionMap[resource.EndpointType], served(t, fresh, "shop/edge").VersionMap[resource.EndpointType]
	if !maps.Equal(got, want) {
		t.Errorf("patched load assignment versions differ from a fresh publisher's:\n got %v\nwant %v", got, want)
	}
	if got[mtls] == before {
		t.Errorf("load assignment %s kept version %q after its endpoints moved", mtls, before)
	}
}
