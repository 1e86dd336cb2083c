package tlsopts

import (
	"fmt"
	"net/url"
	"strings"
)

// maxURIPrefixes bounds tlsplane.io/subjectAltNameURIPrefixes: each is a
// SAN matcher every handshake of the policy's clusters tries.
const maxURIPrefixes = 16

// parseURIPrefixes reads tlsplane.io/subjectAltNameURIPrefixes: URI
// prefixes such as spiffe://prod.example.com/ns/shop/. Each must name a
// scheme and an authority and end with "/": a prefix that stops inside
// the authority or a path segment would also match another trust domain
// (spiffe://prod.example.com matches spiffe://prod.example.com.evil/x).
func parseURIPrefixes(value string) ([]string, error) {
	items, err := splitList(value)
	if err != nil {
		return nil, err
	}
	if len(items) > maxURIPrefixes {
		return nil, fmt.Errorf("%s lists %d prefixes, more than %d", quoteValue(value), len(items), maxURIPrefixes)
	}
	seen := map[string]bool{}
	for _, p := range items {
		if err := checkURIPrefix(p); err != nil {
			return nil, err
		}
		if err := listed(seen, p); err != nil {
			return nil, err
		}
	}
	return items, nil
}

func checkURIPrefix(p string) error {
	u, err := url.Parse(p)
	switch {
	case err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%s is not a URI prefix: write scheme://authority/path/, e.g. spiffe://prod.example.com/ns/shop/", quoteValue(p))
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(p, "?#"):
		return fmt.Errorf("%s: a URI SAN prefix has no user, query or fragment", quoteValue(p))
	case !strings.HasSuffix(p, "/"):
		return fmt.Errorf("%s must end with \"/\": a prefix that stops inside the authority or a path segment would also match %s", quoteValue(p), strings.TrimSuffix(p, "/")+"-other/…")
	case strings.Contains(u.Path, "//"):
		return fmt.Errorf("%s has an empty path segment", quoteValue(p))
	}
	return nil
}
