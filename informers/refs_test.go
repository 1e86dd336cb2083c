package informers

import (
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

func TestRefsOf(t *testing.T) {
	p := &gwv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay"},
		Spec: gwv1.BackendTLSPolicySpec{Validation: gwv1.BackendTLSPolicyValidation{
			CACertificateRefs: []gwv1.LocalObjectReference{
				{Kind: "ConfigMap", Name: "ca"},
				{Kind: "Secret", Name: "ca-secret"},
				{Group: "example.com", Kind: "ConfigMap", Name: "not-core"},
			},
		},
			Options: map[gwv1.AnnotationKey]gwv1.AnnotationValue{"tlsplane.io/clientCertificateRef": "envoy-client"}},
	}
	r := refsOf([]*gwv1.BackendTLSPolicy{p}, nil, nil, nil)
	nn := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "shop", Name: name} }
	if r.configMaps[nn("ca")] != 1 || r.secrets[nn("ca-secret")] != 1 || r.secrets[nn("envoy-client")] != 1 {
		t.Errorf("refs = %+v, want ConfigMap shop/ca, Secrets shop/ca-secret and shop/envoy-client (the client certificate)", r)
	}
	if r.configMaps[nn("not-core")] > 0 || r.configMaps[types.NamespacedName{Namespace: "other", Name: "ca"}] > 0 {
		t.Errorf("refs = %+v: a non-core kind or another namespace must not count", r)
	}
}

func TestRefsOfGatewayCertificates(t *testing.T) {
	other, secret, group := gwv1.Namespace("certs"), gwv1.Kind("Secret"), gwv1.Group("")
	gw := &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "web"},
		Spec: gwv1.GatewaySpec{Listeners: []gwv1.Listener{
			{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 80},
			{Name: "https", Protocol: gwv1.HTTPSProtocolType, Port: 443, TLS: &gwv1.ListenerTLSConfig{
				CertificateRefs: []gwv1.SecretObjectReference{
					{Name: "local"},
					{Group: &group, Kind: &secret, Name: "shared", Namespace: &other},
					{Kind: ptr(gwv1.Kind("ConfigMap")), Name: "not-a-secret"},
				},
			}},
		}},
	}
	r := refsOf(nil, []*gwv1.Gateway{gw}, nil, nil)
	for _, want := range []types.NamespacedName{{Namespace: "edge", Name: "local"}, {Namespace: "certs", Name: "shared"}} {
		if r.secrets[want] != 1 {
			t.Errorf("refs.secrets = %v, want %s", r.secrets, want)
		}
	}
	if len(r.secrets) != 2 || len(r.configMaps) != 0 {
		t.Errorf("refs = %+v, want exactly the two Secrets", r)
	}
}

func ptr[T any](v T) *T { return &v }

func TestRefsOfGatewayBackendClientCertificate(t *testing.T) {
	other := gwv1.Namespace("certs")
	gateway := func(ref gwv1.SecretObjectReference) *gwv1.Gateway {
		return &gwv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "web-" + string(ref.Name)},
			Spec:       gwv1.GatewaySpec{TLS: &gwv1.GatewayTLSConfig{Backend: &gwv1.GatewayBackendTLS{ClientCertificateRef: &ref}}},
		}
	}
	r := refsOf(nil, []*gwv1.Gateway{
		gateway(gwv1.SecretObjectReference{Name: "envoy-client"}),
		gateway(gwv1.SecretObjectReference{Name: "shared-client", Namespace: &other}),
		gateway(gwv1.SecretObjectReference{Kind: ptr(gwv1.Kind("ConfigMap")), Name: "not-a-secret"}),
	}, nil, nil)
	want := map[types.NamespacedName]bool{{Namespace: "edge", Name: "envoy-client"}: true, {Namespace: "certs", Name: "shared-client"}: true}
	if len(r.secrets) != len(want) {
		t.Errorf("refs.secrets = %v, want %v", r.secrets, want)
	}
	for nn := range want {
		if r.secrets[nn] != 1 {
			t.Errorf("refs.secrets = %v, want %s (a Gateway's backend client certificate)", r.secrets, nn)
		}
	}
}

// TestRefsOfListenerSets: a ListenerSet's listener certificates are
// read, in its own namespace unless the ref names another.
func TestRefsOfListenerSets(t *testing.T) {
	other := gwv1.Namespace("certs")
	set := &gwv1.ListenerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "extra"},
		Spec: gwv1.ListenerSetSpec{Listeners: []gwv1.ListenerEntry{
			{Name: "a", TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{{Name: "own"}, {Name: "shared", Namespace: &other}}}},
			{Name: "b", TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{{Kind: ptr(gwv1.Kind("ConfigMap")), Name: "not-a-secret"}}}},
			{Name: "c"},
		}},
	}
	r := refsOf(nil, nil, []*gwv1.ListenerSet{set}, nil)
	want := map[types.NamespacedName]int{{Namespace: "team", Name: "own"}: 1, {Namespace: "certs", Name: "shared"}: 1}
	if !maps.Equal(r.secrets, want) {
		t.Errorf("refs.secrets = %v, want %v", r.secrets, want)
	}
	r.release(kindListenerSet, set, nil)
	if len(r.secrets) != 0 {
		t.Errorf("after release: refs.secrets = %v, want none", r.secrets)
	}
}

// TestRefsCountFlips: an edit holds its object's references in place of
// its old ones; only a ConfigMap that gains its first reference or loses
// its last flips, one both hold never does, and an event seen twice (or
// an object the first listing counted already) counts once.
func TestRefsCountFlips(t *testing.T) {
	pol := func(name string, cas ...string) *gwv1.BackendTLSPolicy {
		p := &gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}
		for _, ca := range cas {
			p.Spec.Validation.CACertificateRefs = append(p.Spec.Validation.CACertificateRefs, gwv1.LocalObjectReference{Kind: "ConfigMap", Name: gwv1.ObjectName(ca)})
		}
		return p
	}
	shop := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "shop", Name: name} }
	r := refsOf([]*gwv1.BackendTLSPolicy{pol("a", "shared", "old"), pol("b", "shared")}, nil, nil, nil)
	var flips []string
	flipped := func(_ translator.Kind, nn types.NamespacedName) { flips = append(flips, nn.Name) }
	r.hold(kindPolicy, pol("a", "shared", "new"), flipped)
	r.hold(kindPolicy, pol("a", "shared", "new"), flipped) // the same event twice
	r.hold(kindPolicy, pol("b", "shared"), flipped)        // listed, then its add event
	if len(flips) != 2 || flips[0] != "new" || flips[1] != "old" {
		t.Errorf("flips = %v, want [new old]", flips)
	}
	if r.configMaps[shop("shared")] != 2 || r.referenced(translator.KindConfigMap, shop("old")) {
		t.Errorf("refs = %v", r.configMaps)
	}
	r.release(kindPolicy, pol("a"), nil)
	r.release(kindPolicy, pol("b"), nil)
	if len(r.configMaps) != 0 || len(r.held) != 0 {
		t.Errorf("refs after deleting every policy = %v, %v", r.configMaps, r.held)
	}
}

// A Gateway's spec.tls.frontend client CAs (default and per port, of core
// kinds, in its namespace or another) are referenced: their changes are
// translated.
func TestRefsOfGatewayFrontendCAs(t *testing.T) {
	other := gwv1.Namespace("cas")
	gw := &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "web"},
		Spec: gwv1.GatewaySpec{TLS: &gwv1.GatewayTLSConfig{Frontend: &gwv1.FrontendTLSConfig{
			Default: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{
				{Kind: "ConfigMap", Name: "clients"},
				{Kind: "Service", Name: "not-a-ca"},
			}}},
			PerPort: []gwv1.TLSPortConfig{{Port: 8443, TLS: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{
				{Kind: "ConfigMap", Name: "partners", Namespace: &other},
				{Kind: "Secret", Name: "partners-secret"},
			}}}}},
		}}},
	}
	r := refsOf(nil, []*gwv1.Gateway{gw}, nil, nil)
	if r.configMaps[types.NamespacedName{Namespace: "edge", Name: "clients"}] != 1 ||
		r.configMaps[types.NamespacedName{Namespace: "cas", Name: "partners"}] != 1 ||
		r.secrets[types.NamespacedName{Namespace: "edge", Name: "partners-secret"}] != 1 {
		t.Errorf("refs = %+v, want ConfigMaps edge/clients and cas/partners, Secret edge/partners-secret", r)
	}
	if len(r.configMaps) != 2 || len(r.secrets) != 1 {
		t.Errorf("refs = %+v: a Service must not count", r)
	}
}
