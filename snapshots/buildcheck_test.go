package snapshots

import (
	"maps"
	"slices"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlsplane/tlsplane/manifests"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// stCluster is payments' cluster with params and profile.
func stCluster(t *testing.T, params *tlsv3.TlsParameters, profile string) *clusterv3.Cluster {
	t.Helper()
	return st.Tuned(st.Output(payments), payments.ClusterName(), params, profile).Clusters[0]
}

// x25519 is payments and ledger, payments asking for curve X25519.
func x25519() translator.Output {
	return st.Tuned(st.Output(payments, ledger), payments.ClusterName(), &tlsv3.TlsParameters{EcdhCurves: []string{"X25519"}}, "")
}

// servedNames are the names of typeURL fleet is served, sorted.
func servedNames(t *testing.T, p *Publisher, fleet, typeURL string) []string {
	t.Helper()
	return sortedNames(served(t, p, fleet).GetResources(typeURL))
}

func buildRefusalsOf(p *Publisher) []translator.FleetRefusal {
	var out []translator.FleetRefusal
	for _, r := range p.Refusals() {
		if r.Reason == ReasonEnvoyBuildRefuses {
			out = append(out, r)
		}
	}
	return out
}

// TestFIPSFleetIsNotServedAnX25519Cluster: a fleet with a BoringSSL-FIPS
// Envoy is served every cluster but the one asking for X25519, with what
// that one reads; the refusal names the fleet, the build, the value, the
// option and the cluster, and its objects are the cluster's policy. A
// fleet of plain BoringSSL builds, and one whose builds are not known,
// get it (Envoy decides).
func TestFIPSFleetIsNotServedAnX25519Cluster(t *testing.T) {
	p := New(Options{})
	p.SetFleetBuilds("fips", []EnvoyBuild{envoy140FIPS})
	p.NodeStreamOpened(&corev3.Node{Id: "f", Cluster: "fips"})
	p.SetFleetBuilds("plain", []EnvoyBuild{envoy140})
	p.NodeStreamOpened(&corev3.Node{Id: "p", Cluster: "plain"})
	p.NodeStreamOpened(&corev3.Node{Id: "u", Cluster: "unknown"})
	if _, err := p.Publish(x25519()); err != nil {
		t.Fatal(err)
	}
	for typeURL, want := range map[string][]string{
		resource.ClusterType:  {ledger.ClusterName()},
		resource.EndpointType: {ledger.ClusterName()},
		resource.SecretType:   {ledger.SecretName()},
	} {
		if got := servedNames(t, p, "fips", typeURL); !slices.Equal(got, want) {
			t.Errorf("fips fleet %s: %v, want %v", typeURL, got, want)
		}
	}
	for _, fleet := range []string{"plain", "unknown"} {
		if got := servedNames(t, p, fleet, resource.ClusterType); len(got) != 2 {
			t.Errorf("%s fleet clusters: %v, want both", fleet, got)
		}
	}
	got := buildRefusalsOf(p)
	want := translator.FleetRefusal{Fleet: "fips", Reason: ReasonEnvoyBuildRefuses,
		Objects: []translator.ObjectRef{{Kind: translator.KindBackendTLSPolicy, Name: payments.Policy()}},
		Message: `fleet fips: Envoy 1.40.0 BoringSSL-FIPS does not accept curve "X25519" (option tlsplane.io/ecdhCurves); cluster shop/payments/8443 is not served to the fleet`}
	if len(got) != 1 || !sameRefusal(got[0], want) {
		t.Fatalf("build refusals = %+v, want %+v", got, want)
	}
	if p.isRefused("fips") {
		t.Error("the fleet itself is refused: it must take every other change")
	}
}

// TestWithheldClusterKeepsTheVersionServed: a fleet served a cluster its
// build takes keeps that version when an edit asks for what it refuses
// (with the secret and load assignment it read), and is served the new
// one when the refusing build leaves; the publisher says so.
func TestWithheldClusterKeepsTheVersionServed(t *testing.T) {
	notified := 0
	p := New(Options{OnRefusalsChanged: func() { notified++ }})
	p.SetFleetBuilds("fips", []EnvoyBuild{envoy140FIPS})
	p.NodeStreamOpened(&corev3.Node{Id: "f", Cluster: "fips"})
	if _, err := p.Publish(st.Output(payments, ledger)); err != nil {
		t.Fatal(err)
	}
	before := served(t, p, "fips").GetResources(resource.ClusterType)[payments.ClusterName()]

	edited := x25519()
	if _, err := p.Publish(edited); err != nil {
		t.Fatal(err)
	}
	if got := served(t, p, "fips").GetResources(resource.ClusterType)[payments.ClusterName()]; got != before {
		t.Fatalf("fips fleet's payments cluster = %v, want the version served before the edit", got)
	}
	if got := servedNames(t, p, "fips", resource.SecretType); !slices.Contains(got, payments.SecretName()) {
		t.Errorf("fips fleet's secrets %v: the kept cluster's CA is missing", got)
	}
	if len(buildRefusalsOf(p)) != 1 {
		t.Fatalf("build refusals = %+v, want one", buildRefusalsOf(p))
	}

	p.SetFleetBuilds("fips", []EnvoyBuild{envoy140})
	if got := served(t, p, "fips").GetResources(resource.ClusterType)[payments.ClusterName()]; got != edited.Clusters[1] {
		t.Errorf("after the FIPS build left, payments = %v, want the edited cluster", got)
	}
	if len(buildRefusalsOf(p)) != 0 || notified != 1 {
		t.Errorf("build refusals = %+v, notified %d times; want none, once", buildRefusalsOf(p), notified)
	}
}

// TestFIPSProfileOnNonFIPSBuild: profile fips-140-3 asks for a FIPS
// module; a plain BoringSSL build is not one, even if it could take the
// parameters.
func TestFIPSProfileOnNonFIPSBuild(t *testing.T) {
	p := New(Options{})
	p.SetFleetBuilds("edge", []EnvoyBuild{envoy140FIPS, envoy140})
	p.NodeStreamOpened(&corev3.Node{Id: "e", Cluster: "edge"})
	out := st.Tuned(st.Output(payments), payments.ClusterName(), &tlsv3.TlsParameters{EcdhCurves: []string{"P-256", "P-384"}}, tlsopts.ProfileFIPS)
	if _, err := p.Publish(out); err != nil {
		t.Fatal(err)
	}
	if got := servedNames(t, p, "edge", resource.ClusterType); len(got) != 0 {
		t.Errorf("clusters %v, want none", got)
	}
	want := `fleet edge: Envoy 1.40.0 BoringSSL does not accept profile "fips-140-3" (option tlsplane.io/profile): it is not a BoringSSL-FIPS build; cluster shop/payments/8443 is not served to the fleet`
	if got := buildRefusalsOf(p); len(got) != 1 || got[0].Message != want {
		t.Errorf("build refusals = %+v, want %q", got, want)
	}
}

// TestGatewayFleetKeepsItsRoutesToAWithheldCluster: a Gateway fleet whose
// routes reach a withheld cluster is still served (its listeners and
// routes, consistent without the cluster) and its Gateway is not refused.
func TestGatewayFleetKeepsItsRoutesToAWithheldCluster(t *testing.T) {
	gw := st.Gateway{Namespace: "shop", Name: "edge", HTTPPort: 8080, Hostname: "shop.example", Backend: payments}
	p := New(Options{})
	p.SetFleetBuilds(gw.Fleet(), []EnvoyBuild{envoy140FIPS})
	p.NodeStreamOpened(&corev3.Node{Id: "g", Cluster: gw.Fleet()})
	if _, err := p.Publish(st.WithGateways(x25519(), gw)); err != nil {
		t.Fatal(err)
	}
	if got := servedNames(t, p, gw.Fleet(), resource.ClusterType); len(got) != 0 {
		t.Errorf("clusters %v, want none", got)
	}
	if got := servedNames(t, p, gw.Fleet(), resource.RouteType); len(got) != 1 {
		t.Errorf("routes %v, want the Gateway's", got)
	}
	for _, r := range p.Refusals() {
		if r.Reason != ReasonEnvoyBuildRefuses {
			t.Errorf("refusal %+v: the fleet must not be refused", r)
		}
	}
	if len(buildRefusalsOf(p)) != 1 {
		t.Errorf("build refusals = %+v, want one", buildRefusalsOf(p))
	}
}

// TestGatewayOwnClusterIsLeftOutWithItsBase: a Gateway fleet's own
// version of a cluster (presenting its client certificate) is left out
// with the base cluster its build refuses, with the key only it reads, and
// not replaced by the version served before: that one is the own version
// the fleet's Gateway now changed. The translation is the real one.
func TestGatewayOwnClusterIsLeftOutWithItsBase(t *testing.T) {
	in, err := manifests.Read([]string{"../testdata/translator/gateway-backend-client-certificate.in.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	const mtls, key = "shop/mtls/443", "GatewayClient/shop/edge"
	p := New(Options{})
	p.SetFleetBuilds("shop/edge", []EnvoyBuild{envoy140FIPS})
	p.NodeStreamOpened(&corev3.Node{Id: "edge", Cluster: "shop/edge"})
	if _, err := p.Publish(out); err != nil {
		t.Fatal(err)
	}
	if got := servedNames(t, p, "shop/edge", resource.ClusterType); !slices.Contains(got, mtls) {
		t.Fatalf("before the edit, shop/edge clusters %v lack %s", got, mtls)
	}

	x := &tlsv3.TlsParameters{EcdhCurves: []string{"X25519"}}
	edited := st.Tuned(out, mtls, x, "")
	own := *edited.Fleets["shop/edge"]
	own.Clusters = st.Tuned(translator.Output{Clusters: own.Clusters}, mtls, x, "").Clusters
	edited.Fleets = maps.Clone(edited.Fleets)
	edited.Fleets["shop/edge"] = &own
	if _, err := p.Publish(edited); err != nil {
		t.Fatal(err)
	}
	if got := servedNames(t, p, "shop/edge", resource.ClusterType); slices.Contains(got, mtls) {
		t.Errorf("shop/edge is served %s, whose X25519 its FIPS build refuses", mtls)
	}
	if got := servedNames(t, p, "shop/edge", resource.SecretType); slices.Contains(got, key) {
		t.Errorf("shop/edge is served %s, which only the withheld cluster reads", key)
	}
	for _, r := range p.Refusals() {
		if r.Reason != ReasonEnvoyBuildRefuses {
			t.Errorf("refusal %v: the fleet must not be refused", r)
		}
	}
}
