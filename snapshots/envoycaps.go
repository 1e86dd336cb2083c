package snapshots

import (
	"fmt"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// What an Envoy build accepts of a cluster's TLS parameters. Envoy hands
// tls_params to BoringSSL (SSL_CTX_set_strict_cipher_list,
// SSL_CTX_set1_curves_list, SSL_CTX_set1_sigalgs_list: context_impl.cc)
// and rejects the whole CDS update when one name is unknown to the
// library it was built with; a FIPS build links BoringSSL's validated
// module, whose approved set is narrower (its own defaults are P-256 and
// the four ECDHE AES-GCM suites: context_config_impl.cc). tlsplane holds
// back what a fleet's build cannot take, so no fleet NACKs in a loop and a
// FIPS fleet never runs crypto FIPS 140-3 does not approve.
//
// Non-FIPS BoringSSL takes every name tlsplane's options take (they were
// checked against Envoy 1.40.0, translator/tlsopts), but the newest ones
// only from the Envoy release whose BoringSSL knows them (since).

// since is the first Envoy release known to accept a name; older builds
// are refused it. The versions are the earliest with public evidence:
// X25519MLKEM768 was confirmed on Envoy 1.33.2 (envoyproxy/envoy#33941);
// ML-DSA signature algorithms only on 1.40.0, the build tlsplane's tables
// were checked against.
var since = map[string]EnvoyBuild{
	"X25519MLKEM768": {Major: 1, Minor: 33, Patch: 2},
	"mldsa44":        {Major: 1, Minor: 40},
	"mldsa65":        {Major: 1, Minor: 40},
	"mldsa87":        {Major: 1, Minor: 40},
}

// fipsCurves, fipsCiphers and fipsSigalgs are what a BoringSSL-FIPS build
// is allowed (BoringSSL's FIPS compliance policy, SP 800-52r2): NIST
// curves P-256 and P-384 (no X25519, no X25519MLKEM768, no P-521), ECDHE
// with AES-GCM (no CHACHA20, no CBC, no RSA key exchange), ECDSA on those
// curves and RSA with SHA-2 (no SHA-1, no Ed25519, no ML-DSA), TLS 1.2 and
// 1.3 only.
var (
	fipsCurves  = []string{"P-256", "P-384"}
	fipsCiphers = []string{
		"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
		"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384",
	}
	fipsSigalgs = []string{
		"ecdsa_secp256r1_sha256", "ecdsa_secp384r1_sha384",
		"rsa_pss_rsae_sha256", "rsa_pss_rsae_sha384", "rsa_pss_rsae_sha512",
		"rsa_pkcs1_sha256", "rsa_pkcs1_sha384", "rsa_pkcs1_sha512",
	}
	fipsMinimumVersion = tlsv3.TlsParameters_TLSv1_2
)

// clusterTLS is what the build check reads of a cluster: the TLS
// parameters of its transport sockets and its policy's profile (the
// cluster metadata tlsopts.ClusterMetadataProfile). nil: a cluster
// without TLS, which every build takes.
type clusterTLS struct {
	curves, ciphers, sigalgs []string
	minimum, maximum         tlsv3.TlsParameters_TlsProtocol
	profile                  string
}

// tuned: the cluster sets something a build may refuse (every policy
// sets TLS 1.2 to 1.3, which every build takes).
func (c *clusterTLS) tuned() bool {
	below := func(v tlsv3.TlsParameters_TlsProtocol) bool {
		return v != tlsv3.TlsParameters_TLS_AUTO && v < fipsMinimumVersion
	}
	return c != nil && (len(c.curves) > 0 || len(c.ciphers) > 0 || len(c.sigalgs) > 0 ||
		below(c.minimum) || below(c.maximum) || c.profile != "")
}

// addParams adds one transport socket's parameters.
func (c *clusterTLS) addParams(p *tlsv3.TlsParameters) {
	c.curves = append(c.curves, p.GetEcdhCurves()...)
	for _, item := range p.GetCipherSuites() {
		// An equal-preference group "[A|B]" names each of its suites.
		c.ciphers = append(c.ciphers, strings.FieldsFunc(item, func(r rune) bool { return r == '[' || r == ']' || r == '|' })...)
	}
	c.sigalgs = append(c.sigalgs, p.GetSignatureAlgorithms()...)
	if v := p.GetTlsMinimumProtocolVersion(); v != tlsv3.TlsParameters_TLS_AUTO && (c.minimum == tlsv3.TlsParameters_TLS_AUTO || v < c.minimum) {
		c.minimum = v
	}
	if v := p.GetTlsMaximumProtocolVersion(); v != tlsv3.TlsParameters_TLS_AUTO && (c.maximum == tlsv3.TlsParameters_TLS_AUTO || v < c.maximum) {
		c.maximum = v
	}
}

// refusal says what of c the build does not accept, naming the option
// that set it ("" when it accepts all): the first refused value, in the
// order profile, versions, curves, ciphers, signature algorithms.
func (b EnvoyBuild) refusal(c *clusterTLS) string {
	if c == nil {
		return ""
	}
	if c.profile == tlsopts.ProfileFIPS && !b.FIPS {
		return fmt.Sprintf("profile %q (option %sprofile): it is not a BoringSSL-FIPS build", c.profile, tlsopts.Prefix)
	}
	if b.FIPS {
		for _, v := range []struct {
			option string
			value  tlsv3.TlsParameters_TlsProtocol
		}{{"minimumVersion", c.minimum}, {"maximumVersion", c.maximum}} {
			if v.value != tlsv3.TlsParameters_TLS_AUTO && v.value < fipsMinimumVersion {
				return c.refused("TLS version", versionName(v.value), v.option)
			}
		}
	}
	for _, list := range []struct {
		what, option string
		names, fips  []string
	}{
		{"curve", "ecdhCurves", c.curves, fipsCurves},
		{"cipher", "ciphers", c.ciphers, fipsCiphers},
		{"signature algorithm", "signatureAlgorithms", c.sigalgs, fipsSigalgs},
	} {
		for _, name := range list.names {
			if first, known := since[name]; known && !b.atLeast(first) {
				return c.refused(list.what, name, list.option) + fmt.Sprintf(" (Envoy %d.%d.%d or later accepts it)", first.Major, first.Minor, first.Patch)
			}
			if b.FIPS && !contains(list.fips, name) {
				return c.refused(list.what, name, list.option)
			}
		}
	}
	return ""
}

// refused names a value and the option (or the profile) that set it.
func (c *clusterTLS) refused(what, value, option string) string {
	from := "option " + tlsopts.Prefix + option
	if c.profile != "" {
		from += " or profile " + fmt.Sprintf("%q", c.profile)
	}
	return fmt.Sprintf("%s %q (%s)", what, value, from)
}

// versionName is the version as the options spell it: TLSv1_1.
func versionName(v tlsv3.TlsParameters_TlsProtocol) string { return v.String() }

func contains(list []string, name string) bool {
	for _, s := range list {
		if s == name {
			return true
		}
	}
	return false
}

// clusterTLSOf reads c's TLS parameters and profile; nil when nothing in
// them can be refused by a build.
func clusterTLSOf(c *clusterv3.Cluster) (*clusterTLS, error) {
	contexts, err := upstreamTLSContexts(c)
	if err != nil {
		return nil, err
	}
	return clusterTLSFrom(c, contexts), nil
}

// clusterTLSFrom is clusterTLSOf from c's decoded upstream TLS contexts.
func clusterTLSFrom(c *clusterv3.Cluster, contexts []*tlsv3.UpstreamTlsContext) *clusterTLS {
	t := &clusterTLS{}
	t.profile = c.GetMetadata().GetFilterMetadata()[tlsopts.ClusterMetadataNamespace].GetFields()[tlsopts.ClusterMetadataProfile].GetStringValue()
	for _, tls := range contexts {
		t.addParams(tls.GetCommonTlsContext().GetTlsParams())
	}
	if !t.tuned() {
		return nil
	}
	return t
}
