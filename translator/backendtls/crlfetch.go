package backendtls

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// CRLFetchFlag is the control plane's opt-in for fetching revocation lists
// (tlsplane.io/crlDistributionPoints), named when it is missing.
const CRLFetchFlag = "--crl-fetch-allow"

// ReasonCRLUnavailable is the ResolvedRefs reason of a policy failing
// closed because a distribution point has no fresh, verified list.
const ReasonCRLUnavailable = "CRLDistributionPointUnavailable"

// ConditionRevocationListsFresh says whether the lists fetched for a policy
// with tlsplane.io/crlDistributionPoints are current.
const ConditionRevocationListsFresh = "tlsplane.io/RevocationListsFresh"

// The reasons of ConditionRevocationListsFresh.
const (
	ReasonCRLFresh       = "Fresh"
	ReasonCRLStale       = "Stale"       // a refresh failed: the last good list is older than it should be
	ReasonCRLExpired     = "Expired"     // past nextUpdate: Envoy refuses every certificate of the CA
	ReasonCRLUnreachable = "Unreachable" // no good list was ever fetched
)

// crlFetchedSource names the fetched lists in the CA secret's name: no
// object ref (Kind/namespace/name) can be spelled so.
const crlFetchedSource = "distribution-points"

// CRLWant is one distribution point a policy wants fetched, with the CA
// certificates (DER) a list from there must be signed by one of.
type CRLWant struct {
	URL string
	CAs [][]byte
}

// Freshness is ConditionRevocationListsFresh's content.
type Freshness struct {
	Fresh           bool
	Reason, Message string
}

// FetchedCRLs is what option tlsplane.io/crlDistributionPoints decides for
// a policy or XBackend.
type FetchedCRLs struct {
	// Wants are the distribution points to fetch, sorted by URL; set even
	// when the lists cannot be used, so they get fetched.
	Wants []CRLWant
	// Freshness is the condition; nil when nothing was judged.
	Freshness *Freshness
}

// WithFetchedCRLs is bundle with the lists fetched from the distribution
// points its CAs name (the CRL distribution points extension of each CA
// certificate: a self-signed CA's names its own list, an intermediate's
// its parent's). Each list is verified again against the bundle's CAs.
// urls (tlsplane.io/crlDistributionPointURLs) are lists wanted besides,
// each required: an issuing CA's own list, whose URL only the leaves it
// signs carry. enabled is the operator's opt-in. When a list is missing, or stale with
// FailClosed, problem says why and bundle comes back unchanged. (No CRL
// for the expiry note: the fetcher refreshes the lists before their
// nextUpdate, and the condition says when one expired.)
func WithFetchedCRLs(policy tlsopts.CRLFetchPolicy, urls []string, enabled bool, bundle *Bundle, ix *input.Index) (*Bundle, FetchedCRLs, string) {
	what := fmt.Sprintf("option %s: %q", tlsopts.CRLDistributionPointsKey, policy)
	var f FetchedCRLs
	if !enabled {
		return bundle, f, what + ": fetching revocation lists is off: the control plane was not started with " + CRLFetchFlag
	}
	if bundle.PEM == "" {
		return bundle, f, what + ": needs caCertificateRefs: the system CA bundle lives on the Envoy hosts, so tlsplane cannot read its distribution points nor check who signed a list"
	}
	cas, err := certificates(bundle.PEM)
	if err != nil {
		return bundle, f, fmt.Sprintf("%s: the CA bundle: %v", what, err)
	}
	groups := pointGroups(cas, urls)
	f.Wants = distributionPoints(groups, cas)
	if len(f.Wants) == 0 {
		f.Freshness = &Freshness{Reason: ReasonCRLUnreachable, Message: "the CA bundle of " + bundle.Sources + " names no CRL distribution point, and " + tlsopts.CRLDistributionPointURLsKey + " none"}
		return bundle, f, what + ": " + f.Freshness.Message
	}
	var out strings.Builder
	var stale, fresh []string
	worst := ReasonCRLFresh
	served := map[string]bool{}
	for _, urls := range groups {
		// A certificate's points are alternatives for one list: the best
		// of them serves.
		var best *pointState
		var unusable []string
		for _, u := range urls {
			st := judgePoint(u, ix.FetchedCRLs[u], cas)
			if st.rank == rankUnusable {
				unusable = append(unusable, st.message)
			} else if best == nil || st.rank < best.rank {
				best = &st
			}
		}
		if best == nil {
			f.Freshness = &Freshness{Reason: ReasonCRLUnreachable, Message: strings.Join(unusable, "; ")}
			return bundle, f, what + ": " + f.Freshness.Message
		}
		if !served[best.url] {
			served[best.url] = true
			out.WriteString(best.pem)
		}
		switch best.rank {
		case rankExpired:
			worst = ReasonCRLExpired
			stale = append(stale, best.message)
		case rankStale:
			if worst == ReasonCRLFresh {
				worst = ReasonCRLStale
			}
			stale = append(stale, best.message)
		default:
			fresh = append(fresh, best.message)
		}
	}
	if len(stale) > 0 {
		f.Freshness = &Freshness{Reason: worst, Message: strings.Join(stale, "; ")}
		if policy == tlsopts.CRLFailClosed {
			return bundle, f, what + ": " + f.Freshness.Message
		}
	} else {
		f.Freshness = &Freshness{Fresh: true, Reason: ReasonCRLFresh, Message: "the lists are fresh: " + strings.Join(fresh, "; ")}
	}
	b := *bundle
	b.SecretName, b.CRL = plan.CRLSecretName(b.SecretName, crlFetchedSource), out.String()
	return &b, f, ""
}

// The ranks of a point's list, best first.
const (
	rankFresh = iota
	rankStale
	rankExpired
	rankUnusable
)

// pointState is what one distribution point's fetched list is worth.
type pointState struct {
	url     string
	rank    int
	message string
	pem     string // the list, verified; "" when unusable
}

// judgePoint verifies the list fetched from url against cas and says how
// fresh it is.
func judgePoint(url string, fetched *input.FetchedCRL, cas []*x509.Certificate) pointState {
	st := pointState{url: url, rank: rankUnusable}
	if fetched == nil || fetched.DER == nil {
		st.message = fmt.Sprintf("the list at %s is not fetched yet", url)
		if fetched != nil && fetched.Error != "" {
			st.message = fmt.Sprintf("the list at %s cannot be fetched since %s: %s", url, stamp(fetched.ErrorSince), fetched.Error)
		}
		return st
	}
	var pem bytes.Buffer
	if issuer, err := new(CRL).add(&pem, fetched.DER, cas); err != nil {
		st.message = fmt.Sprintf("the list at %s (issuer %q) %v", url, issuer, err)
		return st
	}
	st.pem = pem.String()
	validity := fmt.Sprintf("thisUpdate %s, nextUpdate %s", stamp(fetched.ThisUpdate), stamp(fetched.NextUpdate))
	age := fmt.Sprintf("last good list fetched %s, %s", stamp(fetched.FetchedAt), validity)
	switch {
	case fetched.Expired:
		st.rank = rankExpired
		st.message = fmt.Sprintf("the list at %s is past its nextUpdate, so Envoy refuses every certificate of its CA (%s; last error since %s: %s)", url, age, stamp(fetched.ErrorSince), fetched.Error)
	case fetched.Error != "":
		st.rank = rankStale
		st.message = fmt.Sprintf("the list at %s could not be refreshed since %s: %s (%s)", url, stamp(fetched.ErrorSince), fetched.Error, age)
	default:
		st.rank = rankFresh
		st.message = fmt.Sprintf("%s (%s)", url, validity)
	}
	return st
}

// pointGroups are the distinct CRL distribution point lists of cas, in
// bundle order, then each of urls alone: each group is one list's
// alternative URLs (an ldap:// and an http:// one, say).
func pointGroups(cas []*x509.Certificate, urls []string) [][]string {
	var groups [][]string
	seen := map[string]bool{}
	add := func(points []string) {
		if key := strings.Join(points, "\n"); len(points) > 0 && !seen[key] {
			seen[key] = true
			groups = append(groups, points)
		}
	}
	for _, ca := range cas {
		add(ca.CRLDistributionPoints)
	}
	for _, u := range urls {
		add([]string{u})
	}
	return groups
}

// distributionPoints are the URLs of groups, sorted, each with every CA
// of the bundle (DER): the list at an intermediate's point is signed by
// its parent.
func distributionPoints(groups [][]string, cas []*x509.Certificate) []CRLWant {
	seen := map[string]bool{}
	var urls []string
	for _, group := range groups {
		for _, u := range group {
			if !seen[u] {
				seen[u] = true
				urls = append(urls, u)
			}
		}
	}
	sort.Strings(urls)
	ders := make([][]byte, len(cas))
	for i, ca := range cas {
		ders[i] = ca.Raw
	}
	wants := make([]CRLWant, len(urls))
	for i, u := range urls {
		wants[i] = CRLWant{URL: u, CAs: ders}
	}
	return wants
}

// stamp prints a time for a message: UTC, seconds; "never" when zero.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
