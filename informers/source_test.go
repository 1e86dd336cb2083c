package informers

import (
	"context"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlsplane/tlsplane/translator"
)

// resources is a discovery answer: group version → resource names.
func resources(gvs map[string][]string) []*metav1.APIResourceList {
	var out []*metav1.APIResourceList
	for gv, names := range gvs {
		l := &metav1.APIResourceList{GroupVersion: gv}
		for _, n := range names {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: n})
		}
		out = append(out, l)
	}
	return out
}

// runSource starts a Source over fake clients until the test ends and
// returns it once synced, with a counter of change signals.
func runSource(t *testing.T, kube *kubefake.Clientset, gw *gwfake.Clientset, served map[string][]string) (*Source, *atomic.Int32) {
	t.Helper()
	kube.Discovery().(*fakediscovery.FakeDiscovery).Resources = resources(served)
	src, err := New(Options{Client: kube, Gateway: gw})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var changes atomic.Int32
	go func() { done <- src.Run(ctx, func() { changes.Add(1) }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-src.Synced():
	case <-time.After(10 * time.Second):
		t.Fatal("source never synced")
	}
	return src, &changes
}

func TestSourceWithoutGatewayCRDsServesPolicies(t *testing.T) {
	pol := &gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay"}}
	src, _ := runSource(t, kubefake.NewClientset(), gwfake.NewClientset(pol),
		map[string][]string{"gateway.networking.k8s.io/v1": {"backendtlspolicies"}})
	in := src.Inputs()
	if len(in.Policies) != 1 {
		t.Fatalf("policies = %d, want 1", len(in.Policies))
	}
	if in.GatewayClasses != nil || in.Gateways != nil || in.HTTPRoutes != nil || in.GRPCRoutes != nil || in.TLSRoutes != nil || in.TCPRoutes != nil || in.UDPRoutes != nil ||
		in.ReferenceGrants != nil || in.Namespaces != nil {
		t.Errorf("Gateway API inputs = %+v, want none when their CRDs are not installed", in)
	}
	if _, ok := src.Gateway(nameOfAny(pol)); ok {
		t.Error("Gateway lookup found something without the Gateway CRD")
	}
	if _, ok := cachedRoute[*gwv1.GRPCRoute](src, translator.KindGRPCRoute, nameOfAny(pol)); ok {
		t.Error("GRPCRoute lookup found something without the GRPCRoute CRD")
	}
	if _, ok := cachedRoute[*gwv1.TLSRoute](src, translator.KindTLSRoute, nameOfAny(pol)); ok {
		t.Error("TLSRoute lookup found something without the TLSRoute CRD")
	}
	if _, ok := cachedRoute[*gwv1.TCPRoute](src, translator.KindTCPRoute, nameOfAny(pol)); ok {
		t.Error("TCPRoute lookup found something without the TCPRoute CRD")
	}
}

func TestSourceReadsGatewayAPIKinds(t *testing.T) {
	from := gwv1.Namespace("edge")
	class := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "tlsplane"}, Spec: gwv1.GatewayClassSpec{ControllerName: "tlsplane.io/controller"}}
	gw := &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "web", Annotations: map[string]string{lastApplied: "{copy}"}},
		Spec: gwv1.GatewaySpec{GatewayClassName: "tlsplane", Listeners: []gwv1.Listener{{
			Name: "https", Protocol: gwv1.HTTPSProtocolType, Port: 443,
			TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{{Name: "web-cert"}}},
		}}},
	}
	route := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "shop"}}
	grpcRoute := &gwv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "checkout"},
		Spec: gwv1.GRPCRouteSpec{Hostnames: []gwv1.Hostname{"grpc.shop.example"}}}
	tlsRoute := &gwv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "vault"},
		Spec: gwv1.TLSRouteSpec{Hostnames: []gwv1.Hostname{"vault.shop.example"}}}
	tcpRoute := &gwv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "db"},
		Spec: gwv1.TCPRouteSpec{Rules: []gwv1.TCPRouteRule{{BackendRefs: []gwv1.BackendRef{{BackendObjectReference: gwv1.BackendObjectReference{Name: "postgres"}}}}}}}
	udpRoute := &gwv1.UDPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "dns"},
		Spec: gwv1.UDPRouteSpec{Rules: []gwv1.UDPRouteRule{{BackendRefs: []gwv1.BackendRef{{BackendObjectReference: gwv1.BackendObjectReference{Name: "coredns"}}}}}}}
	grant := &gwv1beta1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "from-edge"},
		Spec: gwv1beta1.ReferenceGrantSpec{
			From: []gwv1beta1.ReferenceGrantFrom{{Group: gwv1.GroupName, Kind: "HTTPRoute", Namespace: from}},
			To:   []gwv1beta1.ReferenceGrantTo{{Kind: "Service"}},
		},
	}
	cert := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "web-cert"},
		Data: map[string][]byte{"tls.crt": []byte("CHAIN"), "tls.key": []byte("KEY"), "unread": []byte("X")}}
	unrelated := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "db"}, Data: map[string][]byte{"password": []byte("x")}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "edge", Labels: map[string]string{"team": "edge"}}}

	kube := kubefake.NewClientset(cert, unrelated, ns)
	// NewClientset's tracker knows no Gateway; NewSimpleClientset's does
	// not list one given to it, only one created through the client.
	gwc := gwfake.NewSimpleClientset(class, route, grpcRoute, tlsRoute, tcpRoute, udpRoute, grant)
	if _, err := gwc.GatewayV1().Gateways("edge").Create(context.Background(), gw, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	src, changes := runSource(t, kube, gwc, map[string][]string{
		// ReferenceGrant served as v1beta1 only, as before Gateway API v1.2.
		"gateway.networking.k8s.io/v1":      {"backendtlspolicies", "gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes"},
		"gateway.networking.k8s.io/v1beta1": {"referencegrants"},
	})

	in := src.Inputs()
	if len(in.GatewayClasses) != 1 || len(in.Gateways) != 1 || len(in.HTTPRoutes) != 1 || len(in.GRPCRoutes) != 1 ||
		len(in.TLSRoutes) != 1 || len(in.TCPRoutes) != 1 || len(in.UDPRoutes) != 1 || len(in.ReferenceGrants) != 1 || len(in.Namespaces) != 1 {
		t.Fatalf("inputs: %d classes, %d gateways, %d HTTP routes, %d gRPC routes, %d TLS routes, %d TCP routes, %d UDP routes, %d grants, %d namespaces; want 1 each",
			len(in.GatewayClasses), len(in.Gateways), len(in.HTTPRoutes), len(in.GRPCRoutes), len(in.TLSRoutes), len(in.TCPRoutes),
			len(in.UDPRoutes), len(in.ReferenceGrants), len(in.Namespaces))
	}
	if in.ReferenceGrants[0].Spec.From[0].Namespace != from {
		t.Errorf("v1beta1 ReferenceGrant read as %+v", in.ReferenceGrants[0].Spec)
	}
	if in.Gateways[0].Annotations[lastApplied] != "" {
		t.Error("Gateway kept its last-applied copy: the transform did not run")
	}
	if len(in.Secrets) != 1 || in.Secrets[0].Name != "web-cert" {
		t.Fatalf("secrets = %v, want only the Gateway's certificate", in.Secrets)
	}
	if d := in.Secrets[0].Data; string(d["tls.key"]) != "KEY" || string(d["tls.crt"]) != "CHAIN" || d["unread"] != nil {
		t.Errorf("certificate data = %q, want tls.crt and tls.key only", d)
	}
	if c, ok := src.GatewayClass("tlsplane"); !ok || c.Spec.ControllerName != "tlsplane.io/controller" {
		t.Errorf("GatewayClass lookup = %v, %v", c, ok)
	}
	if _, ok := cachedRoute[*gwv1.HTTPRoute](src, translator.KindHTTPRoute, nameOfAny(route)); !ok {
		t.Error("HTTPRoute lookup found nothing")
	}
	if r, ok := cachedRoute[*gwv1.GRPCRoute](src, translator.KindGRPCRoute, nameOfAny(grpcRoute)); !ok || r.Spec.Hostnames[0] != "grpc.shop.example" {
		t.Errorf("GRPCRoute lookup = %v, %v", r, ok)
	}
	if r, ok := cachedRoute[*gwv1.TLSRoute](src, translator.KindTLSRoute, nameOfAny(tlsRoute)); !ok || r.Spec.Hostnames[0] != "vault.shop.example" {
		t.Errorf("TLSRoute lookup = %v, %v", r, ok)
	}
	if r, ok := cachedRoute[*gwv1.TCPRoute](src, translator.KindTCPRoute, nameOfAny(tcpRoute)); !ok || r.Spec.Rules[0].BackendRefs[0].Name != "postgres" {
		t.Errorf("TCPRoute lookup = %v, %v", r, ok)
	}
	if _, ok := cachedRoute[*gwv1.TCPRoute](src, translator.KindTCPRoute, nameOfAny(tlsRoute)); ok {
		t.Error("TCPRoute lookup found the TLSRoute of its name")
	}
	if r, ok := cachedRoute[*gwv1.UDPRoute](src, translator.KindUDPRoute, nameOfAny(udpRoute)); !ok || r.Spec.Rules[0].BackendRefs[0].Name != "coredns" {
		t.Errorf("UDPRoute lookup = %v, %v", r, ok)
	}

	// An unreferenced Secret's change is ignored; the certificate's is not.
	ctx := context.Background()
	waitChanges := func(want int32, what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for changes.Load() < want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := changes.Load(); got != want {
			t.Fatalf("after %s: %d change signals, want %d", what, got, want)
		}
	}
	unrelated.Data["password"] = []byte("y")
	if _, err := kube.CoreV1().Secrets("edge").Update(ctx, unrelated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cert.Data["tls.key"] = []byte("NEWKEY")
	if _, err := kube.CoreV1().Secrets("edge").Update(ctx, cert, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitChanges(1, "the certificate's update")
	// A Namespace's label change matters for allowedRoutes selectors.
	ns.Labels["team"] = "web"
	if _, err := kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitChanges(2, "the namespace's label change")
	if got := src.Inputs().Namespaces[0].Labels["team"]; got != "web" {
		t.Errorf("namespace label = %q, want web", got)
	}
	// A route's edit (err, its update's) is translated, and named in
	// Changes.
	edited := func(signals int32, kind translator.Kind, route metav1.Object, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		waitChanges(signals, "the "+string(kind)+"'s update")
		if got := src.Changes().Objects; len(got) != 1 || got[0].Kind != kind || got[0].Key != nameOfAny(route) {
			t.Errorf("changes = %+v, want the %s %s", got, kind, nameOfAny(route))
		}
	}
	src.Changes() // the first call is a resync
	grpcRoute.Spec.Hostnames = []gwv1.Hostname{"rpc.shop.example"}
	_, err := gwc.GatewayV1().GRPCRoutes("edge").Update(ctx, grpcRoute, metav1.UpdateOptions{})
	edited(3, translator.KindGRPCRoute, grpcRoute, err)
	if got := src.Inputs().GRPCRoutes[0].Spec.Hostnames[0]; got != "rpc.shop.example" {
		t.Errorf("GRPCRoute hostname = %q, want rpc.shop.example", got)
	}
	tlsRoute.Spec.Hostnames = []gwv1.Hostname{"secrets.shop.example"}
	_, err = gwc.GatewayV1().TLSRoutes("edge").Update(ctx, tlsRoute, metav1.UpdateOptions{})
	edited(4, translator.KindTLSRoute, tlsRoute, err)
	if got := src.Inputs().TLSRoutes[0].Spec.Hostnames[0]; got != "secrets.shop.example" {
		t.Errorf("TLSRoute hostname = %q, want secrets.shop.example", got)
	}
	tcpRoute.Spec.Rules[0].BackendRefs[0].Name = "mysql"
	_, err = gwc.GatewayV1().TCPRoutes("edge").Update(ctx, tcpRoute, metav1.UpdateOptions{})
	edited(5, translator.KindTCPRoute, tcpRoute, err)
	if got := src.Inputs().TCPRoutes[0].Spec.Rules[0].BackendRefs[0].Name; got != "mysql" {
		t.Errorf("TCPRoute backend = %q, want mysql", got)
	}
	if !slices.ContainsFunc(src.Inputs().Secrets, func(s *corev1.Secret) bool { return string(s.Data["tls.key"]) == "NEWKEY" }) {
		t.Error("the certificate's new key is not in the inputs")
	}
}

// Each optional kind is watched only when its CRD is served, and a
// missing CRD is named: a cluster with HTTPRoute's but not GRPCRoute's,
// TLSRoute's, TCPRoute's or ListenerSet's keeps being served.
func TestDiscoverWhichOptionalKindsAreServed(t *testing.T) {
	for _, c := range []struct {
		v1          []string
		want        served
		wantMissing []string
	}{
		{[]string{"backendtlspolicies", "gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "listenersets", "udproutes", "referencegrants"},
			served{gatewayClasses: true, gateways: true, listenerSets: true, referenceGrants: "v1", routes: map[translator.Kind]bool{translator.KindHTTPRoute: true, translator.KindGRPCRoute: true, translator.KindTLSRoute: true, translator.KindTCPRoute: true, translator.KindUDPRoute: true}}, nil},
		{[]string{"backendtlspolicies", "gatewayclasses", "gateways", "httproutes", "tlsroutes", "tcproutes", "listenersets", "udproutes", "referencegrants"},
			served{gatewayClasses: true, gateways: true, listenerSets: true, referenceGrants: "v1", routes: map[translator.Kind]bool{translator.KindHTTPRoute: true, translator.KindTLSRoute: true, translator.KindTCPRoute: true, translator.KindUDPRoute: true}}, []string{"grpcroutes.gateway.networking.k8s.io"}},
		{[]string{"backendtlspolicies", "gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "listenersets", "udproutes", "referencegrants"},
			served{gatewayClasses: true, gateways: true, listenerSets: true, referenceGrants: "v1", routes: map[translator.Kind]bool{translator.KindHTTPRoute: true, translator.KindGRPCRoute: true, translator.KindTLSRoute: true, translator.KindUDPRoute: true}}, []string{"tcproutes.gateway.networking.k8s.io"}},
		{[]string{"backendtlspolicies", "gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes", "referencegrants"},
			served{gatewayClasses: true, gateways: true, referenceGrants: "v1", routes: map[translator.Kind]bool{translator.KindHTTPRoute: true, translator.KindGRPCRoute: true, translator.KindTLSRoute: true, translator.KindTCPRoute: true, translator.KindUDPRoute: true}}, []string{crdListenerSets}},
		{[]string{"backendtlspolicies", "gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "listenersets", "referencegrants"},
			served{gatewayClasses: true, gateways: true, listenerSets: true, referenceGrants: "v1", routes: map[translator.Kind]bool{translator.KindHTTPRoute: true, translator.KindGRPCRoute: true, translator.KindTLSRoute: true, translator.KindTCPRoute: true}}, []string{"udproutes.gateway.networking.k8s.io"}},
		{[]string{"backendtlspolicies", "grpcroutes", "tcproutes"},
			served{routes: map[translator.Kind]bool{translator.KindGRPCRoute: true, translator.KindTCPRoute: true}}, []string{crdGatewayClasses, crdGateways, crdListenerSets, "httproutes.gateway.networking.k8s.io", "tlsroutes.gateway.networking.k8s.io", "udproutes.gateway.networking.k8s.io", crdReferenceGrants}},
	} {
		kube := kubefake.NewClientset()
		// The X-kinds served, so that only c's are missing
		// (TestDiscoverXBackendKinds tries them).
		kube.Discovery().(*fakediscovery.FakeDiscovery).Resources = resources(map[string][]string{"gateway.networking.k8s.io/v1": c.v1, xGroupVersion: xResources})
		c.want.xBackends, c.want.xBackendTrafficPolicies, c.want.xMeshes = true, true, true
		got, err := discover(kube.Discovery())
		if err != nil {
			t.Fatalf("%v: %v", c.v1, err)
		}
		if !reflect.DeepEqual(got, c.want) || !slices.Equal(got.missing(), c.wantMissing) {
			t.Errorf("%v: served %+v, missing %v; want %+v, %v", c.v1, got, got.missing(), c.want, c.wantMissing)
		}
	}
}

// cachedRoute is src.Route, of the route kind's type.
func cachedRoute[T any](src *Source, kind translator.Kind, nn types.NamespacedName) (T, bool) {
	o, ok := src.Route(kind, nn)
	r, isT := o.(T)
	return r, ok && isT
}
