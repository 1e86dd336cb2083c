package translator_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// meshInputs is the mesh golden case's objects.
func meshInputs(t *testing.T) translator.Inputs {
	t.Helper()
	in, err := manifests.Read([]string{filepath.Join(goldenDir, "mesh-routes.in.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func meshFleetNames(out translator.Output) []string {
	var names []string
	for name := range out.Fleets {
		if strings.HasPrefix(name, "Mesh/") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// TestMeshUpdate: an edit of a consumer route changes its namespace's
// fleet alone (the others keep their pointers, Gateway fleets included),
// a namespace leaving the mesh takes its fleet away, and each Update
// equals a whole translation of the same objects.
func TestMeshUpdate(t *testing.T) {
	opts := translator.Options{}
	in := meshInputs(t)
	tr := translator.New()
	first := tr.Translate(in, nil, goldenNow, opts)
	if got := meshFleetNames(first); !slices.Equal(got, []string{"Mesh/caller", "Mesh/shop"}) {
		t.Fatalf("mesh fleets %v", got)
	}

	consumer, edited := editConsumerRoute(in)
	second, ok := tr.Update([]translator.Change{{Kind: translator.KindHTTPRoute, Key: consumer, Object: edited}}, nil, goldenNow, opts)
	if !ok {
		t.Fatal("Update refused a route edit")
	}
	if diff := fuzzOutputDifference(translator.Translate(in, nil, goldenNow, opts), second); diff != "" {
		t.Fatalf("Update differs from Translate: %s", diff)
	}
	if !slices.Contains(second.Changed.Fleets, "Mesh/caller") || slices.Contains(second.Changed.Fleets, "Mesh/shop") {
		t.Errorf("changed fleets %v, want Mesh/caller and not Mesh/shop", second.Changed.Fleets)
	}
	for _, name := range []string{"Mesh/shop", "shop/edge"} {
		if first.Fleets[name] != second.Fleets[name] {
			t.Errorf("fleet %s is not the same pointer after an edit that does not reach it", name)
		}
	}
	if first.Fleets["Mesh/caller"] == second.Fleets["Mesh/caller"] {
		t.Error("fleet Mesh/caller kept its pointer after its consumer route changed")
	}

	var leaving *corev1.Namespace
	for i, ns := range in.Namespaces {
		if ns.Name == "caller" {
			leaving = ns.DeepCopy()
			leaving.Labels = nil
			in.Namespaces[i] = leaving
		}
	}
	third, ok := tr.Update([]translator.Change{{Kind: translator.KindNamespace, Key: types.NamespacedName{Name: "caller"}, Object: leaving}}, nil, goldenNow, opts)
	if !ok {
		t.Fatal("Update refused a namespace edit")
	}
	if diff := fuzzOutputDifference(translator.Translate(in, nil, goldenNow, opts), third); diff != "" {
		t.Fatalf("Update differs from Translate: %s", diff)
	}
	if got := meshFleetNames(third); !slices.Equal(got, []string{"Mesh/shop"}) || !slices.Contains(third.Changed.Fleets, "Mesh/caller") {
		t.Errorf("mesh fleets %v, changed %v: want Mesh/shop alone, Mesh/caller named", got, third.Changed.Fleets)
	}
	st := third.GatewayAPI.HTTPRoutes[consumer]
	if len(st.Parents) != 1 || st.Parents[0].Conditions[0].Reason != string(gwv1.RouteReasonNoMatchingParent) {
		t.Errorf("consumer route of a namespace that left the mesh: %+v", st.Parents)
	}
}

// TestNoMeshWithoutMembers: without a namespace labelled into the mesh,
// routes whose parent is a Service get no status of ours and no fleet is
// made: what Gateway-only installations saw before the mesh.
func TestNoMeshWithoutMembers(t *testing.T) {
	in := meshInputs(t)
	for i, ns := range in.Namespaces {
		ns = ns.DeepCopy()
		ns.Labels = nil
		in.Namespaces[i] = ns
	}
	out := translator.Translate(in, nil, goldenNow, translator.Options{})
	if names := meshFleetNames(out); len(names) > 0 {
		t.Errorf("mesh fleets without members: %v", names)
	}
	for nn, st := range out.GatewayAPI.HTTPRoutes {
		for _, p := range st.Parents {
			if p.ParentRef.Kind != nil && *p.ParentRef.Kind == "Service" {
				t.Errorf("%s: a status entry for Service parent %s without a mesh", nn, p.ParentRef.Name)
			}
		}
	}
	bothName := types.NamespacedName{Namespace: "shop", Name: "both"}
	both := out.GatewayAPI.HTTPRoutes[bothName]
	if len(both.Parents) != 1 || both.Parents[0].ParentRef.Name != "edge" {
		t.Fatalf("shop/both: parents %+v, want its Gateway's alone", both.Parents)
	}
	// In the mesh, the Gateway's entry and fleet are the same, the
	// Service's entry follows.
	meshOut := translator.Translate(meshInputs(t), nil, goldenNow, translator.Options{})
	inMesh := meshOut.GatewayAPI.HTTPRoutes[bothName]
	if len(inMesh.Parents) != 2 || !reflect.DeepEqual(inMesh.Parents[0], both.Parents[0]) || inMesh.Parents[1].ParentRef.Name != "echo-v2" {
		t.Errorf("shop/both in the mesh: parents %+v, want %+v then echo-v2's", inMesh.Parents, both.Parents[0])
	}
	edge := func(o translator.Output) map[string]*translator.FleetResources {
		return map[string]*translator.FleetResources{"shop/edge": o.Fleets["shop/edge"]}
	}
	if !fuzzFleetsEqual(edge(out), edge(meshOut)) {
		t.Error("Gateway fleet shop/edge differs when namespaces join the mesh")
	}
}

// TestEnvoyAcceptsMeshConfiguration puts each mesh fleet's listeners
// (bound to no socket; routed over RDS, or TCP-proxied to the Service
// port's cluster), the clusters it reaches (with their upstream TLS) and
// each of its route configurations (inline, behind its served listener's
// HTTP filters) to Envoy's `--mode validate`.
func TestEnvoyAcceptsMeshConfiguration(t *testing.T) {
	envoy := translator.EnvoyBinary(t)
	for _, golden := range []string{"mesh-routes", "mesh-grpc-routes"} {
		in, err := manifests.Read([]string{filepath.Join(goldenDir, golden+".in.yaml")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		envoyValidatesMeshFleets(t, envoy, translator.Translate(in, nil, goldenNow, translator.Options{}))
	}
}

func envoyValidatesMeshFleets(t *testing.T, envoy string, out translator.Output) {
	t.Helper()
	clusters := map[string]*clusterv3.Cluster{}
	for _, c := range out.Clusters {
		clusters[c.Name] = c
	}
	if len(meshFleetNames(out)) == 0 {
		t.Fatal("no mesh fleet to validate")
	}
	for _, name := range meshFleetNames(out) {
		fleet := out.Fleets[name]
		static := &bootstrapv3.Bootstrap_StaticResources{Listeners: slices.Clone(fleet.Listeners), Clusters: []*clusterv3.Cluster{xdsCluster()}}
		for _, c := range fleet.Reached {
			if clusters[c] == nil {
				t.Fatalf("%s reaches %s, which is no cluster", name, c)
			}
			static.Clusters = append(static.Clusters, clusters[c])
		}
		for i, served := range fleet.Routes {
			var filters []*hcmv3.HttpFilter
			for _, l := range fleet.Listeners {
				if l.Name == served.Name {
					filters = servedHTTPFilters(t, l)
				}
			}
			rc := proto.Clone(served).(*routev3.RouteConfiguration)
			hcm, err := anypb.New(&hcmv3.HttpConnectionManager{StatPrefix: fmt.Sprintf("probe%d", i),
				RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: rc}, HttpFilters: filters})
			if err != nil {
				t.Fatal(err)
			}
			static.Listeners = append(static.Listeners, &listenerv3.Listener{Name: "probe/" + rc.Name, Address: socket("127.0.0.1", uint32(20000+i)),
				FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{Name: "envoy.filters.network.http_connection_manager", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm}}}}}})
		}
		envoyValidates(t, envoy, name, static)
	}
}

// TestMeshFleetsShareAndKeepTheirProtos: a Service port's listener and
// route configuration that no consumer route changes are one proto in
// every mesh fleet, and an Update hands back the previous pointer of
// every mesh resource it leaves equal, so the snapshots digest and the
// streams send only what the edit changed (issue 39's costs: at 1,000
// Services and 50 fleets an edit cost 7 s without this).
func TestMeshFleetsShareAndKeepTheirProtos(t *testing.T) {
	opts := translator.Options{}
	in := meshInputs(t)
	tr := translator.New()
	first := tr.Translate(in, nil, goldenNow, opts)
	shared := "Mesh/shop/echo-v2/80" // no consumer route: the producer's in both fleets
	caller, shop := first.Fleets["Mesh/caller"], first.Fleets["Mesh/shop"]
	if l, m := namedListener(caller, shared), namedListener(shop, shared); l == nil || l != m {
		t.Errorf("listener %s: %p in Mesh/caller, %p in Mesh/shop, want one proto", shared, l, m)
	}
	if r, s := namedRoutes(caller, shared), namedRoutes(shop, shared); r == nil || r != s {
		t.Errorf("route configuration %s: %p in Mesh/caller, %p in Mesh/shop, want one proto", shared, r, s)
	}

	consumer, edited := editConsumerRoute(in)
	second, ok := tr.Update([]translator.Change{{Kind: translator.KindHTTPRoute, Key: consumer, Object: edited}}, nil, goldenNow, opts)
	if !ok {
		t.Fatal("Update refused a route edit")
	}
	after := second.Fleets["Mesh/caller"]
	changed := 0
	for _, l := range after.Listeners {
		if old := namedListener(caller, l.Name); proto.Equal(old, l) && old != l {
			t.Errorf("listener %s: equal after the edit, but a new pointer", l.Name)
		}
	}
	for _, r := range after.Routes {
		old := namedRoutes(caller, r.Name)
		switch {
		case !proto.Equal(old, r):
			changed++
		case old != r:
			t.Errorf("route configuration %s: equal after the edit, but a new pointer", r.Name)
		}
	}
	if changed == 0 {
		t.Error("no route configuration of Mesh/caller changed after its consumer route did")
	}
	if &after.Reached[0] != &caller.Reached[0] {
		t.Error("Mesh/caller's Reached is a new slice, though the same clusters")
	}
}

func namedListener(f *translator.FleetResources, name string) *listenerv3.Listener {
	for _, l := range f.Listeners {
		if l.Name == name {
			return l
		}
	}
	return nil
}

func namedRoutes(f *translator.FleetResources, name string) *routev3.RouteConfiguration {
	for _, r := range f.Routes {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// editConsumerRoute changes caller/consumer's first path in in, as an
// informer would hand it over, and returns its name and new object.
func editConsumerRoute(in translator.Inputs) (types.NamespacedName, *gwv1.HTTPRoute) {
	consumer := types.NamespacedName{Namespace: "caller", Name: "consumer"}
	var edited *gwv1.HTTPRoute
	for i, r := range in.HTTPRoutes {
		if r.Namespace == consumer.Namespace && r.Name == consumer.Name {
			edited = r.DeepCopy()
			*edited.Spec.Rules[0].Matches[0].Path.Value = "/v3"
			in.HTTPRoutes[i] = edited
		}
	}
	return consumer, edited
}
