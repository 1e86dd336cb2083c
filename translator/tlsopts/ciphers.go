package tlsopts

import (
	"fmt"
	"strings"
)

// The tables in ciphers.go, curves.go and sigalgs.go were established
// empirically against Envoy 1.40.0 (BoringSSL): for each candidate name,
// a static bootstrap with one cluster whose UpstreamTlsContext sets
// tls_params.cipher_suites (ecdh_curves, signature_algorithms) to that single
// name was checked with
//
//	envoy --mode validate --disable-hot-restart -c bootstrap.yaml
//
// and kept when Envoy exited 0. Candidates: every name `openssl ciphers
// -stdname ALL:COMPLEMENTOFALL` prints (both spellings) plus BoringSSL's
// legacy, PSK and AEAD-* names. TestEnvoyAcceptsOptionNames re-checks every
// entry against the real binary.

// cipherSuite is one TLS <= 1.2 suite Envoy 1.40 accepts, under its BoringSSL
// name (what tlsplane.io/ciphers takes) and its IANA name (which Envoy also
// accepts, but which tlsplane answers with a pointer to the BoringSSL name so
// that each suite has one spelling and duplicates can be seen).
type cipherSuite struct {
	name     string
	ianaName string
}

var cipherSuites = []cipherSuite{
	{"ECDHE-ECDSA-AES128-GCM-SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
	{"ECDHE-ECDSA-AES256-GCM-SHA384", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
	{"ECDHE-ECDSA-CHACHA20-POLY1305", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"},
	{"ECDHE-RSA-AES128-GCM-SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
	{"ECDHE-RSA-AES256-GCM-SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
	{"ECDHE-RSA-CHACHA20-POLY1305", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"},
	{"ECDHE-ECDSA-AES128-SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256"},
	{"ECDHE-RSA-AES128-SHA256", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256"},
	{"ECDHE-ECDSA-AES128-SHA", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"},
	{"ECDHE-ECDSA-AES256-SHA", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA"},
	{"ECDHE-RSA-AES128-SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"},
	{"ECDHE-RSA-AES256-SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA"},
	{"ECDHE-PSK-CHACHA20-POLY1305", "TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256"},
	{"ECDHE-PSK-AES128-CBC-SHA", "TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA"},
	{"ECDHE-PSK-AES256-CBC-SHA", "TLS_ECDHE_PSK_WITH_AES_256_CBC_SHA"},
	{"AES128-GCM-SHA256", "TLS_RSA_WITH_AES_128_GCM_SHA256"},
	{"AES256-GCM-SHA384", "TLS_RSA_WITH_AES_256_GCM_SHA384"},
	{"AES128-SHA", "TLS_RSA_WITH_AES_128_CBC_SHA"},
	{"AES256-SHA", "TLS_RSA_WITH_AES_256_CBC_SHA"},
	{"PSK-AES128-CBC-SHA", "TLS_PSK_WITH_AES_128_CBC_SHA"},
	{"PSK-AES256-CBC-SHA", "TLS_PSK_WITH_AES_256_CBC_SHA"},
	{"DES-CBC3-SHA", "TLS_RSA_WITH_3DES_EDE_CBC_SHA"},
}

// tls13Suites are TLS 1.3 suite names: Envoy does not let them be configured
// (BoringSSL always offers all three), so naming one is a mistake worth its
// own message.
var tls13Suites = []string{
	"TLS_AES_128_GCM_SHA256",
	"TLS_AES_256_GCM_SHA384",
	"TLS_CHACHA20_POLY1305_SHA256",
	"AEAD-AES128-GCM-SHA256",
	"AEAD-AES256-GCM-SHA384",
	"AEAD-CHACHA20-POLY1305",
}

// parseCiphers reads tlsplane.io/ciphers: BoringSSL names and Envoy's
// equal-preference groups "[A|B]" (Envoy 1.40 accepts them; whitespace inside
// a group is trimmed here because Envoy would reject it).
func parseCiphers(value string) ([]string, error) {
	items, err := splitList(value)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	ciphers := make([]string, 0, len(items))
	for _, item := range items {
		if !strings.ContainsAny(item, "[]|") {
			if err := checkCipher(item, seen); err != nil {
				return nil, err
			}
			ciphers = append(ciphers, item)
			continue
		}
		group, err := parseCipherGroup(item, seen)
		if err != nil {
			return nil, err
		}
		ciphers = append(ciphers, group)
	}
	return ciphers, nil
}

// parseCipherGroup reads one "[A|B]" group and returns it in the spelling
// Envoy takes.
func parseCipherGroup(item string, seen map[string]bool) (string, error) {
	inner, ok := strings.CutPrefix(item, "[")
	if ok {
		inner, ok = strings.CutSuffix(inner, "]")
	}
	if !ok || strings.ContainsAny(inner, "[]") {
		return "", fmt.Errorf("%s is not an equal-preference group: write [CIPHER|CIPHER]", quoteValue(item))
	}
	names := strings.Split(inner, "|")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
		if names[i] == "" {
			return "", fmt.Errorf("%s has an empty cipher name in its group", quoteValue(item))
		}
		if err := checkCipher(names[i], seen); err != nil {
			return "", err
		}
	}
	return "[" + strings.Join(names, "|") + "]", nil
}

// checkCipher accepts one BoringSSL TLS <= 1.2 cipher name, not seen before.
func checkCipher(name string, seen map[string]bool) error {
	for _, s := range tls13Suites {
		if name == s {
			return fmt.Errorf("%s is a TLS 1.3 suite: Envoy offers all TLS 1.3 suites and does not let them be chosen; list TLS 1.2 ciphers only", quoteValue(name))
		}
	}
	for _, c := range cipherSuites {
		switch {
		case name == c.name:
			return listed(seen, name)
		case name == c.ianaName:
			return fmt.Errorf("%s is the IANA name: use the BoringSSL name %q", quoteValue(name), c.name)
		case strings.EqualFold(name, c.name):
			return fmt.Errorf("%s is not a cipher Envoy 1.40 accepts: did you mean %q?", quoteValue(name), c.name)
		}
	}
	return fmt.Errorf("%s is not a TLS 1.2 cipher Envoy 1.40 accepts (BoringSSL names such as ECDHE-RSA-AES128-GCM-SHA256)", quoteValue(name))
}
