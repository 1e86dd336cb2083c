package tlsopts

// ecdhCurves are the key-exchange groups tlsplane.io/ecdhCurves takes: the
// five the issue names, each accepted by Envoy 1.40 (see ciphers.go for how
// the tables were established). tls13Only groups are never negotiated in
// TLS 1.2, so a list of only those needs TLS 1.3 allowed.
type ecdhCurve struct {
	name      string
	tls13Only bool
}

var ecdhCurves = []ecdhCurve{
	{"X25519MLKEM768", true},
	{"X25519", false},
	{"P-256", false},
	{"P-384", false},
	{"P-521", false},
}

// curveAliases are other spellings Envoy 1.40 accepts for the same groups;
// tlsplane points to the canonical one so that each group has one spelling.
var curveAliases = map[string]string{
	"x25519":     "X25519",
	"prime256v1": "P-256",
	"secp384r1":  "P-384",
	"secp521r1":  "P-521",
}

// curvesNotOffered are groups Envoy 1.40 accepts that tlsplane deliberately
// does not offer: MLKEM1024 is a pure post-quantum KEM without a classical
// half, outside the list.
var curvesNotOffered = []string{"MLKEM1024"}

// parseECDHCurves reads tlsplane.io/ecdhCurves, keeping the order given.
func parseECDHCurves(value string) ([]string, error) {
	items, err := splitList(value)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, name := range items {
		if err := checkECDHCurve(name); err != nil {
			return nil, err
		}
		if err := listed(seen, name); err != nil {
			return nil, err
		}
	}
	return items, nil
}

func checkECDHCurve(name string) error {
	for _, c := range ecdhCurves {
		if name == c.name {
			return nil
		}
	}
	return unknownName(name, curveAliases, ecdhCurves, func(c ecdhCurve) string { return c.name },
		"is not a curve tlsplane offers", ": use X25519MLKEM768, X25519, P-256, P-384 or P-521")
}

// curvesNeedTLS13 reports whether every curve named is TLS 1.3 only.
func curvesNeedTLS13(names []string) bool {
	for _, name := range names {
		for _, c := range ecdhCurves {
			if name == c.name && !c.tls13Only {
				return false
			}
		}
	}
	return true
}
