package tlsopts

import (
	"fmt"
	"strings"
)

// fingerprintForms names the two spellings a pinned certificate hash may take.
const fingerprintForms = "a SHA-256 fingerprint is 64 hex characters or 32 colon-separated byte pairs"

// normaliseFingerprint turns a SHA-256 certificate fingerprint, written as 64
// hex characters or as 32 colon-separated byte pairs (as `openssl x509
// -fingerprint -sha256` prints it), in either case, into 64 upper-case hex
// characters: one of the forms Envoy's verify_certificate_hash accepts, and
// one spelling per certificate so duplicates can be seen.
func normaliseFingerprint(s string) (string, bool) {
	hex := s
	if strings.Contains(s, ":") {
		pairs := strings.Split(s, ":")
		if len(pairs) != 32 {
			return "", false
		}
		for _, p := range pairs {
			if len(p) != 2 {
				return "", false
			}
		}
		hex = strings.Join(pairs, "")
	}
	if len(hex) != 64 {
		return "", false
	}
	for i := 0; i < len(hex); i++ {
		if !isHexDigit(hex[i]) {
			return "", false
		}
	}
	return strings.ToUpper(hex), true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// parseCertificateHashes reads tlsplane.io/verifyCertificateHashes: one
// fingerprint per line; blank lines and lines starting with # are ignored.
func parseCertificateHashes(value string) ([]string, error) {
	var hashes []string
	seen := map[string]int{}
	for i, line := range strings.Split(value, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		hash, ok := normaliseFingerprint(line)
		if !ok {
			return nil, fmt.Errorf("line %d: %s is not a SHA-256 fingerprint (%s)", i+1, quoteValue(line), fingerprintForms)
		}
		if first, dup := seen[hash]; dup {
			return nil, fmt.Errorf("line %d: %s repeats the fingerprint on line %d", i+1, quoteValue(line), first)
		}
		seen[hash] = i + 1
		hashes = append(hashes, hash)
	}
	if len(hashes) == 0 {
		return nil, fmt.Errorf("no fingerprint given (%s; blank and # lines are ignored)", fingerprintForms)
	}
	return hashes, nil
}
