package xbackend_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/translatortest"
	"github.com/tlsplane/tlsplane/translator/xbackend"
)

var cfg = xbackend.Config{SystemCABundlePath: "/etc/ssl/certs/ca-certificates.crt"}

func backend(mutate func(*gwxv1a1.XBackend)) *gwxv1a1.XBackend {
	x := &gwxv1a1.XBackend{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay", Generation: 3},
		Spec: gwxv1a1.BackendSpec{
			Type:             gwxv1a1.BackendTypeExternalHostname,
			ExternalHostname: &gwxv1a1.ExternalHostnameBackend{Hostname: "api.pay.example"},
			Port:             gwxv1a1.BackendPort{Port: 443},
		},
	}
	if mutate != nil {
		mutate(x)
	}
	return x
}

func withTLS(mode gwxv1a1.BackendTLSMode, mutate func(*gwxv1a1.BackendTLS)) func(*gwxv1a1.XBackend) {
	return func(x *gwxv1a1.XBackend) {
		x.Spec.TLS = &gwxv1a1.BackendTLS{Mode: mode}
		if mutate != nil {
			mutate(x.Spec.TLS)
		}
	}
}

func caRefs(names ...string) func(*gwxv1a1.BackendTLS) {
	return func(t *gwxv1a1.BackendTLS) {
		for _, n := range names {
			t.Validation.CACertificateRefs = append(t.Validation.CACertificateRefs, gwv1.LocalObjectReference{Kind: "ConfigMap", Name: gwv1.ObjectName(n)})
		}
	}
}

func clientCert(ns, name string) func(*gwxv1a1.BackendTLS) {
	return func(t *gwxv1a1.BackendTLS) {
		t.ClientCertificateRef = &gwv1.SecretObjectReference{Name: gwv1.ObjectName(name)}
		if ns != "" {
			n := gwv1.Namespace(ns)
			t.ClientCertificateRef.Namespace = &n
		}
	}
}

func protocol(p gwxv1a1.BackendProtocol) func(*gwxv1a1.XBackend) {
	return func(x *gwxv1a1.XBackend) { x.Spec.Protocol = &p }
}

func both(fs ...func(*gwxv1a1.XBackend)) func(*gwxv1a1.XBackend) {
	return func(x *gwxv1a1.XBackend) {
		for _, f := range fs {
			f(x)
		}
	}
}

func index(t *testing.T) *input.Index {
	badKey := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bad-key"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: []byte("not a certificate"), corev1.TLSPrivateKeyKey: []byte("not a key")}}
	opaque := translatortest.TLSSecret(t, "shop", "opaque", "client.shop.example")
	opaque.Type = corev1.SecretTypeOpaque
	return input.NewIndex(input.Inputs{
		ConfigMaps: []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "ca"}, Data: map[string]string{"ca.crt": translatortest.CA}}},
		Secrets:    []*corev1.Secret{translatortest.TLSSecret(t, "shop", "client", "client.shop.example"), badKey, opaque},
	})
}

// TestJudge: each rule of D1-D7 a verdict decides, with the condition
// reasons and the message naming the object, the field and the value.
func TestJudge(t *testing.T) {
	ix := index(t)
	cases := []struct {
		name   string
		mutate func(*gwxv1a1.XBackend)
		// reject, resolved: the reasons ("" accepted, resolved); message
		// a part of the Accepted (or ResolvedRefs) message.
		reject, resolved, message string
		annotations               map[string]string
	}{
		{name: "tls absent is plaintext", message: "XBackend shop/pay: sent to api.pay.example:443 in plaintext (spec.tls absent)"},
		{name: "mode None is plaintext", mutate: withTLS(gwxv1a1.BackendTLSModeNone, nil), message: "in plaintext (spec.tls.mode None)"},
		{name: "ServerOnly with a CA ConfigMap", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, caRefs("ca")), message: "verified against ConfigMap shop/ca"},
		{name: "ServerOnly System", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, func(t *gwxv1a1.BackendTLS) {
			s := gwv1.WellKnownCACertificatesSystem
			t.Validation.WellKnownCACertificates = &s
		}), message: "verified against the system CA bundle"},
		{name: "ServerOnly without validation trusts the system", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, nil), message: "(SNI api.pay.example), verified against the system CA bundle"},
		{name: "ClientAndServer", mutate: withTLS(gwxv1a1.BackendTLSModeClientAndServer, clientCert("", "client")), message: "presenting the client certificate of Client/shop/client"},
		{name: "a missing CA", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, caRefs("absent")), reject: "NoValidCACertificate", resolved: "InvalidCACertificateRef",
			message: "XBackend shop/pay: no valid CA certificate: spec.tls.validation.caCertificateRefs[0]: ConfigMap shop/absent does not exist"},
		{name: "one CA of two missing", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, caRefs("ca", "absent")), resolved: "InvalidCACertificateRef",
			message: "XBackend shop/pay: spec.tls.validation.caCertificateRefs[1]: ConfigMap shop/absent does not exist"},
		{name: "a CA ref of another kind", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, func(t *gwxv1a1.BackendTLS) {
			t.Validation.CACertificateRefs = []gwv1.LocalObjectReference{{Group: "example.com", Kind: "Vault", Name: "ca"}}
		}), reject: "NoValidCACertificate", resolved: "InvalidKind", message: `group "example.com" kind "Vault" is not supported`},
		{name: "System beside refs", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, func(t *gwxv1a1.BackendTLS) {
			caRefs("ca")(t)
			s := gwv1.WellKnownCACertificatesSystem
			t.Validation.WellKnownCACertificates = &s
		}), reject: "Invalid", message: "spec.tls.validation: caCertificateRefs and wellKnownCACertificates are mutually exclusive"},
		{name: "ClientAndServer without a certificate", mutate: withTLS(gwxv1a1.BackendTLSModeClientAndServer, nil), reject: "Invalid",
			message: `spec.tls.clientCertificateRef: required with spec.tls.mode "ClientAndServer"`},
		{name: "a client certificate missing", mutate: withTLS(gwxv1a1.BackendTLSModeClientAndServer, clientCert("", "absent")), reject: "Invalid", resolved: "InvalidCertificateRef",
			message: "spec.tls.clientCertificateRef: Secret shop/absent does not exist"},
		{name: "a bad client key", mutate: withTLS(gwxv1a1.BackendTLSModeClientAndServer, clientCert("", "bad-key")), reject: "Invalid", resolved: "InvalidCertificateRef",
			message: "spec.tls.clientCertificateRef: Secret shop/bad-key: "},
		{name: "a client certificate not kubernetes.io/tls", mutate: withTLS(gwxv1a1.BackendTLSModeClientAndServer, clientCert("", "opaque")), reject: "Invalid", resolved: "InvalidCertificateRef",
			message: `Secret shop/opaque is of type "Opaque"`},
		{name: "a client certificate in another namespace", mutate: withTLS(gwxv1a1.BackendTLSModeClientAndServer, clientCert("bank", "client")), reject: "Invalid", resolved: "RefNotPermitted",
			message: "spec.tls.clientCertificateRef: Secret bank/client is in another namespace"},
		{name: "a client certificate of another kind", mutate: withTLS(gwxv1a1.BackendTLSModeClientAndServer, func(t *gwxv1a1.BackendTLS) {
			k := gwv1.Kind("ConfigMap")
			t.ClientCertificateRef = &gwv1.SecretObjectReference{Kind: &k, Name: "client"}
		}), reject: "Invalid", resolved: "InvalidKind", message: `spec.tls.clientCertificateRef: group "" kind "ConfigMap"`},
		{name: "a client certificate with ServerOnly", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, clientCert("", "client")), reject: "Invalid",
			message: `spec.tls.clientCertificateRef: set, but spec.tls.mode is "ServerOnly"`},
		{name: "a .cluster.local hostname", mutate: func(x *gwxv1a1.XBackend) { x.Spec.ExternalHostname.Hostname = "pay.shop.svc.cluster.local" }, reject: "Invalid",
			message: `XBackend shop/pay: spec.externalHostname.hostname: "pay.shop.svc.cluster.local" is inside the cluster`},
		{name: "a .cluster.local. hostname", mutate: func(x *gwxv1a1.XBackend) { x.Spec.ExternalHostname.Hostname = "Pay.Cluster.Local." }, reject: "Invalid", message: "is inside the cluster"},
		{name: "localhost", mutate: func(x *gwxv1a1.XBackend) { x.Spec.ExternalHostname.Hostname = "LocalHost." }, reject: "Invalid",
			message: `spec.externalHostname.hostname: "LocalHost." is a loopback name`},
		{name: "a name under localhost", mutate: func(x *gwxv1a1.XBackend) { x.Spec.ExternalHostname.Hostname = "admin.envoy.localhost" }, reject: "Invalid", message: "is a loopback name"},
		{name: "an IPv4 address", mutate: func(x *gwxv1a1.XBackend) { x.Spec.ExternalHostname.Hostname = "192.0.2.1" }, reject: "Invalid", message: `"192.0.2.1" is an IP address`},
		{name: "an IPv6 address", mutate: func(x *gwxv1a1.XBackend) { x.Spec.ExternalHostname.Hostname = "2001:db8::1" }, reject: "Invalid", message: "is an IP address"},
		{name: "no hostname", mutate: func(x *gwxv1a1.XBackend) { x.Spec.ExternalHostname = nil }, reject: "Invalid", message: "spec.externalHostname.hostname: required"},
		{name: "another type", mutate: func(x *gwxv1a1.XBackend) { x.Spec.Type = "KubernetesService" }, reject: "Invalid", message: `spec.type: "KubernetesService" is not supported`},
		{name: "no port", mutate: func(x *gwxv1a1.XBackend) { x.Spec.Port.Port = 0 }, reject: "Invalid", message: "spec.port.port: 0 is not a port"},
		{name: "H2C with TLS", mutate: both(protocol(gwxv1a1.BackendProtocolH2C), withTLS(gwxv1a1.BackendTLSModeServerOnly, nil)), reject: "Invalid",
			message: `spec.protocol: "H2C" is plaintext HTTP/2, but spec.tls.mode is "ServerOnly"`},
		{name: "H2C plaintext", mutate: protocol(gwxv1a1.BackendProtocolH2C), message: "in plaintext"},
		{name: "an unknown protocol", mutate: protocol("QUIC"), reject: "Invalid", message: `spec.protocol: "QUIC"`},
		{name: "an unknown mode", mutate: withTLS("Mutual", nil), reject: "Invalid", message: `spec.tls.mode: "Mutual"`},
		{name: "an option", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, nil), annotations: map[string]string{"tlsplane.io/minimumVersion": "TLSv1_3", "kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 5000)},
			message: "over TLS"},
		{name: "a bad option", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, nil), annotations: map[string]string{"tlsplane.io/minimumVersion": "SSLv3"}, reject: "Invalid",
			message: "XBackend shop/pay: metadata.annotations: option tlsplane.io/minimumVersion: "},
		{name: "the client certificate option", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, nil), annotations: map[string]string{"tlsplane.io/clientCertificateRef": "client"}, reject: "Invalid",
			message: "spec.tls.clientCertificateRef"},
		{name: "the ALPN option", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, nil), annotations: map[string]string{"tlsplane.io/alpnProtocols": "h2"}, reject: "Invalid",
			message: "an XBackend's ALPN follows spec.protocol"},
		{name: "insecureSkipVerify without the flag", mutate: withTLS(gwxv1a1.BackendTLSModeServerOnly, nil), annotations: map[string]string{"tlsplane.io/insecureSkipVerify": "true"}, reject: "Invalid",
			message: "insecureSkipVerify"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := backend(tc.mutate)
			x.Annotations = tc.annotations
			v := xbackend.Judge(x, ix, cfg, backendtls.Memos{})
			if v.RejectReason != tc.reject {
				t.Errorf("Accepted reason %q (%s), want %q", v.RejectReason, v.RejectMessage, tc.reject)
			}
			if v.ResolvedReason != tc.resolved {
				t.Errorf("ResolvedRefs reason %q (%s), want %q", v.ResolvedReason, v.ResolvedMessage, tc.resolved)
			}
			conds := v.Conditions()
			if msg := conds[0].Message + " | " + conds[1].Message; !strings.Contains(msg, tc.message) {
				t.Errorf("messages %q, want %q in them", msg, tc.message)
			}
			if !strings.HasPrefix(conds[0].Message, "XBackend shop/pay: ") {
				t.Errorf("Accepted message %q does not name the XBackend first", conds[0].Message)
			}
			if v.Accepted() != (len(v.Clusters()) > 0) {
				t.Errorf("accepted %v with %d clusters", v.Accepted(), len(v.Clusters()))
			}
		})
	}
}

// TestTLSPlan: SNI, SANs, CA and client certificate secrets of each mode.
func TestTLSPlan(t *testing.T) {
	ix := index(t)
	v := xbackend.Judge(backend(withTLS(gwxv1a1.BackendTLSModeClientAndServer, func(b *gwxv1a1.BackendTLS) {
		caRefs("ca")(b)
		clientCert("", "client")(b)
		b.Validation.Hostname = "pay.internal.example"
		b.Validation.SubjectAltNames = []gwv1.SubjectAltName{{Type: gwv1.URISubjectAltNameType, URI: "spiffe://pay.example/api"}}
	})), ix, cfg, backendtls.Memos{})
	if !v.Accepted() {
		t.Fatal(v.RejectMessage)
	}
	want := plan.UpstreamTLS{SNI: "pay.internal.example", CASecret: "CA/shop/configmap/ca", ClientCertificate: "Client/shop/client",
		SANs: []plan.SANMatch{{Kind: plan.SANURI, Value: "spiffe://pay.example/api"}}}
	got := *v.TLS
	got.Params = plan.UpstreamTLS{}.Params
	if got.SNI != want.SNI || got.CASecret != want.CASecret || got.ClientCertificate != want.ClientCertificate || len(got.SANs) != 1 || got.SANs[0] != want.SANs[0] {
		t.Errorf("TLS %+v, want %+v", got, want)
	}
	if v.CA == nil || v.CA.SecretName != "CA/shop/configmap/ca" || v.ClientCert == nil || v.ClientCert.SecretName != "Client/shop/client" {
		t.Errorf("CA %+v, client certificate %+v", v.CA, v.ClientCert)
	}

	// Validation left out: the system bundle, the hostname as SNI and SAN.
	v = xbackend.Judge(backend(withTLS(gwxv1a1.BackendTLSModeServerOnly, nil)), ix, cfg, backendtls.Memos{})
	if v.TLS == nil || v.TLS.SNI != "api.pay.example" || v.TLS.CASecret != plan.SystemCASecretName || len(v.TLS.SANs) != 1 || v.TLS.SANs[0].Value != "api.pay.example" {
		t.Errorf("TLS without validation: %+v", v.TLS)
	}
	if v.CA == nil || v.CA.SystemPath != cfg.SystemCABundlePath {
		t.Errorf("CA without validation: %+v", v.CA)
	}

	// insecureSkipVerify where the control plane allows it: no CA served.
	x := backend(withTLS(gwxv1a1.BackendTLSModeServerOnly, nil))
	x.Annotations = map[string]string{"tlsplane.io/insecureSkipVerify": "true"}
	v = xbackend.Judge(x, ix, xbackend.Config{AllowInsecureSkipVerify: true}, backendtls.Memos{})
	if !v.Accepted() || v.CA != nil || v.TLS.CASecret != "" || !v.TLS.Params.InsecureSkipVerify {
		t.Errorf("insecureSkipVerify: accepted %v (%s), CA %+v, TLS %+v", v.Accepted(), v.RejectMessage, v.CA, v.TLS)
	}
}

// TestClusters: the clusters of each protocol (D2, D4): which route
// families get one, what each speaks, in plaintext and over TLS.
func TestClusters(t *testing.T) {
	ix := index(t)
	type shape struct {
		name string
		alpn string // with TLS: the ALPN offered ("-" none)
		h2c  bool   // in plaintext: HTTP/2 with prior knowledge
	}
	cases := []struct {
		protocol gwxv1a1.BackendProtocol
		want     []shape // name suffix after XBackend/shop/pay/443
	}{
		{"", []shape{{"", "h2,http/1.1", false}, {"/grpc", "h2", true}, {"/tcp", "-", false}}},
		{gwxv1a1.BackendProtocolHTTP, []shape{{"", "h2,http/1.1", false}, {"/grpc", "h2", true}}},
		{gwxv1a1.BackendProtocolMCP, []shape{{"", "h2,http/1.1", false}}},
		{gwxv1a1.BackendProtocolHTTP11, []shape{{"", "http/1.1", false}}},
		{gwxv1a1.BackendProtocolHTTP2, []shape{{"", "h2", true}, {"/grpc", "h2", true}}},
		{gwxv1a1.BackendProtocolGRPC, []shape{{"", "h2", true}, {"/grpc", "h2", true}}},
		{gwxv1a1.BackendProtocolH2C, []shape{{"", "", true}, {"/grpc", "", true}}},
		{gwxv1a1.BackendProtocolTCP, []shape{{"", "-", false}, {"/tcp", "-", false}}},
	}
	for _, tc := range cases {
		for _, tls := range []bool{false, true} {
			if tls && tc.protocol == gwxv1a1.BackendProtocolH2C {
				continue
			}
			mutate := protocol(tc.protocol)
			if tc.protocol == "" {
				mutate = nil
			}
			if tls {
				mutate = both(func(x *gwxv1a1.XBackend) {
					if tc.protocol != "" {
						protocol(tc.protocol)(x)
					}
				}, withTLS(gwxv1a1.BackendTLSModeServerOnly, nil))
			}
			v := xbackend.Judge(backend(mutate), ix, cfg, backendtls.Memos{})
			got := v.Clusters()
			if len(got) != len(tc.want) {
				t.Errorf("protocol %q tls %v: %d clusters, want %d", tc.protocol, tls, len(got), len(tc.want))
				continue
			}
			for i, c := range got {
				w := tc.want[i]
				if c.Plan.Name != "XBackend/shop/pay/443"+w.name || c.Plan.ExternalName != "api.pay.example" || c.Plan.Port != 443 || !c.Plan.FollowDNSTTL {
					t.Errorf("protocol %q tls %v: cluster %+v", tc.protocol, tls, c.Plan)
				}
				// The family decides the retry budget: none on raw clusters.
				if family := map[string]xbackend.Family{"": xbackend.FamilyHTTP, "/grpc": xbackend.FamilyGRPC, "/tcp": xbackend.FamilyRaw}[w.name]; c.Family != family {
					t.Errorf("protocol %q tls %v: cluster %s of family %d, want %d", tc.protocol, tls, c.Plan.Name, c.Family, family)
				}
				if !tls {
					if c.TLS != nil || c.H2C != w.h2c {
						t.Errorf("protocol %q plaintext %s: TLS %v h2c %v, want h2c %v", tc.protocol, c.Plan.Name, c.TLS, c.H2C, w.h2c)
					}
					continue
				}
				alpn := strings.Join(c.TLS.Params.ALPNProtocols, ",")
				if alpn == "" {
					alpn = "-"
				}
				if c.H2C || alpn != w.alpn {
					t.Errorf("protocol %q TLS %s: ALPN %q h2c %v, want %q", tc.protocol, c.Plan.Name, alpn, c.H2C, w.alpn)
				}
			}
		}
	}
}

// TestServes: which route families an XBackend's protocol allows (D4).
func TestServes(t *testing.T) {
	for _, tc := range []struct {
		protocol        gwxv1a1.BackendProtocol
		http, grpc, raw bool
	}{
		{"", true, true, true},
		{gwxv1a1.BackendProtocolHTTP, true, true, false},
		{gwxv1a1.BackendProtocolHTTP11, true, false, false},
		{gwxv1a1.BackendProtocolHTTP2, true, true, false},
		{gwxv1a1.BackendProtocolH2C, true, true, false},
		{gwxv1a1.BackendProtocolGRPC, true, true, false},
		{gwxv1a1.BackendProtocolMCP, true, false, false},
		{gwxv1a1.BackendProtocolTCP, false, false, true},
	} {
		got := []bool{xbackend.Serves(tc.protocol, xbackend.FamilyHTTP), xbackend.Serves(tc.protocol, xbackend.FamilyGRPC), xbackend.Serves(tc.protocol, xbackend.FamilyRaw)}
		if got[0] != tc.http || got[1] != tc.grpc || got[2] != tc.raw {
			t.Errorf("protocol %q: http %v grpc %v raw %v, want %v %v %v", tc.protocol, got[0], got[1], got[2], tc.http, tc.grpc, tc.raw)
		}
	}
}
