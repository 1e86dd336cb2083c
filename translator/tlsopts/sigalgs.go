package tlsopts

// signatureAlgorithm is one name tlsplane.io/signatureAlgorithms takes: the
// IANA-style names Envoy 1.40 accepts (see ciphers.go for how the tables were
// established), with the TLS versions in which BoringSSL uses the algorithm
// for the server's handshake signature.
type signatureAlgorithm struct {
	name         string
	tls12, tls13 bool
}

var signatureAlgorithms = []signatureAlgorithm{
	{"ecdsa_secp256r1_sha256", true, true},
	{"ecdsa_secp384r1_sha384", true, true},
	{"ecdsa_secp521r1_sha512", true, true},
	{"rsa_pss_rsae_sha256", true, true},
	{"rsa_pss_rsae_sha384", true, true},
	{"rsa_pss_rsae_sha512", true, true},
	{"ed25519", true, true},
	// PKCS#1 v1.5 and SHA-1 signatures are not allowed in TLS 1.3 handshakes.
	{"rsa_pkcs1_sha256", true, false},
	{"rsa_pkcs1_sha384", true, false},
	{"rsa_pkcs1_sha512", true, false},
	{"rsa_pkcs1_sha1", true, false},
	{"ecdsa_sha1", true, false},
	// The legacy PKCS#1 code point is for TLS 1.3 client certificates only,
	// so it never verifies a backend's handshake.
	{"rsa_pkcs1_sha256_legacy", false, false},
	// ML-DSA is defined for TLS 1.3 only.
	{"mldsa44", false, true},
	{"mldsa65", false, true},
	{"mldsa87", false, true},
}

// sigalgAliases are BoringSSL's OpenSSL-style spellings, which Envoy 1.40
// also accepts; tlsplane points to the canonical name instead.
var sigalgAliases = map[string]string{
	"RSA+SHA1":       "rsa_pkcs1_sha1",
	"RSA+SHA256":     "rsa_pkcs1_sha256",
	"RSA+SHA384":     "rsa_pkcs1_sha384",
	"RSA+SHA512":     "rsa_pkcs1_sha512",
	"ECDSA+SHA1":     "ecdsa_sha1",
	"ECDSA+SHA256":   "ecdsa_secp256r1_sha256",
	"ECDSA+SHA384":   "ecdsa_secp384r1_sha384",
	"ECDSA+SHA512":   "ecdsa_secp521r1_sha512",
	"RSA-PSS+SHA256": "rsa_pss_rsae_sha256",
	"RSA-PSS+SHA384": "rsa_pss_rsae_sha384",
	"RSA-PSS+SHA512": "rsa_pss_rsae_sha512",
	"PSS+SHA256":     "rsa_pss_rsae_sha256",
	"PSS+SHA384":     "rsa_pss_rsae_sha384",
	"PSS+SHA512":     "rsa_pss_rsae_sha512",
}

// parseSignatureAlgorithms reads tlsplane.io/signatureAlgorithms, keeping
// the order given (it is the preference order offered to the server).
func parseSignatureAlgorithms(value string) ([]string, error) {
	items, err := splitList(value)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, name := range items {
		if _, ok := lookupSignatureAlgorithm(name); !ok {
			return nil, unknownSignatureAlgorithm(name)
		}
		if err := listed(seen, name); err != nil {
			return nil, err
		}
	}
	return items, nil
}

func lookupSignatureAlgorithm(name string) (signatureAlgorithm, bool) {
	for _, a := range signatureAlgorithms {
		if name == a.name {
			return a, true
		}
	}
	return signatureAlgorithm{}, false
}

func unknownSignatureAlgorithm(name string) error {
	return unknownName(name, sigalgAliases, signatureAlgorithms, func(a signatureAlgorithm) string { return a.name },
		"is not a signature algorithm Envoy 1.40 accepts", " (names such as ecdsa_secp256r1_sha256, rsa_pss_rsae_sha256, ed25519)")
}

// signatureAlgorithmsUsable reports whether any algorithm named can sign a
// handshake of TLS 1.2 (tls12) or TLS 1.3 (tls13).
func signatureAlgorithmsUsable(names []string, tls12, tls13 bool) bool {
	for _, name := range names {
		a, _ := lookupSignatureAlgorithm(name)
		if tls12 && a.tls12 || tls13 && a.tls13 {
			return true
		}
	}
	return false
}
