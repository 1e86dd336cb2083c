package tlsopts

import (
	"fmt"
	"net/url"
)

// maxCRLURLs bounds tlsplane.io/crlDistributionPointURLs.
const maxCRLURLs = 8

// CRLFetchPolicy is what tlsplane.io/crlDistributionPoints asks of a
// revocation list fetched from a CA's distribution point when no fresh one
// is at hand (not fetched yet, unreachable, or past its refresh time).
type CRLFetchPolicy string

const (
	// CRLFailClosed: the policy is not valid until every list is fresh.
	CRLFailClosed CRLFetchPolicy = "FailClosed"
	// CRLKeepLastGood: the last good list is served, and a condition says
	// how old it is and why no newer one came.
	CRLKeepLastGood CRLFetchPolicy = "KeepLastGood"
)

// CRLDistributionPointsKey is the option, for messages and the engine.
const (
	CRLDistributionPointsKey    = optCRLDistributionPoints
	CRLDistributionPointURLsKey = optCRLDistributionPointURLs
)

func parseCRLFetchPolicy(value string) (CRLFetchPolicy, error) {
	switch p := CRLFetchPolicy(value); p {
	case CRLFailClosed, CRLKeepLastGood:
		return p, nil
	}
	return "", fmt.Errorf("%s is not FailClosed or KeepLastGood", quoteValue(value))
}

// parseCRLURLs reads a comma-separated list of http:// or https:// URLs;
// whether tlsplane may fetch from their hosts is the operator's
// --crl-fetch-allow.
func parseCRLURLs(value string) ([]string, error) {
	items, err := splitList(value)
	if err != nil {
		return nil, err
	}
	if len(items) > maxCRLURLs {
		return nil, fmt.Errorf("%s lists %d URLs, more than %d", quoteValue(value), len(items), maxCRLURLs)
	}
	seen := map[string]bool{}
	for _, item := range items {
		u, err := url.Parse(item)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
			return nil, fmt.Errorf("%s is not an http:// or https:// URL without user information", quoteValue(item))
		}
		if err := listed(seen, item); err != nil {
			return nil, err
		}
	}
	return items, nil
}
