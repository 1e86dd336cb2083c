package tlsopts

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Every value a profile sets is one the option tables take, each of which
// TestEnvoyAcceptsOptionNames puts to Envoy 1.40: so Envoy accepts every
// profile. The names are the ones profilenames.go declares.
func TestProfilesUseAcceptedNames(t *testing.T) {
	if got, want := ProfileNames(), []string{ProfileModern, ProfileIntermediate, ProfilePostQuantum, ProfileFIPS}; !slices.Equal(got, want) {
		t.Errorf("profiles %v, want %v", got, want)
	}
	for _, p := range profiles {
		seen := map[string]bool{}
		for _, c := range p.ciphers {
			if err := checkCipher(c, seen); err != nil {
				t.Errorf("profile %s: cipher: %v", p.name, err)
			}
		}
		if _, err := parseECDHCurves(strings.Join(p.curves, ",")); err != nil {
			t.Errorf("profile %s: curves: %v", p.name, err)
		}
		if _, err := parseSignatureAlgorithms(strings.Join(p.signatureAlgorithms, ",")); err != nil {
			t.Errorf("profile %s: signature algorithms: %v", p.name, err)
		}
		if p.minimum > p.maximum || p.minimum < tlsv3.TlsParameters_TLSv1_2 {
			t.Errorf("profile %s: versions %s to %s", p.name, p.minimum, p.maximum)
		}
		if (p.ciphers == nil) != (p.minimum == tlsv3.TlsParameters_TLSv1_3) {
			t.Errorf("profile %s: a TLS 1.2 cipher list exactly when TLS 1.2 is allowed", p.name)
		}
	}
}

func TestParseProfile(t *testing.T) {
	modern := tls13Only([]string{"X25519MLKEM768", "X25519", "P-256"})
	intermediate := Options{
		MinimumVersion: tlsv3.TlsParameters_TLSv1_2, MaximumVersion: tlsv3.TlsParameters_TLSv1_3,
		Ciphers: []string{"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
			"ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
		ECDHCurves: []string{"X25519", "P-256", "P-384"},
		SignatureAlgorithms: []string{"ecdsa_secp256r1_sha256", "ecdsa_secp384r1_sha384", "ecdsa_secp521r1_sha512",
			"rsa_pss_rsae_sha256", "rsa_pss_rsae_sha384", "rsa_pss_rsae_sha512", "ed25519",
			"rsa_pkcs1_sha256", "rsa_pkcs1_sha384", "rsa_pkcs1_sha512"},
		Profile: ProfileIntermediate,
	}
	fips := Options{
		MinimumVersion: tlsv3.TlsParameters_TLSv1_2, MaximumVersion: tlsv3.TlsParameters_TLSv1_3,
		Ciphers:    []string{"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
		ECDHCurves: []string{"P-256", "P-384"},
		SignatureAlgorithms: []string{"ecdsa_secp256r1_sha256", "ecdsa_secp384r1_sha384",
			"rsa_pss_rsae_sha256", "rsa_pss_rsae_sha384", "rsa_pss_rsae_sha512",
			"rsa_pkcs1_sha256", "rsa_pkcs1_sha384", "rsa_pkcs1_sha512"},
		Profile: ProfileFIPS,
	}
	postQuantum := tls13Only([]string{"X25519MLKEM768"})
	postQuantum.Profile = ProfilePostQuantum
	with := func(o Options, f func(*Options)) Options {
		o.Ciphers, o.ECDHCurves, o.SignatureAlgorithms = slices.Clone(o.Ciphers), slices.Clone(o.ECDHCurves), slices.Clone(o.SignatureAlgorithms)
		f(&o)
		return o
	}
	cases := []struct {
		name    string
		options map[gwv1.AnnotationKey]gwv1.AnnotationValue
		want    Options
	}{
		{"modern", specOptions("tlsplane.io/profile", "modern"), modern},
		{"intermediate", specOptions("tlsplane.io/profile", "intermediate"), intermediate},
		{"post-quantum", specOptions("tlsplane.io/profile", "post-quantum"), postQuantum},
		{"fips-140-3", specOptions("tlsplane.io/profile", "fips-140-3"), fips},
		{"intermediate, curves overridden", specOptions("tlsplane.io/profile", "intermediate", "tlsplane.io/ecdhCurves", "P-384"),
			with(intermediate, func(o *Options) { o.ECDHCurves = []string{"P-384"} })},
		{"intermediate, TLS 1.3 minimum drops the ignored TLS 1.2 ciphers", specOptions("tlsplane.io/profile", "intermediate", "tlsplane.io/minimumVersion", "TLSv1_3"),
			with(intermediate, func(o *Options) { o.MinimumVersion, o.Ciphers = tlsv3.TlsParameters_TLSv1_3, nil })},
		{"intermediate, TLS 1.2 only", specOptions("tlsplane.io/profile", "intermediate", "tlsplane.io/maximumVersion", "TLSv1_2"),
			with(intermediate, func(o *Options) { o.MaximumVersion = tlsv3.TlsParameters_TLSv1_2 })},
		{"modern, TLS 1.2 allowed with Envoy's ciphers", specOptions("tlsplane.io/profile", "modern", "tlsplane.io/minimumVersion", "TLSv1_2"),
			with(modern, func(o *Options) { o.MinimumVersion = tlsv3.TlsParameters_TLSv1_2 })},
		{"modern, TLS 1.2 allowed with ciphers", specOptions("tlsplane.io/profile", "modern", "tlsplane.io/minimumVersion", "TLSv1_2", "tlsplane.io/ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256"),
			with(modern, func(o *Options) {
				o.MinimumVersion, o.Ciphers = tlsv3.TlsParameters_TLSv1_2, []string{"ECDHE-ECDSA-AES128-GCM-SHA256"}
			})},
		{"modern, signature algorithms overridden", specOptions("tlsplane.io/profile", "modern", "tlsplane.io/signatureAlgorithms", "ed25519"),
			with(modern, func(o *Options) { o.SignatureAlgorithms = []string{"ed25519"} })},
		{"post-quantum with a classical fallback asked for", specOptions("tlsplane.io/profile", "post-quantum", "tlsplane.io/ecdhCurves", "X25519MLKEM768,X25519"),
			with(postQuantum, func(o *Options) { o.ECDHCurves = []string{"X25519MLKEM768", "X25519"} })},
		{"fips narrowed to P-384 and TLS 1.3", specOptions("tlsplane.io/profile", "fips-140-3", "tlsplane.io/ecdhCurves", "P-384", "tlsplane.io/minimumVersion", "TLSv1_3"),
			with(fips, func(o *Options) {
				o.ECDHCurves, o.MinimumVersion, o.Ciphers = []string{"P-384"}, tlsv3.TlsParameters_TLSv1_3, nil
			})},
		{"fips narrowed ciphers, a group among them", specOptions("tlsplane.io/profile", "fips-140-3", "tlsplane.io/ciphers", "[ECDHE-ECDSA-AES128-GCM-SHA256|ECDHE-ECDSA-AES256-GCM-SHA384]"),
			with(fips, func(o *Options) {
				o.Ciphers = []string{"[ECDHE-ECDSA-AES128-GCM-SHA256|ECDHE-ECDSA-AES256-GCM-SHA384]"}
			})},
		{"other options alongside", specOptions("tlsplane.io/profile", "modern", "tlsplane.io/alpnProtocols", "h2"),
			with(modern, func(o *Options) { o.ALPNProtocols = []string{"h2"} })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.options, false)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// tls13Only is the modern profile's parts with the curves given.
func tls13Only(curves []string) Options {
	return Options{
		MinimumVersion: tlsv3.TlsParameters_TLSv1_3, MaximumVersion: tlsv3.TlsParameters_TLSv1_3,
		ECDHCurves: curves,
		SignatureAlgorithms: []string{"ecdsa_secp256r1_sha256", "ecdsa_secp384r1_sha384", "ecdsa_secp521r1_sha512",
			"rsa_pss_rsae_sha256", "rsa_pss_rsae_sha384", "rsa_pss_rsae_sha512", "ed25519"},
		Profile: ProfileModern,
	}
}

func TestParseProfileInvalid(t *testing.T) {
	cases := []struct {
		name    string
		options map[gwv1.AnnotationKey]gwv1.AnnotationValue
		want    string // the whole error message
	}{
		{"unknown profile", specOptions("tlsplane.io/profile", "strict"),
			`option tlsplane.io/profile: "strict" is not a profile: use modern, intermediate, post-quantum, fips-140-3`},
		{"profile in another case", specOptions("tlsplane.io/profile", "FIPS-140-3"),
			`option tlsplane.io/profile: "FIPS-140-3" is not a profile (did you mean "fips-140-3"?): use modern, intermediate, post-quantum, fips-140-3`},
		{"empty profile", specOptions("tlsplane.io/profile", ""),
			`option tlsplane.io/profile: "" is not a profile: use modern, intermediate, post-quantum, fips-140-3`},
		{"modern with ciphers", specOptions("tlsplane.io/profile", "modern", "tlsplane.io/ciphers", "ECDHE-RSA-AES128-GCM-SHA256"),
			`option tlsplane.io/ciphers: "ECDHE-RSA-AES128-GCM-SHA256" would be ignored: tlsplane.io/minimumVersion (from tlsplane.io/profile "modern") is TLSv1_3, and Envoy does not let TLS 1.3 suites be chosen`},
		{"modern capped at TLS 1.2", specOptions("tlsplane.io/profile", "modern", "tlsplane.io/maximumVersion", "TLSv1_2"),
			`option tlsplane.io/maximumVersion: "TLSv1_2" is below tlsplane.io/minimumVersion (from tlsplane.io/profile "modern") TLSv1_3; set tlsplane.io/minimumVersion too`},
		{"post-quantum with TLS 1.2", specOptions("tlsplane.io/profile", "post-quantum", "tlsplane.io/minimumVersion", "TLSv1_2"),
			`option tlsplane.io/minimumVersion: "TLSv1_2" contradicts tlsplane.io/profile "post-quantum", which is TLSv1_3 only (its group X25519MLKEM768 is negotiated in TLS 1.3 only); leave the version out or choose another profile`},
		{"post-quantum capped at TLS 1.2", specOptions("tlsplane.io/profile", "post-quantum", "tlsplane.io/maximumVersion", "TLSv1_2"),
			`option tlsplane.io/maximumVersion: "TLSv1_2" contradicts tlsplane.io/profile "post-quantum", which is TLSv1_3 only (its group X25519MLKEM768 is negotiated in TLS 1.3 only); leave the version out or choose another profile`},
		{"post-quantum without the hybrid group", specOptions("tlsplane.io/profile", "post-quantum", "tlsplane.io/ecdhCurves", "X25519,P-256"),
			`option tlsplane.io/ecdhCurves: "X25519,P-256" leaves out X25519MLKEM768, the group tlsplane.io/profile "post-quantum" is for; add it or choose another profile`},
		{"post-quantum with ciphers", specOptions("tlsplane.io/profile", "post-quantum", "tlsplane.io/ciphers", "ECDHE-RSA-AES128-GCM-SHA256"),
			`option tlsplane.io/ciphers: "ECDHE-RSA-AES128-GCM-SHA256" would be ignored: tlsplane.io/minimumVersion (from tlsplane.io/profile "post-quantum") is TLSv1_3, and Envoy does not let TLS 1.3 suites be chosen`},
		{"fips with X25519", specOptions("tlsplane.io/profile", "fips-140-3", "tlsplane.io/ecdhCurves", "P-256,X25519"),
			`option tlsplane.io/ecdhCurves: "X25519" is not in tlsplane.io/profile "fips-140-3", which admits only P-256, P-384`},
		{"fips with ChaCha20", specOptions("tlsplane.io/profile", "fips-140-3", "tlsplane.io/ciphers", "[ECDHE-RSA-AES128-GCM-SHA256|ECDHE-RSA-CHACHA20-POLY1305]"),
			`option tlsplane.io/ciphers: "ECDHE-RSA-CHACHA20-POLY1305" is not in tlsplane.io/profile "fips-140-3", which admits only ECDHE-ECDSA-AES128-GCM-SHA256, ECDHE-RSA-AES128-GCM-SHA256, ECDHE-ECDSA-AES256-GCM-SHA384, ECDHE-RSA-AES256-GCM-SHA384`},
		{"fips with Ed25519", specOptions("tlsplane.io/profile", "fips-140-3", "tlsplane.io/signatureAlgorithms", "ed25519"),
			`option tlsplane.io/signatureAlgorithms: "ed25519" is not in tlsplane.io/profile "fips-140-3", which admits only ecdsa_secp256r1_sha256, ecdsa_secp384r1_sha384, rsa_pss_rsae_sha256, rsa_pss_rsae_sha384, rsa_pss_rsae_sha512, rsa_pkcs1_sha256, rsa_pkcs1_sha384, rsa_pkcs1_sha512`},
		{"fips with TLS 1.1", specOptions("tlsplane.io/profile", "fips-140-3", "tlsplane.io/minimumVersion", "TLSv1_1"),
			`option tlsplane.io/minimumVersion: "TLSv1_1" is outside tlsplane.io/profile "fips-140-3", which allows TLSv1_2 to TLSv1_3 only`},
		{"an invalid override is judged as without a profile", specOptions("tlsplane.io/profile", "intermediate", "tlsplane.io/ecdhCurves", "secp384r1"),
			`option tlsplane.io/ecdhCurves: "secp384r1" is spelled "P-384" here`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.options, false)
			if err == nil {
				t.Fatalf("Parse accepted it; want %s", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}
