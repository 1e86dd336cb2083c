package tlsopts

import (
	"fmt"
	"slices"
	"strings"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// optProfile names a crypto profile (profilenames.go): versions, ciphers,
// curves and signature algorithms set together.
const optProfile = Prefix + "profile"

// profile is what one named profile sets. Every value is one the option
// tables (ciphers.go, curves.go, sigalgs.go) take, so Envoy 1.40 accepts
// it; TestProfilesUseAcceptedNames keeps that true. nil Ciphers: the
// profile is TLS 1.3 only, where Envoy does not let suites be chosen.
type profile struct {
	name                string
	minimum, maximum    tlsv3.TlsParameters_TlsProtocol
	ciphers             []string
	curves              []string
	signatureAlgorithms []string
	// narrowOnly: an explicit list option may only narrow the profile's
	// list, and versions stay within its range (a FIPS promise would
	// otherwise be broken by an override).
	narrowOnly bool
	// requiredCurve, when set, must stay in an explicit ecdhCurves, and
	// the versions may not be overridden: the profile's one promise.
	requiredCurve string
}

// tls13SignatureAlgorithms sign TLS 1.3 handshakes: ECDSA, RSA-PSS, Ed25519.
var tls13SignatureAlgorithms = []string{
	"ecdsa_secp256r1_sha256", "ecdsa_secp384r1_sha384", "ecdsa_secp521r1_sha512",
	"rsa_pss_rsae_sha256", "rsa_pss_rsae_sha384", "rsa_pss_rsae_sha512",
	"ed25519",
}

// profiles is the table the README shows.
var profiles = []profile{
	{
		// TLS 1.3 only; the post-quantum hybrid first, classical fallbacks.
		name:    ProfileModern,
		minimum: tlsv3.TlsParameters_TLSv1_3, maximum: tlsv3.TlsParameters_TLSv1_3,
		curves:              []string{"X25519MLKEM768", "X25519", "P-256"},
		signatureAlgorithms: tls13SignatureAlgorithms,
	},
	{
		// Mozilla's intermediate configuration in BoringSSL names (without
		// DHE, which BoringSSL does not implement); classical groups only.
		name:    ProfileIntermediate,
		minimum: tlsv3.TlsParameters_TLSv1_2, maximum: tlsv3.TlsParameters_TLSv1_3,
		ciphers: []string{
			"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
			"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
			"ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
		},
		curves: []string{"X25519", "P-256", "P-384"},
		signatureAlgorithms: append(slices.Clone(tls13SignatureAlgorithms),
			"rsa_pkcs1_sha256", "rsa_pkcs1_sha384", "rsa_pkcs1_sha512"),
	},
	{
		// Only the hybrid group: a backend that cannot do ML-KEM fails the
		// handshake (a visible failure) instead of silently falling back
		// to X25519. Envoy's default list already prefers the hybrid with
		// a classical fallback.
		name:    ProfilePostQuantum,
		minimum: tlsv3.TlsParameters_TLSv1_3, maximum: tlsv3.TlsParameters_TLSv1_3,
		curves:              []string{"X25519MLKEM768"},
		signatureAlgorithms: tls13SignatureAlgorithms,
		requiredCurve:       "X25519MLKEM768",
	},
	{
		// FIPS 140-3 approved algorithms only: AES-GCM with ECDHE over the
		// NIST curves, ECDSA and RSA signatures with SHA-2.
		name:    ProfileFIPS,
		minimum: tlsv3.TlsParameters_TLSv1_2, maximum: tlsv3.TlsParameters_TLSv1_3,
		ciphers: []string{
			"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
			"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
		},
		curves: []string{"P-256", "P-384"},
		signatureAlgorithms: []string{
			"ecdsa_secp256r1_sha256", "ecdsa_secp384r1_sha384",
			"rsa_pss_rsae_sha256", "rsa_pss_rsae_sha384", "rsa_pss_rsae_sha512",
			"rsa_pkcs1_sha256", "rsa_pkcs1_sha384", "rsa_pkcs1_sha512",
		},
		narrowOnly: true,
	},
}

// ProfileNames lists the profiles in the table's order.
func ProfileNames() []string {
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.name
	}
	return names
}

func lookupProfile(name string) (profile, bool) {
	for _, p := range profiles {
		if p.name == name {
			return p, true
		}
	}
	return profile{}, false
}

func parseProfile(value string) (string, error) {
	if _, ok := lookupProfile(value); ok {
		return value, nil
	}
	hint := ""
	for _, name := range ProfileNames() {
		if strings.EqualFold(strings.TrimSpace(value), name) {
			hint = fmt.Sprintf(" (did you mean %q?)", name)
		}
	}
	return "", fmt.Errorf("%s is not a profile%s: use %s", quoteValue(value), hint, strings.Join(ProfileNames(), ", "))
}

// applyProfile fills every part the profile sets and no explicit option
// gave (given holds the explicit ones), then checks the explicit ones
// against the profile's promise. The copies keep the table unshared.
func (o *Options) applyProfile(given map[string]string) error {
	p, ok := lookupProfile(o.Profile)
	if !ok {
		return nil
	}
	if _, ok := given[optMinimumVersion]; !ok {
		o.MinimumVersion = p.minimum
	}
	if _, ok := given[optMaximumVersion]; !ok {
		o.MaximumVersion = p.maximum
	}
	// A TLS 1.2 list is left out when the versions say TLS 1.3 only:
	// Envoy would ignore it.
	if _, ok := given[optCiphers]; !ok && p.ciphers != nil && o.MinimumVersion < tlsv3.TlsParameters_TLSv1_3 {
		o.Ciphers = slices.Clone(p.ciphers)
	}
	if _, ok := given[optECDHCurves]; !ok {
		o.ECDHCurves = slices.Clone(p.curves)
	}
	if _, ok := given[optSignatureAlgorithms]; !ok {
		o.SignatureAlgorithms = slices.Clone(p.signatureAlgorithms)
	}
	return p.checkOverrides(o, given)
}

// checkOverrides refuses explicit options that would break the profile's
// promise; other overrides replace their part (checkCombination then
// judges the result as it judges any options).
func (p profile) checkOverrides(o *Options, given map[string]string) error {
	if p.requiredCurve != "" {
		for _, key := range []string{optMinimumVersion, optMaximumVersion} {
			if v, ok := given[key]; ok && o.versionOf(key) != p.minimum {
				return fmt.Errorf("option %s: %s contradicts %s %q, which is %s only (its group %s is negotiated in TLS 1.3 only); leave the version out or choose another profile",
					key, quoteValue(v), optProfile, p.name, tlsVersionName(p.minimum), p.requiredCurve)
			}
		}
		if v, ok := given[optECDHCurves]; ok && !slices.Contains(o.ECDHCurves, p.requiredCurve) {
			return fmt.Errorf("option %s: %s leaves out %s, the group %s %q is for; add it or choose another profile",
				optECDHCurves, quoteValue(v), p.requiredCurve, optProfile, p.name)
		}
	}
	if !p.narrowOnly {
		return nil
	}
	for _, key := range []string{optMinimumVersion, optMaximumVersion} {
		if v, ok := given[key]; ok && (o.versionOf(key) < p.minimum || o.versionOf(key) > p.maximum) {
			return fmt.Errorf("option %s: %s is outside %s %q, which allows %s to %s only",
				key, quoteValue(v), optProfile, p.name, tlsVersionName(p.minimum), tlsVersionName(p.maximum))
		}
	}
	lists := []struct {
		key            string
		explicit, only []string
	}{
		{optCiphers, o.Ciphers, p.ciphers},
		{optECDHCurves, o.ECDHCurves, p.curves},
		{optSignatureAlgorithms, o.SignatureAlgorithms, p.signatureAlgorithms},
	}
	for _, l := range lists {
		if _, ok := given[l.key]; !ok {
			continue
		}
		for _, item := range l.explicit {
			for _, name := range strings.Split(strings.Trim(item, "[]"), "|") {
				if !slices.Contains(l.only, name) {
					return fmt.Errorf("option %s: %s is not in %s %q, which admits only %s",
						l.key, quoteValue(name), optProfile, p.name, strings.Join(l.only, ", "))
				}
			}
		}
	}
	return nil
}

func (o *Options) versionOf(key string) tlsv3.TlsParameters_TlsProtocol {
	if key == optMinimumVersion {
		return o.MinimumVersion
	}
	return o.MaximumVersion
}
