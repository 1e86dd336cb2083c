package route

import (
	"slices"
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// The spec's order: Exact path, longest prefix, method, most headers, most
// query parameters, oldest route, namespace/name, rule and match order.
func TestRoutePrecedence(t *testing.T) {
	ranks := []Rank{
		{pathKind: plan.PathRegex, pathLen: 10, name: "a/regex"},
		{pathKind: plan.PathPrefix, pathLen: 1, name: "a/root"},
		{pathKind: plan.PathPrefix, pathLen: 4, name: "z/later-name"},
		{pathKind: plan.PathPrefix, pathLen: 4, name: "a/query", query: 1},
		{pathKind: plan.PathPrefix, pathLen: 4, name: "a/headers", headers: 2},
		{pathKind: plan.PathPrefix, pathLen: 4, name: "a/method", method: true},
		{pathKind: plan.PathPrefix, pathLen: 9, name: "a/long"},
		{pathKind: plan.PathExact, pathLen: 2, name: "a/exact"},
		{pathKind: plan.PathPrefix, pathLen: 4, name: "b/rule1", rule: 1},
		{pathKind: plan.PathPrefix, pathLen: 4, name: "b/rule1", rule: 0},
	}
	slices.SortFunc(ranks, CompareRanks)
	var got []string
	for _, r := range ranks {
		got = append(got, r.name)
	}
	want := "a/exact,a/long,a/method,a/headers,a/query,b/rule1,b/rule1,z/later-name,a/root,a/regex"
	if strings.Join(got, ",") != want {
		t.Fatalf("order = %s\nwant    %s", strings.Join(got, ","), want)
	}
	if ranks[5].rule != 0 || ranks[6].rule != 1 {
		t.Fatalf("rules of one route out of order: %+v %+v", ranks[5], ranks[6])
	}
}
