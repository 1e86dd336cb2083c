package crds

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// admitted is doc admitted by v (so pruned and defaulted, as CEL sees it)
// and the version that admitted it.
func admitted(t testing.TB, v *Validator, doc string) (*version, map[string]any) {
	t.Helper()
	obj := object(t, doc)
	if _, _, err := v.Admit(obj); err != nil {
		t.Fatalf("Admit: %v", err)
	}
	gv, err := schema.ParseGroupVersion(obj["apiVersion"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return compiledVersions(t, v)[gv.WithKind(obj["kind"].(string))], obj
}

// libraryCEL is the API server's CEL validation of obj: the library's
// validator, no memo.
func libraryCEL(ver *version, obj map[string]any, budget int64) (field.ErrorList, int64) {
	return ver.cel.Validate(context.Background(), nil, ver.structural, obj, nil, budget)
}

// errorStrings are errs in a fixed order: the library ranges over maps,
// so errors under different fields come in any order, to it and to us.
func errorStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	sort.Strings(out)
	return out
}

// assertSameCEL checks the memo's walk answers obj as the library does:
// the same errors (paths, types, messages) and the same remaining budget.
func assertSameCEL(t *testing.T, ver *version, obj map[string]any, budget int64) field.ErrorList {
	t.Helper()
	want, wantLeft := libraryCEL(ver, obj, budget)
	got, gotLeft := ver.celTree.validate(context.Background(), ver.memo, nil, obj, budget)
	if !reflect.DeepEqual(errorStrings(got), errorStrings(want)) {
		t.Errorf("budget %d: errors\n%q\nthe library's\n%q", budget, errorStrings(got), errorStrings(want))
	}
	if gotLeft != wantLeft {
		t.Errorf("budget %d: %d left, the library %d", budget, gotLeft, wantLeft)
	}
	return got
}

func route(name, parentRefs, rules string) string {
	return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s, namespace: shop}
spec:
  parentRefs: %s
  hostnames: [%s.example.com]
  rules: %s`, name, parentRefs, name, rules)
}

const (
	goodRule    = `{matches: [{path: {type: PathPrefix, value: /api}}], backendRefs: [{name: pay, port: 443}]}`
	badPathRule = `{matches: [{path: {type: PathPrefix, value: "/api//x"}}], backendRefs: [{name: pay, port: 443}]}`
)

// TestCELMemoAgreesWithLibrary admits each object after the others have
// filled the memo, so shared values are answered from it, and compares
// with the library on the same object.
func TestCELMemoAgreesWithLibrary(t *testing.T) {
	tests := []struct {
		name, doc string
		// field is an error the API server gives, "" for none.
		field string
	}{
		{"a route", route("a", `[{name: gw, sectionName: https}]`, "["+goodRule+"]"), ""},
		{"a route of the same parentRefs and rules", route("b", `[{name: gw, sectionName: https}]`, "["+goodRule+"]"), ""},
		{"a parentRef twice: the list's rule fails, its items were seen", route("c", `[{name: gw, sectionName: https}, {name: gw, sectionName: https}]`, "["+goodRule+"]"), "spec.parentRefs"},
		{"a bad path in the first rule", route("d", `[{name: gw}]`, "["+badPathRule+"]"), "spec.rules[0].matches[0].path"},
		{"the same bad path in the second rule", route("e", `[{name: gw}]`, "["+goodRule+", "+badPathRule+"]"), "spec.rules[1].matches[0].path"},
		{"the bad path again in the second rule", route("f", `[{name: gw}]`, "["+goodRule+", "+badPathRule+"]"), "spec.rules[1].matches[0].path"},
		{"backendRefs and a redirect, after the same rule without it", route("h", `[{name: gw}]`, `[{matches: [{path: {type: PathPrefix, value: /api}}], backendRefs: [{name: pay, port: 443}], filters: [{type: RequestRedirect, requestRedirect: {scheme: https}}]}]`), "spec.rules[0]"},
		{"a good route after them", route("g", `[{name: gw}]`, "["+goodRule+", "+goodRule+"]"), ""},
		{"a Gateway", `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: tlsplane
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: https, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: gw-cert}]}}`, ""},
		{"a Gateway of two listeners of one name", `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw2, namespace: infra}
spec:
  gatewayClassName: tlsplane
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: http, port: 81, protocol: HTTP}`, "spec.listeners"},
		{"a BackendTLSPolicy", `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: pay}]
  validation: {hostname: pay.shop, caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}]}`, ""},
		{"a BackendTLSPolicy of both CA kinds", `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay2, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: pay}]
  validation: {hostname: pay.shop, caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}], wellKnownCACertificates: System}`, "spec.validation"},
	}
	for _, channel := range Channels {
		t.Run(channel, func(t *testing.T) {
			v, err := Load(channel)
			if err != nil {
				t.Fatal(err)
			}
			for _, tt := range tests {
				admitted(t, v, tt.doc) // fills the memo with its passing subtrees
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					ver, obj := admitted(t, v, tt.doc)
					hits := ver.memo.hits.Load()
					errs := assertSameCEL(t, ver, obj, celconfig.RuntimeCELCostBudget)
					if ver.memo.hits.Load() == hits {
						t.Error("the memo answered nothing")
					}
					var fields []string
					for _, e := range errs {
						fields = append(fields, e.Field)
					}
					if tt.field == "" && len(errs) > 0 || tt.field != "" && !strings.Contains(strings.Join(fields, " "), tt.field) {
						t.Errorf("errors %v, want one at %q", errs, tt.field)
					}
				})
			}
		})
	}
}

// TestCELMemoSharedParentRefs: a second route of the first's parentRefs
// is answered from the memo for them.
func TestCELMemoSharedParentRefs(t *testing.T) {
	v, err := Load(Experimental)
	if err != nil {
		t.Fatal(err)
	}
	parentRefs := `[{name: shared-gw, namespace: infra, sectionName: https}]`
	ver, first := admitted(t, v, route("first", parentRefs, "["+goodRule+"]"))
	spec := ver.celTree.properties["spec"]
	sum, _ := canonicalSum(first["spec"].(map[string]any)["parentRefs"])
	if _, ok := ver.memo.get(memoKey{node: spec.properties["parentRefs"], sum: sum}); !ok {
		t.Fatal("the first route's parentRefs are not remembered")
	}
	_, second := admitted(t, v, route("second", parentRefs, "["+goodRule+"]"))
	sum2, _ := canonicalSum(second["spec"].(map[string]any)["parentRefs"])
	if sum2 != sum {
		t.Error("two routes of the same parentRefs have different keys")
	}
	assertSameCEL(t, ver, second, celconfig.RuntimeCELCostBudget)
}

// TestCELMemoBudget runs out of budget at every point the library would:
// a remembered subtree is charged its cost, and one that no longer fits is
// run again, to the library's error.
func TestCELMemoBudget(t *testing.T) {
	v, err := Load(Experimental)
	if err != nil {
		t.Fatal(err)
	}
	ver, obj := admitted(t, v, route("budget", `[{name: gw, sectionName: https}, {name: gw2}]`, "["+goodRule+", "+goodRule+"]"))
	_, left := libraryCEL(ver, obj, celconfig.RuntimeCELCostBudget)
	total := celconfig.RuntimeCELCostBudget - left
	if total <= 2 {
		t.Fatalf("the route's CEL cost is %d; the test needs more", total)
	}
	for _, budget := range []int64{0, 1, total / 3, total / 2, total - 1, total, total + 1, celconfig.RuntimeCELCostBudget} {
		ver.celTree.validate(context.Background(), ver.memo, nil, obj, celconfig.RuntimeCELCostBudget) // remembered
		hits := ver.memo.hits.Load()
		want, wantLeft := libraryCEL(ver, obj, budget)
		got, gotLeft := ver.celTree.validate(context.Background(), ver.memo, nil, obj, budget)
		// Which field runs out first is Go's map order, to the library
		// too: compare what ran out, not where.
		if !reflect.DeepEqual(details(got), details(want)) || gotLeft != wantLeft {
			t.Errorf("budget %d of %d: %v, %d left; the library %v, %d left", budget, total, got, gotLeft, want, wantLeft)
		}
		if budget < total && (len(got) == 0 || !strings.Contains(got[len(got)-1].Error(), "running out of cost budget")) {
			t.Errorf("budget %d of %d: errors %v, want the budget's", budget, total, got)
		}
		if budget > total && ver.memo.hits.Load() == hits {
			t.Errorf("budget %d of %d: the memo answered nothing", budget, total)
		}
	}
}

// details are errs without their fields.
func details(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+": "+e.Detail)
	}
	return out
}

// TestCELMemoConcurrent admits on several goroutines at once, as the
// directory source does; run with -race.
func TestCELMemoConcurrent(t *testing.T) {
	v, err := Load(Experimental)
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 4, 10
	var objs [goroutines][each]map[string]any // decoded here: t.Fatal is for this goroutine
	for g := range goroutines {
		for i := range each {
			rule := goodRule
			if i%3 == 0 {
				rule = badPathRule
			}
			objs[g][i] = object(t, route(fmt.Sprintf("r%d-%d", g, i), fmt.Sprintf(`[{name: gw%d}]`, i%2), "["+rule+"]"))
		}
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				errs, _, err := v.Admit(objs[g][i])
				if err != nil {
					t.Error(err)
					return
				}
				if bad := i%3 == 0; bad != (len(errs) > 0) {
					t.Errorf("route %d-%d: errors %v", g, i, errs)
				}
			}
		}()
	}
	wg.Wait()
}

func TestCELMemoIsBounded(t *testing.T) {
	m := newMemo()
	n := &celNode{}
	for i := range memoEntries + memoEntries/2 {
		var k memoKey
		k.node = n
		k.sum[0], k.sum[1], k.sum[2] = byte(i), byte(i>>8), byte(i>>16)
		m.put(k, int64(i))
	}
	if got := m.len(); got > memoEntries {
		t.Errorf("%d entries, bound %d", got, memoEntries)
	}
}

func TestCanonicalSum(t *testing.T) {
	tests := []struct {
		name  string
		a, b  any
		equal bool
	}{
		{"an int and a float of one value", int64(1), float64(1), false},
		{"a string and a list of it", "a", []any{"a"}, false},
		{"keys split differently", map[string]any{"a": "bc"}, map[string]any{"ab": "c"}, false},
		{"a nil object and an empty one", map[string]any(nil), map[string]any{}, false},
		{"a null field and none", map[string]any{"a": nil}, map[string]any{}, false},
		{"lists split differently", []any{[]any{"a"}, "b"}, []any{[]any{"a", "b"}}, false},
		{"true and false", true, false, false},
		{"one object built twice", map[string]any{"b": int64(2), "a": []any{"x"}}, map[string]any{"a": []any{"x"}, "b": int64(2)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, okA := canonicalSum(tt.a)
			b, okB := canonicalSum(tt.b)
			if !okA || !okB {
				t.Fatal("not encodable")
			}
			if (a == b) != tt.equal {
				t.Errorf("equal sums: %v, want %v", a == b, tt.equal)
			}
		})
	}
	if _, ok := canonicalSum(map[string]any{"a": int32(1)}); ok {
		t.Error("an int32, which no decoded object holds, was encoded")
	}
}

// TestCELMemoTargetRefsEquality: a BackendTLSPolicy's targetRefs rules
// compare targets' names only with each other, so policies whose names
// are equal in the same pattern and of the same lengths share an answer;
// every policy's errors and remaining budget are the library's, the
// memo warm with the ones before it.
func TestCELMemoTargetRefsEquality(t *testing.T) {
	// The library defaults each policy, so only the checks below fill
	// the memo: each answers from the policies before it.
	lib := libraryValidator(t, Standard)
	v, err := build(Standard)
	if err != nil {
		t.Fatal(err)
	}
	policy := func(name, targetRefs string) string {
		return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: %s, namespace: shop}
spec:
  targetRefs: %s
  validation: {hostname: pay.shop, caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}]}`, name, targetRefs)
	}
	ref := func(name, section string) string {
		if section == "" {
			return fmt.Sprintf(`{group: "", kind: Service, name: %s}`, name)
		}
		return fmt.Sprintf(`{group: "", kind: Service, name: %s, sectionName: %s}`, name, section)
	}
	tests := []struct {
		name, targetRefs string
		// refused: the targetRefs rules fail; hit: their answer is remembered.
		refused, hit bool
	}{
		{"one target", "[" + ref("svc-1", "") + "]", false, false},
		{"another of its length", "[" + ref("svc-2", "") + "]", false, true},
		{"one of a name long enough to cost more", "[" + ref("a-service-of-a-longer-name", "") + "]", false, false},
		{"two targets", "[" + ref("a", "") + ", " + ref("b", "") + "]", false, false},
		{"one target twice", "[" + ref("c", "") + ", " + ref("c", "") + "]", true, false},
		{"two other targets", "[" + ref("d", "") + ", " + ref("e", "") + "]", false, true},
		{"another target twice", "[" + ref("f", "") + ", " + ref("f", "") + "]", true, false},
		{"a target twice, one of a section", "[" + ref("g", "sa") + ", " + ref("g", "") + "]", true, false},
		{"a target's two sections", "[" + ref("h", "sa") + ", " + ref("h", "sb") + "]", false, false},
		{"a target's section twice", "[" + ref("i", "sa") + ", " + ref("i", "sa") + "]", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			libVer, obj := admitted(t, lib, policy("p-"+strings.ReplaceAll(tt.name, " ", "-"), tt.targetRefs))
			ver := compiledVersions(t, v)[libVer.gvk]
			node := ver.celTree.properties["spec"].properties["targetRefs"]
			sum, ok := projectedSum(obj["spec"].(map[string]any)["targetRefs"], node.reads)
			if !ok || node.reads == nil {
				t.Fatal("targetRefs' rules are not memoized by what they read")
			}
			_, remembered := ver.memo.get(memoKey{node: node, own: true, sum: sum})
			if remembered != tt.hit {
				t.Errorf("targetRefs' rules remembered %v, want %v", remembered, tt.hit)
			}
			errs := assertSameCEL(t, ver, obj, celconfig.RuntimeCELCostBudget)
			if refused := len(errs) > 0; refused != tt.refused {
				t.Errorf("refused %v (%v), want %v", refused, errs, tt.refused)
			}
			_, left := libraryCEL(ver, obj, celconfig.RuntimeCELCostBudget)
			total := celconfig.RuntimeCELCostBudget - left
			for _, budget := range []int64{total, total + 1} {
				assertSameCEL(t, ver, obj, budget)
			}
			// Short of the cost, which field runs out (and, for a
			// refusal, whether its error comes first) is Go's map order.
			if !tt.refused {
				want, wantLeft := libraryCEL(ver, obj, total-1)
				got, gotLeft := ver.celTree.validate(context.Background(), ver.memo, nil, obj, total-1)
				if !reflect.DeepEqual(details(got), details(want)) || gotLeft != wantLeft {
					t.Errorf("budget %d: %v, %d left; the library %v, %d left", total-1, got, gotLeft, want, wantLeft)
				}
			}
		})
	}
}
