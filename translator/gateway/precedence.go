package gateway

import (
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// routeRank orders the matches of every route on one hostname, as the
// HTTPRoute spec says: an Exact path, then the longest prefix, then a
// method, then more headers, then more query parameters; then the oldest
// route, then namespace/name, then rule and match order.
type routeRank struct {
	pathKind       plan.PathKind
	pathLen        int
	method         bool
	headers, query int
	created        time.Time
	name           string
	rule, match    int
}

func rankOf(r *gwv1.HTTPRoute, m plan.Match, rule, match int) routeRank {
	return routeRank{
		pathKind: m.PathKind,
		pathLen:  len(m.Path),
		method:   m.Method != "",
		headers:  len(m.Headers),
		query:    len(m.Query),
		created:  r.CreationTimestamp.Time,
		name:     input.NameOf(r.Namespace, r.Name).String(),
		rule:     rule,
		match:    match,
	}
}

// pathOrder puts Exact first, then prefixes, then regular expressions
// (implementation-specific: tlsplane tries them last).
var pathOrder = map[plan.PathKind]int{plan.PathExact: 0, plan.PathPrefix: 1, plan.PathRegex: 2}

// compareRanks is negative when a goes first.
func compareRanks(a, b routeRank) int {
	if a.pathKind != b.pathKind {
		return pathOrder[a.pathKind] - pathOrder[b.pathKind]
	}
	if a.pathLen != b.pathLen {
		return b.pathLen - a.pathLen
	}
	if a.method != b.method {
		if a.method {
			return -1
		}
		return 1
	}
	if a.headers != b.headers {
		return b.headers - a.headers
	}
	if a.query != b.query {
		return b.query - a.query
	}
	if !a.created.Equal(b.created) {
		if a.created.Before(b.created) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.name, b.name); c != 0 {
		return c
	}
	if a.rule != b.rule {
		return a.rule - b.rule
	}
	return a.match - b.match
}
