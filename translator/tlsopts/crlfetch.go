package tlsopts

import "fmt"

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
const CRLDistributionPointsKey = optCRLDistributionPoints

func parseCRLFetchPolicy(value string) (CRLFetchPolicy, error) {
	switch p := CRLFetchPolicy(value); p {
	case CRLFailClosed, CRLKeepLastGood:
		return p, nil
	}
	return "", fmt.Errorf("%s is not FailClosed or KeepLastGood", quoteValue(value))
}
