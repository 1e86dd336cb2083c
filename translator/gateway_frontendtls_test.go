package translator_test

import (
	"strings"
	"testing"
	"time"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
)

// Each way a caCertificateRef of spec.tls.frontend can be unusable gives
// the listeners of its port the spec's ResolvedRefs reason; with no
// usable ref at all the listener is not accepted (NoValidCACertificate)
// and gets no filter chain, so it is never served without validation.
func TestFrontendValidationReasons(t *testing.T) {
	cases := []struct {
		name, ref, extra string
		resolved, accept string // reasons; "" for True
	}{
		{name: "valid ConfigMap", ref: `{group: "", kind: ConfigMap, name: ca}`},
		{name: "valid Secret", ref: `{group: "", kind: Secret, name: ca-secret}`},
		{name: "missing ConfigMap", ref: `{group: "", kind: ConfigMap, name: gone}`,
			resolved: "InvalidCACertificateRef", accept: "NoValidCACertificate"},
		{name: "no ca.crt key", ref: `{group: "", kind: ConfigMap, name: keyless}`,
			resolved: "InvalidCACertificateRef", accept: "NoValidCACertificate"},
		{name: "not PEM", ref: `{group: "", kind: ConfigMap, name: garbage}`,
			resolved: "InvalidCACertificateRef", accept: "NoValidCACertificate"},
		{name: "Service", ref: `{group: "", kind: Service, name: web}`,
			resolved: "InvalidCACertificateKind", accept: "NoValidCACertificate"},
		{name: "other group", ref: `{group: example.com, kind: ConfigMap, name: ca}`,
			resolved: "InvalidCACertificateKind", accept: "NoValidCACertificate"},
		{name: "other namespace without grant", ref: `{group: "", kind: ConfigMap, name: ca, namespace: bank}`,
			resolved: "RefNotPermitted", accept: "NoValidCACertificate"},
		{name: "other namespace with grant", ref: `{group: "", kind: ConfigMap, name: ca, namespace: bank}`, extra: `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: cas, namespace: bank}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: shop}]
  to: [{group: "", kind: ConfigMap, name: ca}]`},
		{name: "one valid of two", ref: `{group: "", kind: ConfigMap, name: gone}, {group: "", kind: ConfigMap, name: ca}`,
			resolved: "InvalidCACertificateRef"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			docs := frontendDocs(tc.ref)
			if tc.extra != "" {
				docs += "\n---" + tc.extra
			}
			in := gatewayInputs(t, docs)
			in.ConfigMaps = append(in.ConfigMaps,
				caConfigMap("shop", "ca", map[string]string{"ca.crt": testCAPEM(t)}),
				caConfigMap("bank", "ca", map[string]string{"ca.crt": testCAPEM(t)}),
				caConfigMap("shop", "keyless", map[string]string{"other": testCAPEM(t)}),
				caConfigMap("shop", "garbage", map[string]string{"ca.crt": "not a certificate"}))
			in.Secrets = append(in.Secrets, frontendCertSecret(t),
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "ca-secret"}, Data: map[string][]byte{"ca.crt": []byte(testCAPEM(t))}})
			out := translator.Translate(in, nil, time.Now(), translator.Options{})
			st := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "shop", Name: "mtls"}]
			if len(st.Listeners) != 1 {
				t.Fatalf("listeners %+v", st.Listeners)
			}
			conds := st.Listeners[0].Conditions
			check := func(typ, reason, trueReason string) {
				if reason == "" {
					wantCondition(t, tc.name, conds, typ, metav1.ConditionTrue, trueReason)
				} else {
					wantCondition(t, tc.name, conds, typ, metav1.ConditionFalse, reason)
				}
			}
			check("ResolvedRefs", tc.resolved, "ResolvedRefs")
			check("Accepted", tc.accept, "Accepted")
			if tc.resolved != "" && !strings.Contains(conditionMessage(conds, "ResolvedRefs"), "spec.tls.frontend.default.validation.caCertificateRefs[0]") {
				t.Errorf("ResolvedRefs message %q does not name the field", conditionMessage(conds, "ResolvedRefs"))
			}
			chain := httpsChain(out.Fleets["shop/mtls"], "https")
			switch {
			case tc.accept != "" && chain != nil:
				t.Fatalf("a listener with no usable CA has a filter chain")
			case tc.accept == "" && chain == nil:
				t.Fatalf("no filter chain for the listener")
			case tc.accept == "":
				ctx := downstreamContext(t, chain)
				if !ctx.GetRequireClientCertificate().GetValue() {
					t.Errorf("require_client_certificate is not set")
				}
				sds := ctx.GetCommonTlsContext().GetCombinedValidationContext().GetValidationContextSdsSecretConfig().GetName()
				if sds != "FrontendCA/shop/mtls/default" {
					t.Errorf("validation context secret %q", sds)
				}
			}
		})
	}
}

// The golden Gateway's chains, as protos: the default port requires a
// certificate verified against the default bundle; the
// AllowInsecureFallback port asks for one but accepts any or none; a port
// with a valid ref among invalid ones validates against the valid one.
func TestFrontendValidationChains(t *testing.T) {
	in, err := manifests.Unadmitted.Read([]string{goldenDir + "/gateway-frontend-client-validation.in.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	fleet := out.Fleets["shop/mtls"]
	cases := []struct {
		listener, secret string
		require          bool
		trust            tlsv3.CertificateValidationContext_TrustChainVerification
	}{
		{"https", "FrontendCA/shop/mtls/default", true, tlsv3.CertificateValidationContext_VERIFY_TRUST_CHAIN},
		{"fallback", "FrontendCA/shop/mtls/8443", false, tlsv3.CertificateValidationContext_ACCEPT_UNTRUSTED},
		{"partly", "FrontendCA/shop/mtls/9443", true, tlsv3.CertificateValidationContext_VERIFY_TRUST_CHAIN},
	}
	for _, tc := range cases {
		chain := httpsChain(fleet, tc.listener)
		if chain == nil {
			t.Fatalf("%s: no filter chain", tc.listener)
		}
		ctx := downstreamContext(t, chain)
		cv := ctx.GetCommonTlsContext().GetCombinedValidationContext()
		if got := ctx.GetRequireClientCertificate().GetValue(); got != tc.require {
			t.Errorf("%s: require_client_certificate = %v, want %v", tc.listener, got, tc.require)
		}
		if got := cv.GetDefaultValidationContext().GetTrustChainVerification(); got != tc.trust {
			t.Errorf("%s: trust_chain_verification = %v, want %v", tc.listener, got, tc.trust)
		}
		if got := cv.GetValidationContextSdsSecretConfig().GetName(); got != tc.secret {
			t.Errorf("%s: validation context secret %q, want %q", tc.listener, got, tc.secret)
		}
		found := false
		for _, s := range fleet.Secrets {
			if s.Name == tc.secret && strings.Contains(s.GetValidationContext().GetTrustedCa().GetInlineString(), "BEGIN CERTIFICATE") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: the fleet is not served secret %s with the CA", tc.listener, tc.secret)
		}
	}
	for _, l := range []string{"unresolved", "wrong-kind", "no-grant"} {
		if httpsChain(fleet, l) != nil {
			t.Errorf("%s: a listener without a usable CA has a filter chain", l)
		}
	}
}

// The client CA ConfigMap deleted, then created again: each Update equals
// a fresh translation (a ConfigMap a Gateway names runs the Gateway
// rules), and the publisher accepts each (every SDS secret a chain names
// is served).
func TestFrontendValidationFollowsItsConfigMap(t *testing.T) {
	in, err := manifests.Unadmitted.Read([]string{goldenDir + "/gateway-frontend-client-validation.in.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: "shop", Name: "clients-ca"}
	var original *corev1.ConfigMap
	for _, cm := range in.ConfigMaps {
		if cm.Namespace == key.Namespace && cm.Name == key.Name {
			original = cm
		}
	}
	now := time.Now()
	tr := translator.New()
	out := tr.Translate(in, nil, now, translator.Options{})
	p := snapshots.New(snapshots.Options{})
	if _, err := p.Publish(out); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		cm     *corev1.ConfigMap
		served bool // the https listener has a chain
	}{
		{"deleted", nil, false},
		{"created again", original, true},
	}
	for _, step := range steps {
		change := translator.Change{Kind: translator.KindConfigMap, Key: key, Object: step.cm}
		if step.cm == nil {
			change.Object = (*corev1.ConfigMap)(nil)
		}
		replaced := in
		replaced.ConfigMaps = nil
		for _, cm := range in.ConfigMaps {
			if cm != original {
				replaced.ConfigMaps = append(replaced.ConfigMaps, cm)
			}
		}
		if step.cm != nil {
			replaced.ConfigMaps = append(replaced.ConfigMaps, step.cm)
		}
		got := updateMatchesTranslate(t, step.name, tr, p, change, replaced, now)
		if served := httpsChain(got.Fleets["shop/mtls"], "https") != nil; served != step.served {
			t.Errorf("%s: https listener served = %v, want %v", step.name, served, step.served)
		}
	}
}

// A route patch on an HTTPS port with several listeners re-emits its
// virtual hosts and keeps the 421 one: the Update equals a fresh
// translation.
func TestMisdirectedVirtualHostSurvivesRoutePatch(t *testing.T) {
	in, err := manifests.Unadmitted.Read([]string{goldenDir + "/gateway-https-misdirected.in.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tr := translator.New()
	p := snapshots.New(snapshots.Options{})
	if _, err := p.Publish(tr.Translate(in, nil, now, translator.Options{})); err != nil {
		t.Fatal(err)
	}
	var route *gwv1.HTTPRoute
	for _, r := range in.HTTPRoutes {
		if r.Name == "first" {
			route = r.DeepCopy()
		}
	}
	route.Spec.Hostnames = append(route.Spec.Hostnames, "third.example")
	edited := in
	edited.HTTPRoutes = nil
	for _, r := range in.HTTPRoutes {
		if r.Name == "first" {
			r = route
		}
		edited.HTTPRoutes = append(edited.HTTPRoutes, r)
	}
	change := translator.Change{Kind: translator.KindHTTPRoute, Key: types.NamespacedName{Namespace: "shop", Name: "first"}, Object: route}
	got := updateMatchesTranslate(t, "route edited", tr, p, change, edited, now)
	var rc *routev3.RouteConfiguration
	for _, r := range got.Fleets["shop/edge"].Routes {
		if r.Name == "shop/edge/443/https" {
			rc = r
		}
	}
	if rc == nil {
		t.Fatal("no route configuration shop/edge/443/https")
	}
	var hosts []string
	for _, v := range rc.VirtualHosts {
		hosts = append(hosts, v.Name)
	}
	if strings.Join(hosts, ",") != "first.example,third.example,~misdirected" {
		t.Fatalf("virtual hosts %v", hosts)
	}
	last := rc.VirtualHosts[len(rc.VirtualHosts)-1]
	if got := last.Routes[0].GetDirectResponse().GetStatus(); got != 421 {
		t.Fatalf("misdirected virtual host answers %d", got)
	}
	if got := strings.Join(last.Domains, ","); got != "*.wildcard.example,fourth.wildcard.example,second.example" {
		t.Fatalf("misdirected domains %s", got)
	}
}

// updateMatchesTranslate applies change to tr and checks that the Output
// equals a fresh translation of want, the inputs after the change, and
// that p publishes it.
func updateMatchesTranslate(t *testing.T, step string, tr *translator.Translator, p *snapshots.Publisher, change translator.Change, want translator.Inputs, now time.Time) translator.Output {
	t.Helper()
	got, ok := tr.Update([]translator.Change{change}, nil, now, translator.Options{})
	if !ok {
		t.Fatalf("%s: Update refused", step)
	}
	if diff := fuzzOutputDifference(translator.Translate(want, nil, now, translator.Options{}), got); diff != "" {
		t.Fatalf("%s: Update differs from Translate: %s", step, diff)
	}
	if _, err := p.Publish(got); err != nil {
		t.Fatalf("%s: the publisher refuses the Update: %v", step, err)
	}
	return got
}

func frontendDocs(refs string) string {
	return `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: mtls, namespace: shop}
spec:
  gatewayClassName: tlsplane
  tls:
    frontend:
      default:
        validation:
          caCertificateRefs: [` + refs + `]
  listeners:
  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  ports: [{name: http, port: 80, protocol: TCP}]`
}

func caConfigMap(namespace, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}
}

// testCAPEM is the golden case's client CA.
func testCAPEM(t *testing.T) string {
	t.Helper()
	in, err := manifests.Unadmitted.Read([]string{goldenDir + "/gateway-frontend-client-validation.in.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range in.ConfigMaps {
		if cm.Name == "clients-ca" {
			return cm.Data["ca.crt"]
		}
	}
	t.Fatal("no clients-ca ConfigMap in the golden case")
	return ""
}

// frontendCertSecret is the listener certificate, as Secret shop/cert.
func frontendCertSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	in, err := manifests.Unadmitted.Read([]string{goldenDir + "/gateway-frontend-client-validation.in.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range in.Secrets {
		if s.Name == "shop-cert" {
			c := s.DeepCopy()
			c.Name = "cert"
			return c
		}
	}
	t.Fatal("no shop-cert Secret in the golden case")
	return nil
}

func conditionMessage(conds []metav1.Condition, typ string) string {
	for _, c := range conds {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}

// httpsChain is the filter chain of the Gateway listener named listener.
func httpsChain(fleet *translator.FleetResources, listener string) *listenerv3.FilterChain {
	if fleet == nil {
		return nil
	}
	for _, l := range fleet.Listeners {
		for _, c := range l.FilterChains {
			if c.Name == listener {
				return c
			}
		}
	}
	return nil
}

func downstreamContext(t *testing.T, chain *listenerv3.FilterChain) *tlsv3.DownstreamTlsContext {
	t.Helper()
	ctx := &tlsv3.DownstreamTlsContext{}
	if err := chain.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx); err != nil {
		t.Fatal(err)
	}
	return ctx
}
