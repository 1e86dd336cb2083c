package route

import (
	"strings"
	"time"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// Rank orders the matches of every route on one hostname, as the
// HTTPRoute spec says: an Exact path, then the longest prefix, then a
// method, then more headers, then more query parameters; then the oldest
// route, then namespace/name, then rule and match order. GRPCRoutes (grpc)
// go by the GRPCRoute spec: the longest service, then the longest method,
// then more headers, then the same tie-breaks. The two kinds never share a
// hostname of a listener (gateway/conflicts.go); were they to, HTTPRoutes
// go first.
type Rank struct {
	grpc                bool
	pathKind            plan.PathKind
	pathLen             int
	service, methodName int // GRPCRoute: characters of the matched service and method
	method              bool
	headers, query      int
	created             time.Time
	name                string
	rule, match         int
}

func (rs *Route) rankOf(m plan.Match, rule, match int) Rank {
	return Rank{
		pathKind: m.PathKind,
		pathLen:  len(m.Path),
		method:   m.Method != "",
		headers:  len(m.Headers),
		query:    len(m.Query),
		created:  rs.Meta.CreationTimestamp.Time,
		name:     rs.Name.String(),
		rule:     rule,
		match:    match,
	}
}

// grpcRankOf is a GRPCRoute match's rank.
func (rs *Route) grpcRankOf(service, method string, headers, rule, match int) Rank {
	return Rank{grpc: true, service: len(service), methodName: len(method), headers: headers,
		created: rs.Meta.CreationTimestamp.Time, name: rs.Name.String(), rule: rule, match: match}
}

// pathOrder puts Exact first, then prefixes, then regular expressions
// (implementation-specific: tlsplane tries them last).
var pathOrder = map[plan.PathKind]int{plan.PathExact: 0, plan.PathPrefix: 1, plan.PathRegex: 2}

// CompareRanks is negative when a goes first.
func CompareRanks(a, b Rank) int {
	if a.grpc != b.grpc {
		if b.grpc {
			return -1
		}
		return 1
	}
	if a.grpc {
		if a.service != b.service {
			return b.service - a.service
		}
		if a.methodName != b.methodName {
			return b.methodName - a.methodName
		}
		if a.headers != b.headers {
			return b.headers - a.headers
		}
		return compareAge(a, b)
	}
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
	return compareAge(a, b)
}

// compareAge breaks ties: the oldest route, namespace/name, rule, match.
func compareAge(a, b Rank) int {
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

// OlderFirst: a wins over b, the oldest then by namespace/name.
func OlderFirst(a, b *Route) bool {
	ta, tb := a.Meta.CreationTimestamp.Time, b.Meta.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.Name.String() < b.Name.String()
}
