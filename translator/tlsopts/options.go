package tlsopts

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// Prefix is the domain of the spec.options keys tlsplane implements.
const Prefix = "tlsplane.io/"

// The spec.options keys tlsplane implements.
const (
	optMinimumVersion           = Prefix + "minimumVersion"
	optMaximumVersion           = Prefix + "maximumVersion"
	optCiphers                  = Prefix + "ciphers"
	optECDHCurves               = Prefix + "ecdhCurves"
	optSignatureAlgorithms      = Prefix + "signatureAlgorithms"
	optVerifyCertificateHashes  = Prefix + "verifyCertificateHashes"
	optAllowExpiredCertificate  = Prefix + "allowExpiredCertificate"
	optALPNProtocols            = Prefix + "alpnProtocols"
	optInsecureSkipVerify       = Prefix + "insecureSkipVerify"
	optSANURIPrefixes           = Prefix + "subjectAltNameURIPrefixes"
	optClientCertificateRef     = Prefix + "clientCertificateRef"
	optCRLRef                   = Prefix + "crlRef"
	optCRLDistributionPoints    = Prefix + "crlDistributionPoints"
	optCRLDistributionPointURLs = Prefix + "crlDistributionPointURLs"
	// optProfile is in profiles.go.
)

// insecureSkipVerifyFlag is the control plane's opt-in for
// tlsplane.io/insecureSkipVerify, named in the error when it is missing.
const insecureSkipVerifyFlag = "--allow-insecure-skip-verify"

// Gateway API's own limits on spec.options (MaxProperties, and
// AnnotationValue's MaxLength), enforced again because the directory source
// never passes the CRD's validation.
const (
	maxOptions           = 16
	maxOptionKeyBytes    = 253
	maxOptionValueBytes  = 4096
	maxQuotedValueBytes  = 100
	maxALPNProtocolBytes = 255
)

// Options is a policy's spec.options, parsed and checked against what
// Envoy 1.40 accepts. The zero value is not meaningful: use Parse.
type Options struct {
	MinimumVersion tlsv3.TlsParameters_TlsProtocol `json:"minimumVersion,omitempty"` // default TLSv1_2
	MaximumVersion tlsv3.TlsParameters_TlsProtocol `json:"maximumVersion,omitempty"` // default TLSv1_3
	// Ciphers are BoringSSL names, TLS <= 1.2 only, or equal-preference
	// groups "[A|B]", each ready for tls_params.cipher_suites; nil = Envoy default.
	Ciphers             []string `json:"ciphers,omitempty"`
	ECDHCurves          []string `json:"ecdhCurves,omitempty"`          // order kept; nil = Envoy default
	SignatureAlgorithms []string `json:"signatureAlgorithms,omitempty"` // nil = Envoy default
	// CertificateHashes are SHA-256 fingerprints, normalised to 64 upper-case
	// hex characters; pins in addition to CA validation.
	CertificateHashes       []string `json:"certificateHashes,omitempty"`
	AllowExpiredCertificate bool     `json:"allowExpiredCertificate,omitempty"`
	ALPNProtocols           []string `json:"alpnProtocols,omitempty"`
	// SANURIPrefixes are URI SAN prefixes (SPIFFE trust domains or paths),
	// each ending in "/": a backend certificate whose URI SAN starts with
	// one is accepted, besides the spec's exact names.
	SANURIPrefixes []string `json:"sanURIPrefixes,omitempty"`
	// ClientCertificateRef names the kubernetes.io/tls Secret, in the
	// policy's namespace, whose certificate Envoy presents to the backend.
	ClientCertificateRef string `json:"clientCertificateRef,omitempty"`
	// CRLRef names the ConfigMap or Secret, in the policy's namespace,
	// whose key ca.crl holds the revocation lists of the trusted CAs.
	CRLRef *ObjectRef `json:"crlRef,omitempty"`
	// CRLDistributionPoints is what a missing or stale fetched list does
	// (FailClosed or KeepLastGood); "" fetches none.
	CRLDistributionPoints CRLFetchPolicy `json:"crlDistributionPoints,omitempty"`
	// CRLDistributionPointURLs are lists to fetch besides those the CAs
	// name: an issuing CA's own list, named only in the leaves it signs.
	CRLDistributionPointURLs []string `json:"crlDistributionPointURLs,omitempty"`
	InsecureSkipVerify       bool     `json:"insecureSkipVerify,omitempty"`
	// Profile is the tlsplane.io/profile asked for ("" for none): its
	// parts are already in the fields above; the cluster carries the name.
	Profile string `json:"profile,omitempty"`
}

// optionKeyPattern is Gateway API's validation of an option key
// (AnnotationKey), applied again for the directory source.
var optionKeyPattern = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$`)

// errUnknownOption marks a tlsplane.io/ key tlsplane does not implement.
var errUnknownOption = errors.New("unknown option")

// Parse parses and validates spec.options. Keys under other domains
// than tlsplane.io/ are ignored; un-prefixed keys (reserved by Gateway API)
// and unknown tlsplane.io/ keys are errors. allowInsecure is the control
// plane's opt-in for tlsplane.io/insecureSkipVerify. Keys are checked in
// sorted order and the first error is returned; it names the key and the bad
// value (quoted, and cut short when long), e.g.
//
//	option tlsplane.io/ciphers: "TLS_AES_128_GCM_SHA256" is a TLS 1.3 suite
func Parse[K, V ~string](options map[K]V, allowInsecure bool) (Options, error) {
	o := Options{MinimumVersion: tlsv3.TlsParameters_TLSv1_2, MaximumVersion: tlsv3.TlsParameters_TLSv1_3}
	if len(options) > maxOptions {
		return Options{}, fmt.Errorf("spec.options has %d keys, more than the %d Gateway API allows", len(options), maxOptions)
	}
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	given := map[string]string{}
	for _, key := range keys {
		value := string(options[K(key)])
		if !strings.Contains(key, "/") {
			return Options{}, fmt.Errorf("option %s: un-prefixed keys are reserved by Gateway API; tlsplane's options are under %s", quoteValue(key), Prefix)
		}
		if len(key) > maxOptionKeyBytes || !isOptionName(key) && !optionKeyPattern.MatchString(key) {
			return Options{}, fmt.Errorf("option %s: not a valid key: Gateway API keys are a DNS subdomain, /, and a name", quoteValue(key))
		}
		if !strings.HasPrefix(key, Prefix) {
			continue // another implementation's option
		}
		if len(value) > maxOptionValueBytes {
			return Options{}, fmt.Errorf("option %s: value %s is longer than the %d bytes Gateway API allows", quoteKey(key), quoteValue(value), maxOptionValueBytes)
		}
		err := o.set(key, value, allowInsecure)
		if errors.Is(err, errUnknownOption) {
			return Options{}, fmt.Errorf("option %s: unknown option; tlsplane implements %s", quoteValue(key), strings.Join(optionNames(), ", "))
		}
		if err != nil {
			return Options{}, fmt.Errorf("option %s: %w", key, err)
		}
		given[key] = value
	}
	if err := o.applyProfile(given); err != nil {
		return Options{}, err
	}
	if err := o.checkCombination(given); err != nil {
		return Options{}, err
	}
	return o, nil
}

// isOptionName: one of tlsplane's own keys, all valid keys, so the pattern
// need not be run on the keys nearly every policy uses.
func isOptionName(key string) bool {
	switch key {
	case optMinimumVersion, optMaximumVersion, optCiphers, optECDHCurves, optSignatureAlgorithms,
		optVerifyCertificateHashes, optAllowExpiredCertificate, optALPNProtocols, optInsecureSkipVerify,
		optSANURIPrefixes, optClientCertificateRef, optCRLRef, optCRLDistributionPoints, optCRLDistributionPointURLs, optProfile:
		return true
	}
	return false
}

// set parses one tlsplane.io/ option's value into o.
func (o *Options) set(key, value string, allowInsecure bool) error {
	var err error
	switch key {
	case optMinimumVersion:
		o.MinimumVersion, err = parseTLSVersion(value)
	case optMaximumVersion:
		o.MaximumVersion, err = parseTLSVersion(value)
	case optCiphers:
		o.Ciphers, err = parseCiphers(value)
	case optECDHCurves:
		o.ECDHCurves, err = parseECDHCurves(value)
	case optSignatureAlgorithms:
		o.SignatureAlgorithms, err = parseSignatureAlgorithms(value)
	case optVerifyCertificateHashes:
		o.CertificateHashes, err = parseCertificateHashes(value)
	case optAllowExpiredCertificate:
		o.AllowExpiredCertificate, err = parseBool(value)
	case optALPNProtocols:
		o.ALPNProtocols, err = parseALPNProtocols(value)
	case optSANURIPrefixes:
		o.SANURIPrefixes, err = parseURIPrefixes(value)
	case optClientCertificateRef:
		o.ClientCertificateRef, err = parseSecretName(value)
	case optCRLRef:
		var ref ObjectRef
		if ref, err = ParseObjectRef(value); err == nil {
			o.CRLRef = &ref
		}
	case optProfile:
		o.Profile, err = parseProfile(value)
	case optCRLDistributionPoints:
		o.CRLDistributionPoints, err = parseCRLFetchPolicy(value)
	case optCRLDistributionPointURLs:
		o.CRLDistributionPointURLs, err = parseCRLURLs(value)
	case optInsecureSkipVerify:
		o.InsecureSkipVerify, err = parseBool(value)
		if err == nil && o.InsecureSkipVerify && !allowInsecure {
			err = fmt.Errorf("%s is refused: the control plane was not started with the opt-in flag %s", quoteValue(value), insecureSkipVerifyFlag)
		}
	default:
		err = errUnknownOption
	}
	return err
}

// optionNames lists the implemented keys without the prefix, for the
// unknown-key message.
func optionNames() []string {
	names := []string{}
	for _, key := range []string{optMinimumVersion, optMaximumVersion, optCiphers, optECDHCurves,
		optSignatureAlgorithms, optVerifyCertificateHashes, optAllowExpiredCertificate,
		optALPNProtocols, optInsecureSkipVerify, optSANURIPrefixes, optClientCertificateRef, optCRLRef, optCRLDistributionPoints, optCRLDistributionPointURLs, optProfile} {
		names = append(names, strings.TrimPrefix(key, Prefix))
	}
	sort.Strings(names)
	return names
}

// tlsVersions maps the option spelling to Envoy's enum, in protocol order.
var tlsVersions = []struct {
	name    string
	version tlsv3.TlsParameters_TlsProtocol
}{
	{"TLSv1_0", tlsv3.TlsParameters_TLSv1_0},
	{"TLSv1_1", tlsv3.TlsParameters_TLSv1_1},
	{"TLSv1_2", tlsv3.TlsParameters_TLSv1_2},
	{"TLSv1_3", tlsv3.TlsParameters_TLSv1_3},
}

func parseTLSVersion(value string) (tlsv3.TlsParameters_TlsProtocol, error) {
	for _, v := range tlsVersions {
		if value == v.name {
			return v.version, nil
		}
	}
	return 0, fmt.Errorf("%s is not a TLS version: use TLSv1_0, TLSv1_1, TLSv1_2 or TLSv1_3", quoteValue(value))
}

func tlsVersionName(v tlsv3.TlsParameters_TlsProtocol) string {
	for _, tv := range tlsVersions {
		if tv.version == v {
			return tv.name
		}
	}
	return v.String()
}

// parseBool takes exactly true or false: "1" or "yes" in a security setting
// is more likely a mistake than a wish.
func parseBool(value string) (bool, error) {
	switch value {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%s is not true or false", quoteValue(value))
}

// splitList splits a comma-separated value, trimming whitespace around items;
// empty items are errors.
func splitList(value string) ([]string, error) {
	if strings.TrimSpace(value) == "" {
		return nil, fmt.Errorf("%s is empty: leave the option out for Envoy's default", quoteValue(value))
	}
	items := strings.Split(value, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
		if items[i] == "" {
			return nil, fmt.Errorf("%s has an empty item at position %d", quoteValue(value), i+1)
		}
	}
	return items, nil
}

// listed records item in seen and reports a repeat as an error.
func listed(seen map[string]bool, item string) error {
	if seen[item] {
		return fmt.Errorf("%s is listed twice", quoteValue(item))
	}
	seen[item] = true
	return nil
}

func parseALPNProtocols(value string) ([]string, error) {
	items, err := splitList(value)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range items {
		if len(p) > maxALPNProtocolBytes {
			return nil, fmt.Errorf("%s is longer than the %d bytes an ALPN protocol may have", quoteValue(p), maxALPNProtocolBytes)
		}
		for i := 0; i < len(p); i++ {
			if p[i] <= ' ' || p[i] > '~' {
				return nil, fmt.Errorf("%s is not an ALPN protocol: only printable ASCII without spaces", quoteValue(p))
			}
		}
		if err := listed(seen, p); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// quoteValue quotes a value for an error message, cut short so that a huge
// value gives a short message.
func quoteValue(s string) string {
	if len(s) <= maxQuotedValueBytes {
		return strconv.Quote(s)
	}
	cut := maxQuotedValueBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// quoteKey prints a known key as is, and anything else quoted.
func quoteKey(key string) string {
	for _, name := range optionNames() {
		if key == Prefix+name {
			return key
		}
	}
	return quoteValue(key)
}

// checkCombination rejects options that are each valid but together are
// contradictory or would be silently ignored by Envoy. given holds the
// tlsplane.io/ options present, with their values.
func (o *Options) checkCombination(given map[string]string) error {
	minName, maxName := tlsVersionName(o.MinimumVersion), tlsVersionName(o.MaximumVersion)
	if o.MinimumVersion > o.MaximumVersion {
		if _, ok := given[optMinimumVersion]; !ok && o.Profile != "" {
			return fmt.Errorf("option %s: %s is below %s %s; set %s too", optMaximumVersion, quoteValue(maxName), o.versionSource(given, optMinimumVersion), minName, optMinimumVersion)
		}
		if _, ok := given[optMinimumVersion]; !ok {
			return fmt.Errorf("option %s: %s is below the default minimum version %s; set %s too", optMaximumVersion, quoteValue(maxName), minName, optMinimumVersion)
		}
		return fmt.Errorf("option %s: %s is above %s %s", optMinimumVersion, quoteValue(minName), optMaximumVersion, maxName)
	}
	if v, ok := given[optCiphers]; ok && o.MinimumVersion == tlsv3.TlsParameters_TLSv1_3 {
		return fmt.Errorf("option %s: %s would be ignored: %s is TLSv1_3, and Envoy does not let TLS 1.3 suites be chosen", optCiphers, quoteValue(v), o.versionSource(given, optMinimumVersion))
	}
	if v, ok := given[optECDHCurves]; ok && o.MaximumVersion < tlsv3.TlsParameters_TLSv1_3 && curvesNeedTLS13(o.ECDHCurves) {
		return fmt.Errorf("option %s: %s is only negotiated in TLS 1.3, but %s is %s", optECDHCurves, quoteValue(v), o.versionSource(given, optMaximumVersion), maxName)
	}
	// TLS 1.0 and 1.1 do not negotiate signature algorithms, so only a range
	// reaching TLS 1.2 or 1.3 is checked.
	tls12 := o.MinimumVersion <= tlsv3.TlsParameters_TLSv1_2 && o.MaximumVersion >= tlsv3.TlsParameters_TLSv1_2
	tls13 := o.MaximumVersion == tlsv3.TlsParameters_TLSv1_3
	if v, ok := given[optSignatureAlgorithms]; ok && (tls12 || tls13) && !signatureAlgorithmsUsable(o.SignatureAlgorithms, tls12, tls13) {
		return fmt.Errorf("option %s: %s has no algorithm usable between %s and %s", optSignatureAlgorithms, quoteValue(v), minName, maxName)
	}
	if o.InsecureSkipVerify {
		if o.AllowExpiredCertificate {
			return insecureConflict(optAllowExpiredCertificate)
		}
		if o.CertificateHashes != nil {
			return insecureConflict(optVerifyCertificateHashes)
		}
		if o.SANURIPrefixes != nil {
			return insecureConflict(optSANURIPrefixes)
		}
		if o.CRLRef != nil {
			return insecureConflict(optCRLRef)
		}
		if o.CRLDistributionPoints != "" {
			return insecureConflict(optCRLDistributionPoints)
		}
	}
	if v, ok := given[optCRLDistributionPointURLs]; ok && o.CRLDistributionPoints == "" {
		return fmt.Errorf("option %s: %s needs %s (FailClosed or KeepLastGood)", optCRLDistributionPointURLs, quoteValue(v), optCRLDistributionPoints)
	}
	if o.CRLRef != nil && o.CRLDistributionPoints != "" {
		return fmt.Errorf("option %s: %s cannot be used with %s: a policy has one source of revocation lists", optCRLDistributionPoints, quoteValue(given[optCRLDistributionPoints]), optCRLRef)
	}
	return nil
}

// versionSource names where a version came from, for a message: the
// option itself, or the profile that set it.
func (o *Options) versionSource(given map[string]string, key string) string {
	if _, ok := given[key]; ok || o.Profile == "" {
		return key
	}
	return fmt.Sprintf("%s (from %s %q)", key, optProfile, o.Profile)
}

func insecureConflict(key string) error {
	return fmt.Errorf("option %s: \"true\" turns certificate validation off, so %s cannot be honoured", optInsecureSkipVerify, key)
}
