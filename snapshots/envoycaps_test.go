package snapshots

import (
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

var (
	envoy140     = EnvoyBuild{Major: 1, Minor: 40}
	envoy140FIPS = EnvoyBuild{Major: 1, Minor: 40, FIPS: true}
	envoy133     = EnvoyBuild{Major: 1, Minor: 33, Patch: 1}
	envoy1332    = EnvoyBuild{Major: 1, Minor: 33, Patch: 2}
)

// TestBuildRefusals is the capability table: what each build accepts of
// the names tlsplane's options take, and the words a refusal uses.
func TestBuildRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		build   EnvoyBuild
		tls     clusterTLS
		refused string // substring of the refusal; "" accepts
	}{
		{"defaults, FIPS", envoy140FIPS, clusterTLS{minimum: tlsv3.TlsParameters_TLSv1_2, maximum: tlsv3.TlsParameters_TLSv1_3}, ""},
		{"X25519 on BoringSSL", envoy140, clusterTLS{curves: []string{"X25519", "P-521"}}, ""},
		{"X25519 on FIPS", envoy140FIPS, clusterTLS{curves: []string{"P-256", "X25519"}}, `curve "X25519" (option tlsplane.io/ecdhCurves)`},
		{"X25519MLKEM768 on FIPS", envoy140FIPS, clusterTLS{curves: []string{"X25519MLKEM768"}}, `curve "X25519MLKEM768"`},
		{"P-521 on FIPS", envoy140FIPS, clusterTLS{curves: []string{"P-521"}}, `curve "P-521"`},
		{"P-256 and P-384 on FIPS", envoy140FIPS, clusterTLS{curves: []string{"P-384", "P-256"}}, ""},
		{"X25519MLKEM768 on 1.33.1", envoy133, clusterTLS{curves: []string{"X25519MLKEM768"}}, `curve "X25519MLKEM768" (option tlsplane.io/ecdhCurves) (Envoy 1.33.2 or later accepts it)`},
		{"X25519MLKEM768 on 1.33.2", envoy1332, clusterTLS{curves: []string{"X25519MLKEM768"}}, ""},
		{"CHACHA20 on FIPS", envoy140FIPS, clusterTLS{ciphers: []string{"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-CHACHA20-POLY1305"}}, `cipher "ECDHE-RSA-CHACHA20-POLY1305" (option tlsplane.io/ciphers)`},
		{"CBC on FIPS", envoy140FIPS, clusterTLS{ciphers: []string{"ECDHE-RSA-AES128-SHA"}}, `cipher "ECDHE-RSA-AES128-SHA"`},
		{"RSA key exchange on FIPS", envoy140FIPS, clusterTLS{ciphers: []string{"AES128-GCM-SHA256"}}, `cipher "AES128-GCM-SHA256"`},
		{"AES-GCM on FIPS", envoy140FIPS, clusterTLS{ciphers: []string{"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES128-GCM-SHA256"}}, ""},
		{"CHACHA20 on BoringSSL", envoy140, clusterTLS{ciphers: []string{"ECDHE-RSA-CHACHA20-POLY1305"}}, ""},
		{"ed25519 on FIPS", envoy140FIPS, clusterTLS{sigalgs: []string{"ed25519"}}, `signature algorithm "ed25519" (option tlsplane.io/signatureAlgorithms)`},
		{"SHA-1 on FIPS", envoy140FIPS, clusterTLS{sigalgs: []string{"rsa_pkcs1_sha1"}}, `signature algorithm "rsa_pkcs1_sha1"`},
		{"SHA-2 on FIPS", envoy140FIPS, clusterTLS{sigalgs: []string{"ecdsa_secp256r1_sha256", "rsa_pss_rsae_sha256", "rsa_pkcs1_sha384"}}, ""},
		{"ML-DSA on 1.33.2", envoy1332, clusterTLS{sigalgs: []string{"mldsa65"}}, `signature algorithm "mldsa65" (option tlsplane.io/signatureAlgorithms) (Envoy 1.40.0 or later accepts it)`},
		{"ML-DSA on 1.40", envoy140, clusterTLS{sigalgs: []string{"mldsa65"}}, ""},
		{"TLS 1.1 on FIPS", envoy140FIPS, clusterTLS{minimum: tlsv3.TlsParameters_TLSv1_1, maximum: tlsv3.TlsParameters_TLSv1_3}, `TLS version "TLSv1_1" (option tlsplane.io/minimumVersion)`},
		{"TLS 1.0 on BoringSSL", envoy140, clusterTLS{minimum: tlsv3.TlsParameters_TLSv1_0}, ""},
		{"FIPS profile on BoringSSL", envoy140, clusterTLS{profile: tlsopts.ProfileFIPS, curves: []string{"P-256"}}, `profile "fips-140-3" (option tlsplane.io/profile): it is not a BoringSSL-FIPS build`},
		{"FIPS profile on FIPS", envoy140FIPS, clusterTLS{profile: tlsopts.ProfileFIPS, curves: []string{"P-256", "P-384"}}, ""},
		{"a profile's curve on FIPS", envoy140FIPS, clusterTLS{profile: tlsopts.ProfilePostQuantum, curves: []string{"X25519MLKEM768"}}, `curve "X25519MLKEM768" (option tlsplane.io/ecdhCurves or profile "post-quantum")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.build.refusal(&tc.tls)
			if tc.refused == "" && got != "" || !strings.Contains(got, tc.refused) {
				t.Errorf("%s refusal = %q, want %q", tc.build, got, tc.refused)
			}
		})
	}
}

// TestClusterTLSOf reads parameters from the transport socket (cipher
// groups split) and the profile from the metadata; a policy's default
// versions alone are nothing a build may refuse.
func TestClusterTLSOf(t *testing.T) {
	c := stCluster(t, &tlsv3.TlsParameters{TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2, TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3}, "")
	if got, err := clusterTLSOf(c); err != nil || got != nil {
		t.Fatalf("defaults: %+v, %v; want nil", got, err)
	}
	c = stCluster(t, &tlsv3.TlsParameters{CipherSuites: []string{"[ECDHE-RSA-AES128-GCM-SHA256|ECDHE-RSA-CHACHA20-POLY1305]", "ECDHE-RSA-AES256-GCM-SHA384"}}, tlsopts.ProfileModern)
	got, err := clusterTLSOf(c)
	if err != nil || got == nil {
		t.Fatalf("tuned: %+v, %v", got, err)
	}
	if want := []string{"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-CHACHA20-POLY1305", "ECDHE-RSA-AES256-GCM-SHA384"}; strings.Join(got.ciphers, ",") != strings.Join(want, ",") || got.profile != tlsopts.ProfileModern {
		t.Errorf("ciphers %v profile %q, want %v %q", got.ciphers, got.profile, want, tlsopts.ProfileModern)
	}
}

// TestBuildOf reads what Envoy sends (its node as Envoy 1.40 sent it over
// a real stream, see EnvoyBuild) and knows nothing of a node without it.
func TestBuildOf(t *testing.T) {
	node := func(ssl string) *corev3.Node {
		return &corev3.Node{Id: "n", UserAgentName: "envoy", UserAgentVersionType: &corev3.Node_UserAgentBuildVersion{UserAgentBuildVersion: &corev3.BuildVersion{
			Version:  &typev3.SemanticVersion{MajorNumber: 1, MinorNumber: 40, Patch: 1},
			Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{"ssl.version": structpb.NewStringValue(ssl), "build.type": structpb.NewStringValue("RELEASE")}},
		}}}
	}
	for _, tc := range []struct {
		node  *corev3.Node
		want  EnvoyBuild
		known bool
		name  string
	}{
		{node("BoringSSL"), EnvoyBuild{Major: 1, Minor: 40, Patch: 1}, true, "Envoy 1.40.1 BoringSSL"},
		{node("BoringSSL-FIPS"), EnvoyBuild{Major: 1, Minor: 40, Patch: 1, FIPS: true}, true, "Envoy 1.40.1 BoringSSL-FIPS"},
		{node("OpenSSL"), EnvoyBuild{}, false, ""},
		{&corev3.Node{Id: "grpc-client"}, EnvoyBuild{}, false, ""},
	} {
		got, known := BuildOf(tc.node)
		if got != tc.want || known != tc.known || (known && got.String() != tc.name) {
			t.Errorf("BuildOf(%v) = %v %v (%s), want %v %v (%s)", tc.node.GetUserAgentBuildVersion().GetMetadata(), got, known, got, tc.want, tc.known, tc.name)
		}
	}
}
