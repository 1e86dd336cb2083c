package route

import (
	"fmt"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/referencegrant"
)

// rule is one HTTPRoute or GRPCRoute rule as the judging both kinds share
// reads it (M is the kind's match type): the kinds differ only in their
// retries and timeouts, their matches and how those rank.
type rule[M any] struct {
	filters  []gwv1.HTTPRouteFilter // GRPCRoute filters as their HTTPRoute twins
	backends []backendRef
	matches  []M
	// timing sets what only HTTPRoute rules have (retries, timeouts) on
	// the rule's route, and reports whether it is not supported; nil when
	// the kind has none.
	timing func(p *plan.Route) (unsupported bool)
	// name is the Envoy route name of match j of rule i.
	name func(namespace, route string, i, j int) string
	// match sets match j of rule i on p and ranks it.
	match func(p *plan.Route, i, j int, m M) (Rank, error)
}

// judgeRule adds rule i's route plans to rs: one route from its filters and
// backends, then a copy of it per match, and one that matches every
// request when the rule lists none. It returns problems with the rule's
// unresolved backendRefs added.
func judgeRule[M any](rs *Route, i int, r rule[M], ix *input.Index, grants referencegrant.Grants, problems []string) []string {
	base := plan.Route{}
	var unsupported bool
	unsupported, problems = rs.ruleFilters(i, r.filters, &base, ix, grants, problems)
	if r.timing != nil && r.timing(&base) {
		unsupported = true
	}
	backends, ruleProblems := rs.ruleBackends(i, r.backends, ix, grants)
	problems = append(problems, ruleProblems...)
	sendTo(&base, backends, unsupported)
	matches := r.matches
	if len(matches) == 0 {
		matches = make([]M, 1) // the empty match: every request
	}
	for j, m := range matches {
		p := base
		p.Name = r.name(rs.Name.Namespace, rs.Name.Name, i, j)
		rank, err := r.match(&p, i, j, m)
		if err != nil {
			rs.Unsupported = append(rs.Unsupported, fmt.Sprintf("rules[%d].matches[%d]: %v", i, j, err))
			continue
		}
		rs.Plans = append(rs.Plans, Ranked{Plan: p, Rank: rank})
	}
	return problems
}

// resolved notes the backendRefs of every rule that did not resolve.
func (rs *Route) resolved(problems []string) {
	if len(problems) > 0 {
		rs.ResolvedMsg = strings.Join(problems, "; ")
	}
}
