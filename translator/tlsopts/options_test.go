package tlsopts

import (
	"reflect"
	"strings"
	"testing"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// specOptions builds spec.options from key, value pairs.
func specOptions(kv ...string) map[gwv1.AnnotationKey]gwv1.AnnotationValue {
	m := map[gwv1.AnnotationKey]gwv1.AnnotationValue{}
	for i := 0; i < len(kv); i += 2 {
		m[gwv1.AnnotationKey(kv[i])] = gwv1.AnnotationValue(kv[i+1])
	}
	return m
}

const (
	pinA      = "DF6FF72FE9116521268F6F2DD4966F51DF479883FE7037B39F75916AC3049D1A"
	pinAColon = "df:6f:f7:2f:e9:11:65:21:26:8f:6f:2d:d4:96:6f:51:df:47:98:83:fe:70:37:b3:9f:75:91:6a:c3:04:9d:1a"
	pinB      = "0000000000000000000000000000000000000000000000000000000000000001"
)

func defaultTLSOptions() Options {
	return Options{MinimumVersion: tlsv3.TlsParameters_TLSv1_2, MaximumVersion: tlsv3.TlsParameters_TLSv1_3}
}

func TestParseOptionsValid(t *testing.T) {
	with := func(f func(*Options)) Options { o := defaultTLSOptions(); f(&o); return o }
	cases := []struct {
		name    string
		options map[gwv1.AnnotationKey]gwv1.AnnotationValue
		insec   bool
		want    Options
	}{
		{"none", nil, false, defaultTLSOptions()},
		{"other domain ignored", specOptions("example.com/ciphers", "anything", "gateway.envoyproxy.io/x", ""), false, defaultTLSOptions()},
		{"minimumVersion", specOptions("tlsplane.io/minimumVersion", "TLSv1_3"), false,
			with(func(o *Options) { o.MinimumVersion = tlsv3.TlsParameters_TLSv1_3 })},
		{"maximumVersion", specOptions("tlsplane.io/maximumVersion", "TLSv1_2"), false,
			with(func(o *Options) { o.MaximumVersion = tlsv3.TlsParameters_TLSv1_2 })},
		{"min equals max", specOptions("tlsplane.io/minimumVersion", "TLSv1_0", "tlsplane.io/maximumVersion", "TLSv1_0"), false,
			with(func(o *Options) {
				o.MinimumVersion, o.MaximumVersion = tlsv3.TlsParameters_TLSv1_0, tlsv3.TlsParameters_TLSv1_0
			})},
		{"ciphers trimmed, order kept", specOptions("tlsplane.io/ciphers", " ECDHE-RSA-AES256-GCM-SHA384 ,AES128-SHA,\tDES-CBC3-SHA"), false,
			with(func(o *Options) { o.Ciphers = []string{"ECDHE-RSA-AES256-GCM-SHA384", "AES128-SHA", "DES-CBC3-SHA"} })},
		{"cipher groups", specOptions("tlsplane.io/ciphers", "[ECDHE-ECDSA-AES128-GCM-SHA256 | ECDHE-ECDSA-CHACHA20-POLY1305],ECDHE-RSA-AES128-GCM-SHA256,[AES128-SHA]"), false,
			with(func(o *Options) {
				o.Ciphers = []string{"[ECDHE-ECDSA-AES128-GCM-SHA256|ECDHE-ECDSA-CHACHA20-POLY1305]", "ECDHE-RSA-AES128-GCM-SHA256", "[AES128-SHA]"}
			})},
		{"ciphers with TLS 1.2 minimum", specOptions("tlsplane.io/ciphers", "AES128-SHA", "tlsplane.io/maximumVersion", "TLSv1_2"), false,
			with(func(o *Options) {
				o.Ciphers = []string{"AES128-SHA"}
				o.MaximumVersion = tlsv3.TlsParameters_TLSv1_2
			})},
		{"ecdhCurves order kept", specOptions("tlsplane.io/ecdhCurves", "P-384, X25519MLKEM768,X25519,P-256,P-521"), false,
			with(func(o *Options) { o.ECDHCurves = []string{"P-384", "X25519MLKEM768", "X25519", "P-256", "P-521"} })},
		{"PQ curve only, TLS 1.3 allowed", specOptions("tlsplane.io/ecdhCurves", "X25519MLKEM768"), false,
			with(func(o *Options) { o.ECDHCurves = []string{"X25519MLKEM768"} })},
		{"signatureAlgorithms", specOptions("tlsplane.io/signatureAlgorithms", "ecdsa_secp256r1_sha256,rsa_pss_rsae_sha256,ed25519"), false,
			with(func(o *Options) {
				o.SignatureAlgorithms = []string{"ecdsa_secp256r1_sha256", "rsa_pss_rsae_sha256", "ed25519"}
			})},
		{"TLS 1.2-only sigalg with TLS 1.2 allowed", specOptions("tlsplane.io/signatureAlgorithms", "rsa_pkcs1_sha256"), false,
			with(func(o *Options) { o.SignatureAlgorithms = []string{"rsa_pkcs1_sha256"} })},
		{"verifyCertificateHashes", specOptions("tlsplane.io/verifyCertificateHashes", "# backend pins\n\n"+pinAColon+"\r\n  "+pinB+"  \n#"+pinA+"\n"), false,
			with(func(o *Options) { o.CertificateHashes = []string{pinA, pinB} })},
		{"allowExpiredCertificate true", specOptions("tlsplane.io/allowExpiredCertificate", "true"), false,
			with(func(o *Options) { o.AllowExpiredCertificate = true })},
		{"allowExpiredCertificate false", specOptions("tlsplane.io/allowExpiredCertificate", "false"), false, defaultTLSOptions()},
		{"alpnProtocols", specOptions("tlsplane.io/alpnProtocols", "h2, http/1.1"), false,
			with(func(o *Options) { o.ALPNProtocols = []string{"h2", "http/1.1"} })},
		{"crlRef", specOptions("tlsplane.io/crlRef", "Secret/pay-crl"), false,
			with(func(o *Options) { o.CRLRef = &ObjectRef{Kind: "Secret", Name: "pay-crl"} })},
		{"clientCertificateRef", specOptions("tlsplane.io/clientCertificateRef", "envoy-client.v2"), false,
			with(func(o *Options) { o.ClientCertificateRef = "envoy-client.v2" })},
		{"subjectAltNameURIPrefixes", specOptions("tlsplane.io/subjectAltNameURIPrefixes", "spiffe://prod.example.com/ns/shop/, spiffe://staging.example.com/"), false,
			with(func(o *Options) {
				o.SANURIPrefixes = []string{"spiffe://prod.example.com/ns/shop/", "spiffe://staging.example.com/"}
			})},
		{"insecureSkipVerify allowed", specOptions("tlsplane.io/insecureSkipVerify", "true"), true,
			with(func(o *Options) { o.InsecureSkipVerify = true })},
		{"insecureSkipVerify false needs no flag", specOptions("tlsplane.io/insecureSkipVerify", "false", "tlsplane.io/allowExpiredCertificate", "true"), false,
			with(func(o *Options) { o.AllowExpiredCertificate = true })},
		{"insecureSkipVerify with allowExpired false", specOptions("tlsplane.io/insecureSkipVerify", "true", "tlsplane.io/allowExpiredCertificate", "false"), true,
			with(func(o *Options) { o.InsecureSkipVerify = true })},
		{"value of exactly 4096 bytes", specOptions("tlsplane.io/verifyCertificateHashes", pinA+"\n"+strings.Repeat("#", 4096-65)), false,
			with(func(o *Options) { o.CertificateHashes = []string{pinA} })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.options, tc.insec)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestParseOptionsInvalid(t *testing.T) {
	huge := strings.Repeat("A", 64<<10)
	cases := []struct {
		name    string
		options map[gwv1.AnnotationKey]gwv1.AnnotationValue
		insec   bool
		want    string // the whole error message
	}{
		{"un-prefixed key", specOptions("ciphers", "AES128-SHA"), false,
			`option "ciphers": un-prefixed keys are reserved by Gateway API; tlsplane's options are under tlsplane.io/`},
		{"unknown key", specOptions("tlsplane.io/cipher", "AES128-SHA"), false,
			`option "tlsplane.io/cipher": unknown option; tlsplane implements allowExpiredCertificate, alpnProtocols, ciphers, clientCertificateRef, crlDistributionPointURLs, crlDistributionPoints, crlRef, ecdhCurves, insecureSkipVerify, maximumVersion, minimumVersion, profile, signatureAlgorithms, subjectAltNameURIPrefixes, verifyCertificateHashes`},
		{"key with upper-case domain", specOptions("TLSplane.io/ciphers", "AES128-SHA"), false,
			`option "TLSplane.io/ciphers": not a valid key: Gateway API keys are a DNS subdomain, /, and a name`},
		{"key with a space", specOptions(" tlsplane.io/ciphers", "AES128-SHA"), false,
			`option " tlsplane.io/ciphers": not a valid key: Gateway API keys are a DNS subdomain, /, and a name`},
		{"key too long", specOptions(strings.Repeat("a.", 130)+"io/x", ""), false,
			`option "` + strings.Repeat("a.", 50) + `"... (264 bytes): not a valid key: Gateway API keys are a DNS subdomain, /, and a name`},
		{"invalid key under another domain", specOptions("example.com/-x", ""), false,
			`option "example.com/-x": not a valid key: Gateway API keys are a DNS subdomain, /, and a name`},
		{"keys in sorted order", specOptions("tlsplane.io/minimumVersion", "TLSv9", "tlsplane.io/ciphers", "NOPE"), false,
			`option tlsplane.io/ciphers: "NOPE" is not a TLS 1.2 cipher Envoy 1.40 accepts (BoringSSL names such as ECDHE-RSA-AES128-GCM-SHA256)`},
		{"too many keys", func() map[gwv1.AnnotationKey]gwv1.AnnotationValue {
			m := specOptions()
			for i := 0; i < 17; i++ {
				m[gwv1.AnnotationKey("example.com/k"+string(rune('a'+i)))] = ""
			}
			return m
		}(), false, `spec.options has 17 keys, more than the 16 Gateway API allows`},
		{"64 KiB value", specOptions("tlsplane.io/ciphers", huge), false,
			`option tlsplane.io/ciphers: value "` + strings.Repeat("A", 100) + `"... (65536 bytes) is longer than the 4096 bytes Gateway API allows`},
		{"64 KiB unknown key value", specOptions("tlsplane.io/"+strings.Repeat("k", 60), huge), false,
			`option "tlsplane.io/` + strings.Repeat("k", 60) + `": value "` + strings.Repeat("A", 100) + `"... (65536 bytes) is longer than the 4096 bytes Gateway API allows`},

		{"minimumVersion bad", specOptions("tlsplane.io/minimumVersion", "TLSv1.2"), false,
			`option tlsplane.io/minimumVersion: "TLSv1.2" is not a TLS version: use TLSv1_0, TLSv1_1, TLSv1_2 or TLSv1_3`},
		{"maximumVersion bad", specOptions("tlsplane.io/maximumVersion", "TLS_AUTO"), false,
			`option tlsplane.io/maximumVersion: "TLS_AUTO" is not a TLS version: use TLSv1_0, TLSv1_1, TLSv1_2 or TLSv1_3`},
		{"min above max", specOptions("tlsplane.io/minimumVersion", "TLSv1_3", "tlsplane.io/maximumVersion", "TLSv1_2"), false,
			`option tlsplane.io/minimumVersion: "TLSv1_3" is above tlsplane.io/maximumVersion TLSv1_2`},
		{"max below default min", specOptions("tlsplane.io/maximumVersion", "TLSv1_1"), false,
			`option tlsplane.io/maximumVersion: "TLSv1_1" is below the default minimum version TLSv1_2; set tlsplane.io/minimumVersion too`},

		{"TLS 1.3 suite", specOptions("tlsplane.io/ciphers", "TLS_AES_128_GCM_SHA256"), false,
			`option tlsplane.io/ciphers: "TLS_AES_128_GCM_SHA256" is a TLS 1.3 suite: Envoy offers all TLS 1.3 suites and does not let them be chosen; list TLS 1.2 ciphers only`},
		{"TLS 1.3 suite in a group", specOptions("tlsplane.io/ciphers", "[AES128-SHA|TLS_CHACHA20_POLY1305_SHA256]"), false,
			`option tlsplane.io/ciphers: "TLS_CHACHA20_POLY1305_SHA256" is a TLS 1.3 suite: Envoy offers all TLS 1.3 suites and does not let them be chosen; list TLS 1.2 ciphers only`},
		{"IANA cipher name", specOptions("tlsplane.io/ciphers", "TLS_RSA_WITH_AES_128_CBC_SHA"), false,
			`option tlsplane.io/ciphers: "TLS_RSA_WITH_AES_128_CBC_SHA" is the IANA name: use the BoringSSL name "AES128-SHA"`},
		{"cipher case", specOptions("tlsplane.io/ciphers", "ecdhe-rsa-aes128-gcm-sha256"), false,
			`option tlsplane.io/ciphers: "ecdhe-rsa-aes128-gcm-sha256" is not a cipher Envoy 1.40 accepts: did you mean "ECDHE-RSA-AES128-GCM-SHA256"?`},
		{"cipher rule keyword", specOptions("tlsplane.io/ciphers", "HIGH"), false,
			`option tlsplane.io/ciphers: "HIGH" is not a TLS 1.2 cipher Envoy 1.40 accepts (BoringSSL names such as ECDHE-RSA-AES128-GCM-SHA256)`},
		{"colon-joined ciphers", specOptions("tlsplane.io/ciphers", "AES128-SHA:AES256-SHA"), false,
			`option tlsplane.io/ciphers: "AES128-SHA:AES256-SHA" is not a TLS 1.2 cipher Envoy 1.40 accepts (BoringSSL names such as ECDHE-RSA-AES128-GCM-SHA256)`},
		{"cipher Envoy rejects", specOptions("tlsplane.io/ciphers", "ECDHE-RSA-AES256-SHA384"), false,
			`option tlsplane.io/ciphers: "ECDHE-RSA-AES256-SHA384" is not a TLS 1.2 cipher Envoy 1.40 accepts (BoringSSL names such as ECDHE-RSA-AES128-GCM-SHA256)`},
		{"ciphers empty", specOptions("tlsplane.io/ciphers", " "), false,
			`option tlsplane.io/ciphers: " " is empty: leave the option out for Envoy's default`},
		{"ciphers empty item", specOptions("tlsplane.io/ciphers", "AES128-SHA,,AES256-SHA"), false,
			`option tlsplane.io/ciphers: "AES128-SHA,,AES256-SHA" has an empty item at position 2`},
		{"ciphers duplicate", specOptions("tlsplane.io/ciphers", "AES128-SHA, AES256-SHA ,AES128-SHA"), false,
			`option tlsplane.io/ciphers: "AES128-SHA" is listed twice`},
		{"ciphers duplicate across group", specOptions("tlsplane.io/ciphers", "[AES128-SHA|AES256-SHA],AES256-SHA"), false,
			`option tlsplane.io/ciphers: "AES256-SHA" is listed twice`},
		{"group without brackets", specOptions("tlsplane.io/ciphers", "AES128-SHA|AES256-SHA"), false,
			`option tlsplane.io/ciphers: "AES128-SHA|AES256-SHA" is not an equal-preference group: write [CIPHER|CIPHER]`},
		{"nested group", specOptions("tlsplane.io/ciphers", "[AES128-SHA|[AES256-SHA]]"), false,
			`option tlsplane.io/ciphers: "[AES128-SHA|[AES256-SHA]]" is not an equal-preference group: write [CIPHER|CIPHER]`},
		{"empty group", specOptions("tlsplane.io/ciphers", "[]"), false,
			`option tlsplane.io/ciphers: "[]" has an empty cipher name in its group`},
		{"ciphers with TLS 1.3 minimum", specOptions("tlsplane.io/ciphers", "AES128-SHA", "tlsplane.io/minimumVersion", "TLSv1_3"), false,
			`option tlsplane.io/ciphers: "AES128-SHA" would be ignored: tlsplane.io/minimumVersion is TLSv1_3, and Envoy does not let TLS 1.3 suites be chosen`},

		{"curve unknown", specOptions("tlsplane.io/ecdhCurves", "X25519,P-224"), false,
			`option tlsplane.io/ecdhCurves: "P-224" is not a curve tlsplane offers: use X25519MLKEM768, X25519, P-256, P-384 or P-521`},
		{"curve alias", specOptions("tlsplane.io/ecdhCurves", "secp384r1"), false,
			`option tlsplane.io/ecdhCurves: "secp384r1" is spelled "P-384" here`},
		{"curve case", specOptions("tlsplane.io/ecdhCurves", "p-256"), false,
			`option tlsplane.io/ecdhCurves: "p-256" is not a curve tlsplane offers: did you mean "P-256"?`},
		{"curve not offered", specOptions("tlsplane.io/ecdhCurves", "MLKEM1024"), false,
			`option tlsplane.io/ecdhCurves: "MLKEM1024" is not a curve tlsplane offers: use X25519MLKEM768, X25519, P-256, P-384 or P-521`},
		{"curve duplicate", specOptions("tlsplane.io/ecdhCurves", "X25519, P-256, X25519"), false,
			`option tlsplane.io/ecdhCurves: "X25519" is listed twice`},
		{"curves empty item", specOptions("tlsplane.io/ecdhCurves", "X25519,"), false,
			`option tlsplane.io/ecdhCurves: "X25519," has an empty item at position 2`},
		{"PQ curve only without TLS 1.3", specOptions("tlsplane.io/ecdhCurves", "X25519MLKEM768", "tlsplane.io/maximumVersion", "TLSv1_2"), false,
			`option tlsplane.io/ecdhCurves: "X25519MLKEM768" is only negotiated in TLS 1.3, but tlsplane.io/maximumVersion is TLSv1_2`},

		{"sigalg unknown", specOptions("tlsplane.io/signatureAlgorithms", "rsa_pss_pss_sha256"), false,
			`option tlsplane.io/signatureAlgorithms: "rsa_pss_pss_sha256" is not a signature algorithm Envoy 1.40 accepts (names such as ecdsa_secp256r1_sha256, rsa_pss_rsae_sha256, ed25519)`},
		{"sigalg alias", specOptions("tlsplane.io/signatureAlgorithms", "ECDSA+SHA256"), false,
			`option tlsplane.io/signatureAlgorithms: "ECDSA+SHA256" is spelled "ecdsa_secp256r1_sha256" here`},
		{"sigalg case", specOptions("tlsplane.io/signatureAlgorithms", "Ed25519"), false,
			`option tlsplane.io/signatureAlgorithms: "Ed25519" is not a signature algorithm Envoy 1.40 accepts: did you mean "ed25519"?`},
		{"sigalg duplicate", specOptions("tlsplane.io/signatureAlgorithms", "ed25519,ed25519"), false,
			`option tlsplane.io/signatureAlgorithms: "ed25519" is listed twice`},
		{"TLS 1.2-only sigalgs with TLS 1.3 only", specOptions("tlsplane.io/signatureAlgorithms", "rsa_pkcs1_sha256,ecdsa_sha1", "tlsplane.io/minimumVersion", "TLSv1_3"), false,
			`option tlsplane.io/signatureAlgorithms: "rsa_pkcs1_sha256,ecdsa_sha1" has no algorithm usable between TLSv1_3 and TLSv1_3`},
		{"client-certificate-only sigalg", specOptions("tlsplane.io/signatureAlgorithms", "rsa_pkcs1_sha256_legacy"), false,
			`option tlsplane.io/signatureAlgorithms: "rsa_pkcs1_sha256_legacy" has no algorithm usable between TLSv1_2 and TLSv1_3`},
		{"TLS 1.3-only sigalgs without TLS 1.3", specOptions("tlsplane.io/signatureAlgorithms", "mldsa65", "tlsplane.io/maximumVersion", "TLSv1_2"), false,
			`option tlsplane.io/signatureAlgorithms: "mldsa65" has no algorithm usable between TLSv1_2 and TLSv1_2`},

		{"hash too short", specOptions("tlsplane.io/verifyCertificateHashes", pinA[:62]), false,
			`option tlsplane.io/verifyCertificateHashes: line 1: "` + pinA[:62] + `" is not a SHA-256 fingerprint (a SHA-256 fingerprint is 64 hex characters or 32 colon-separated byte pairs)`},
		{"hash duplicate in other form", specOptions("tlsplane.io/verifyCertificateHashes", pinA+"\n# again\n"+pinAColon), false,
			`option tlsplane.io/verifyCertificateHashes: line 3: "` + pinAColon + `" repeats the fingerprint on line 1`},
		{"hashes only comments", specOptions("tlsplane.io/verifyCertificateHashes", "# none yet\n\n"), false,
			`option tlsplane.io/verifyCertificateHashes: no fingerprint given (a SHA-256 fingerprint is 64 hex characters or 32 colon-separated byte pairs; blank and # lines are ignored)`},

		{"allowExpired not a bool", specOptions("tlsplane.io/allowExpiredCertificate", "True"), false,
			`option tlsplane.io/allowExpiredCertificate: "True" is not true or false`},
		{"allowExpired empty", specOptions("tlsplane.io/allowExpiredCertificate", ""), false,
			`option tlsplane.io/allowExpiredCertificate: "" is not true or false`},

		{"uri prefix without a trailing slash", specOptions("tlsplane.io/subjectAltNameURIPrefixes", "spiffe://prod.example.com"), false,
			`option tlsplane.io/subjectAltNameURIPrefixes: "spiffe://prod.example.com" must end with "/": a prefix that stops inside the authority or a path segment would also match spiffe://prod.example.com-other/…`},
		{"uri prefix in a path segment", specOptions("tlsplane.io/subjectAltNameURIPrefixes", "spiffe://prod.example.com/ns/sh"), false,
			`option tlsplane.io/subjectAltNameURIPrefixes: "spiffe://prod.example.com/ns/sh" must end with "/": a prefix that stops inside the authority or a path segment would also match spiffe://prod.example.com/ns/sh-other/…`},
		{"uri prefix without a scheme", specOptions("tlsplane.io/subjectAltNameURIPrefixes", "prod.example.com/ns/"), false,
			`option tlsplane.io/subjectAltNameURIPrefixes: "prod.example.com/ns/" is not a URI prefix: write scheme://authority/path/, e.g. spiffe://prod.example.com/ns/shop/`},
		{"uri prefix without an authority", specOptions("tlsplane.io/subjectAltNameURIPrefixes", "spiffe:///ns/"), false,
			`option tlsplane.io/subjectAltNameURIPrefixes: "spiffe:///ns/" is not a URI prefix: write scheme://authority/path/, e.g. spiffe://prod.example.com/ns/shop/`},
		{"uri prefix with a query", specOptions("tlsplane.io/subjectAltNameURIPrefixes", "spiffe://prod.example.com/?x=/"), false,
			`option tlsplane.io/subjectAltNameURIPrefixes: "spiffe://prod.example.com/?x=/": a URI SAN prefix has no user, query or fragment`},
		{"uri prefix with an empty segment", specOptions("tlsplane.io/subjectAltNameURIPrefixes", "spiffe://prod.example.com//"), false,
			`option tlsplane.io/subjectAltNameURIPrefixes: "spiffe://prod.example.com//" has an empty path segment`},
		{"client certificate in another namespace", specOptions("tlsplane.io/clientCertificateRef", "other/envoy-client"), false,
			`option tlsplane.io/clientCertificateRef: "other/envoy-client" is not a Secret name (a DNS subdomain) in the policy's namespace`},
		{"client certificate upper case", specOptions("tlsplane.io/clientCertificateRef", "Envoy-Client"), false,
			`option tlsplane.io/clientCertificateRef: "Envoy-Client" is not a Secret name (a DNS subdomain) in the policy's namespace`},
		{"crlRef without a kind", specOptions("tlsplane.io/crlRef", "pay-crl"), false,
			`option tlsplane.io/crlRef: "pay-crl" is not ConfigMap/<name> or Secret/<name> of the policy's namespace`},
		{"crlRef of another kind", specOptions("tlsplane.io/crlRef", "Pod/pay-crl"), false,
			`option tlsplane.io/crlRef: "Pod/pay-crl" is not ConfigMap/<name> or Secret/<name> of the policy's namespace`},
		{"crlRef with validation off", specOptions("tlsplane.io/crlRef", "ConfigMap/pay-crl", "tlsplane.io/insecureSkipVerify", "true"), true,
			`option tlsplane.io/insecureSkipVerify: "true" turns certificate validation off, so tlsplane.io/crlRef cannot be honoured`},
		{"uri prefix twice", specOptions("tlsplane.io/subjectAltNameURIPrefixes", "spiffe://a.example/, spiffe://a.example/"), false,
			`option tlsplane.io/subjectAltNameURIPrefixes: "spiffe://a.example/" is listed twice`},
		{"uri prefixes with validation off", specOptions("tlsplane.io/subjectAltNameURIPrefixes", "spiffe://a.example/", "tlsplane.io/insecureSkipVerify", "true"), true,
			`option tlsplane.io/insecureSkipVerify: "true" turns certificate validation off, so tlsplane.io/subjectAltNameURIPrefixes cannot be honoured`},
		{"alpn empty item", specOptions("tlsplane.io/alpnProtocols", "h2, ,http/1.1"), false,
			`option tlsplane.io/alpnProtocols: "h2, ,http/1.1" has an empty item at position 2`},
		{"alpn duplicate", specOptions("tlsplane.io/alpnProtocols", "h2,h2"), false,
			`option tlsplane.io/alpnProtocols: "h2" is listed twice`},
		{"alpn inner space", specOptions("tlsplane.io/alpnProtocols", "http 1.1"), false,
			`option tlsplane.io/alpnProtocols: "http 1.1" is not an ALPN protocol: only printable ASCII without spaces`},
		{"alpn too long", specOptions("tlsplane.io/alpnProtocols", strings.Repeat("x", 256)), false,
			`option tlsplane.io/alpnProtocols: "` + strings.Repeat("x", 100) + `"... (256 bytes) is longer than the 255 bytes an ALPN protocol may have`},

		{"insecure without the flag", specOptions("tlsplane.io/insecureSkipVerify", "true"), false,
			`option tlsplane.io/insecureSkipVerify: "true" is refused: the control plane was not started with the opt-in flag --allow-insecure-skip-verify`},
		{"insecure not a bool", specOptions("tlsplane.io/insecureSkipVerify", "yes"), true,
			`option tlsplane.io/insecureSkipVerify: "yes" is not true or false`},
		{"insecure with pins", specOptions("tlsplane.io/insecureSkipVerify", "true", "tlsplane.io/verifyCertificateHashes", pinA), true,
			`option tlsplane.io/insecureSkipVerify: "true" turns certificate validation off, so tlsplane.io/verifyCertificateHashes cannot be honoured`},
		{"insecure with allowExpired", specOptions("tlsplane.io/insecureSkipVerify", "true", "tlsplane.io/allowExpiredCertificate", "true"), true,
			`option tlsplane.io/insecureSkipVerify: "true" turns certificate validation off, so tlsplane.io/allowExpiredCertificate cannot be honoured`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.options, tc.insec)
			if err == nil {
				t.Fatalf("Parse = %+v, want error %q", got, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %s\nwant %s", err, tc.want)
			}
			if len(err.Error()) > 600 {
				t.Errorf("error is %d bytes long; quoted values must be cut short", len(err.Error()))
			}
		})
	}
}

// TestParseOptionsDeterministic checks that the same bad options give the
// same error however often the map is iterated.
func TestParseOptionsDeterministic(t *testing.T) {
	bad := specOptions("tlsplane.io/minimumVersion", "x", "tlsplane.io/maximumVersion", "y", "tlsplane.io/ciphers", "z",
		"tlsplane.io/ecdhCurves", "w", "tlsplane.io/alpnProtocols", ",", "tlsplane.io/zzz", "")
	_, first := Parse(bad, false)
	if first == nil || !strings.HasPrefix(first.Error(), "option tlsplane.io/alpnProtocols:") {
		t.Fatalf("first error = %v, want the one for the first key in sorted order", first)
	}
	for i := 0; i < 50; i++ {
		if _, err := Parse(bad, false); err == nil || err.Error() != first.Error() {
			t.Fatalf("run %d: error %v, want %v", i, err, first)
		}
	}
}
