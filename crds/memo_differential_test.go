package crds

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// libraryValidator is channel's Validator without a memo: every object
// validated by the library's calls alone, the baseline the memo must
// match.
func libraryValidator(t *testing.T, channel string) *Validator {
	t.Helper()
	v, err := build(channel)
	if err != nil {
		t.Fatal(err)
	}
	for _, ver := range v.versions {
		ver.memo = nil
	}
	return v
}

// variedRoute is an HTTPRoute of choices that share values between
// routes, valid and invalid at every depth, drawn from r.
func variedRoute(r *rand.Rand, i int) string {
	pick := func(choices ...string) string { return choices[r.IntN(len(choices))] }
	parentRef := func() string {
		return pick(`{name: gw}`, `{name: gw, sectionName: https}`, `{name: gw, port: 443}`, `{name: gw, port: 99999}`, `{name: gw, kind: Service, group: ""}`, `{name: other, namespace: infra}`)
	}
	match := func() string {
		return pick(`{path: {type: PathPrefix, value: /}}`, `{path: {type: PathPrefix, value: /api}}`, `{path: {type: Exact, value: "/a//b"}}`, `{path: {type: RegularExpression, value: ".*"}}`, `{method: GET}`, `{headers: [{name: x, value: y}, {name: x, value: z}]}`)
	}
	filter := func() string {
		return pick(`{type: RequestRedirect, requestRedirect: {scheme: https}}`, `{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2}}}`, `{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: a, value: b}]}}`, `{type: RequestHeaderModifier}`)
	}
	backendRef := func() string {
		return pick(`{name: svc-`+fmt.Sprint(i)+`, port: 443}`, `{name: pay, port: 443}`, `{name: pay}`, `{name: pay, port: 443, weight: -1}`, `{name: b, kind: Bucket, group: example.com}`)
	}
	list := func(n int, item func() string) string {
		var items []string
		for range r.IntN(n + 1) {
			items = append(items, item())
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	var rules []string
	for range 1 + r.IntN(3) {
		rule := "{matches: " + list(2, match) + ", backendRefs: " + list(2, backendRef)
		if r.IntN(3) == 0 {
			rule += ", filters: " + list(2, filter)
		}
		if r.IntN(4) == 0 {
			rule += ", name: " + pick("a", "b")
		}
		rules = append(rules, rule+"}")
	}
	return fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r%d, namespace: shop}\nspec:\n  parentRefs: %s\n  hostnames: [%s]\n  rules: [%s]\n",
		i, list(3, parentRef), pick("a.example.com", "svc-"+fmt.Sprint(i)+".example.com", `"-bad-"`), strings.Join(rules, ", "))
}

// TestMemoMatchesLibraryOnVariedRoutes admits routes of shared and
// varied parts, valid and not, with the memo and without: the same
// errors (fields, types, messages), warnings and defaulted objects.
func TestMemoMatchesLibraryOnVariedRoutes(t *testing.T) {
	for _, channel := range Channels {
		t.Run(channel, func(t *testing.T) {
			memo, err := build(channel)
			if err != nil {
				t.Fatal(err)
			}
			lib := libraryValidator(t, channel)
			r := rand.New(rand.NewPCG(38, 1))
			refused := 0
			for i := range 300 {
				doc := variedRoute(r, i)
				a, b := object(t, doc), object(t, doc)
				errsA, warnA, errA := memo.Admit(a)
				errsB, warnB, errB := lib.Admit(b)
				if (errA == nil) != (errB == nil) {
					t.Fatalf("route %d: err %v, the library %v\n%s", i, errA, errB, doc)
				}
				if !reflect.DeepEqual(errorStrings(errsA), errorStrings(errsB)) {
					t.Errorf("route %d: errors\n%q\nthe library's\n%q\n%s", i, errorStrings(errsA), errorStrings(errsB), doc)
				}
				if !reflect.DeepEqual(warnA, warnB) || !reflect.DeepEqual(a, b) {
					t.Errorf("route %d: warnings or defaults differ from the library's\n%s", i, doc)
				}
				if len(errsB) > 0 {
					refused++
				}
			}
			if refused == 0 || refused == 300 {
				t.Errorf("%d of 300 routes refused: the test needs both", refused)
			}
			var hits uint64
			for _, ver := range memo.versions {
				hits = ver.memo.hits.Load()
				break
			}
			if hits == 0 {
				t.Error("the memo answered nothing")
			}
		})
	}
}
