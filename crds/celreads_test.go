package crds

import (
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// String shows r as {field:…}[item…]; * is read whole.
func (r *reads) String() string {
	if r == nil {
		return "-"
	}
	if r.whole {
		return "*"
	}
	if r.equal {
		return "="
	}
	var parts []string
	for k, v := range r.fields {
		parts = append(parts, k+":"+v.String())
	}
	sort.Strings(parts)
	s := "{" + strings.Join(parts, ",") + "}"
	if r.items != nil {
		s += "[" + r.items.String() + "]"
	}
	return s
}

// readsSchema is an object of a string a, a list l of objects of an int
// b, a string s and a duration d,
// a map m of strings and a string named namespace, which CEL escapes.
func readsSchema(rule string) *structuralschema.Structural {
	str := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	item := structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{
		"b": {Generic: structuralschema.Generic{Type: "integer"}},
		"s": str,
		"d": {Generic: structuralschema.Generic{Type: "string"}, ValueValidation: &structuralschema.ValueValidation{Format: "duration"}},
	}}
	return &structuralschema.Structural{
		Generic: structuralschema.Generic{Type: "object"},
		Properties: map[string]structuralschema.Structural{
			"a":         str,
			"namespace": str,
			"l":         {Generic: structuralschema.Generic{Type: "array"}, Items: &item},
			"m":         {Generic: structuralschema.Generic{Type: "object"}, AdditionalProperties: &structuralschema.StructuralOrBool{Structural: &str}},
		},
		ValidationExtensions: structuralschema.ValidationExtensions{XValidations: apiextensionsv1.ValidationRules{{Rule: rule}}},
	}
}

func TestRulesReads(t *testing.T) {
	tests := []struct{ rule, want string }{
		{"self.a == 'x'", "{a:*}"},
		{"has(self.a)", "{a:{}}"},
		{"self.__namespace__ == 'x'", "{namespace:*}"},
		{"self.l.all(x, x.b > 0)", "{l:{}[{b:*}]}"},
		{"size(self.l) > 0 && self.l.size() < 3", "{l:{}}"},
		{"self.l[0].b == 1", "{l:{}[{b:*}]}"},
		{"self.l == []", "{l:*}"},
		{"self.m.x == 'y'", "{m:*}"},
		{"self.l.map(x, x).size() > 0", "{l:{}[*]}"},
		{"[1].all(self, self > 0)", "{}"},
		{"self.?a.orValue('') == ''", "*"},
		{"cel.bind(v, self.a, v == 'x')", "{a:*}"},
		{"(self.a == 'x' ? self.l : []).size() > 0", "{a:*,l:*}"},
		{"self.l.exists_one(x, has(x.b))", "{l:{}[{b:{}}]}"},
		// Strings at one place compared with each other: only which are equal.
		{"self.l.all(x, self.l.exists_one(y, x.s == y.s))", "{l:{}[{s:=}]}"},
		{"self.l.all(x, self.l.all(y, x.s != y.s || x == y))", "{l:{}[*]}"},
		{"self.l.all(x, x.s == self.l[0].s)", "{l:{}[{s:=}]}"},
		{"self.l.all(x, x.s == 'a')", "{l:{}[{s:*}]}"},
		{"self.l.all(x, self.l.all(y, x.s == y.s) && x.s.startsWith('a'))", "{l:{}[{s:*}]}"},
		{"self.l.all(x, self.l.all(y, x.b == y.b))", "{l:{}[{b:*}]}"},
		{"self.l.all(x, self.l.all(y, x.d == y.d))", "{l:{}[{d:*}]}"},
		{"self.a == self.__namespace__", "{a:*,namespace:*}"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			r, err := rulesReads(readsSchema(tt.rule))
			if err != nil {
				t.Fatal(err)
			}
			if got := r.String(); got != tt.want {
				t.Errorf("reads %s, want %s", got, tt.want)
			}
		})
	}
	if _, err := rulesReads(readsSchema("self.a == oldSelf.a")); err == nil {
		t.Error("a transition rule was read")
	}
}

// TestProjectedSumOfEquality: strings read for equality count by which
// are equal and their lengths in runes, nothing else.
func TestProjectedSumOfEquality(t *testing.T) {
	r, err := rulesReads(readsSchema("self.l.all(x, self.l.exists_one(y, x.s == y.s))"))
	if err != nil {
		t.Fatal(err)
	}
	l := func(ss ...any) map[string]any {
		var items []any
		for _, s := range ss {
			items = append(items, map[string]any{"s": s})
		}
		return map[string]any{"l": items}
	}
	tests := []struct {
		name string
		a, b map[string]any
		same bool
	}{
		{"one name, another of its length", l("svc-1"), l("svc-2"), true},
		{"one name, another of another length", l("svc-1"), l("svc-10"), false},
		{"as many runes, more bytes", l("svc-é"), l("svc-e"), true},
		{"two names, two others", l("a", "b"), l("c", "d"), true},
		{"two names, one twice", l("a", "b"), l("a", "a"), false},
		{"one twice, another twice", l("a", "a"), l("b", "b"), true},
		{"the equal pair moved", l("a", "a", "b"), l("a", "b", "b"), false},
		{"a null, a string", l(nil), l("a"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, okA := projectedSum(tt.a, r)
			b, okB := projectedSum(tt.b, r)
			if !okA || !okB {
				t.Fatal("not encodable")
			}
			if (a == b) != tt.same {
				t.Errorf("same sum %v, want %v", a == b, tt.same)
			}
		})
	}
	if _, ok := projectedSum(l(int64(1)), r); ok {
		t.Error("a number where the rules compare strings was encoded")
	}
}

// TestProjectedSum: values that differ only where the rules do not read
// share a sum; any difference the rules can see does not.
func TestProjectedSum(t *testing.T) {
	r, err := rulesReads(readsSchema("self.l.all(x, has(x.b)) && self.a == 'x'"))
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]any{"a": "x", "l": []any{map[string]any{"b": int64(1)}}, "m": map[string]any{"k": "v"}}
	tests := []struct {
		name  string
		other map[string]any
		same  bool
	}{
		{"another map, unread", map[string]any{"a": "x", "l": []any{map[string]any{"b": int64(1)}}, "m": map[string]any{"k": "w"}}, true},
		{"another b, only its presence read", map[string]any{"a": "x", "l": []any{map[string]any{"b": int64(2)}}}, true},
		{"another a", map[string]any{"a": "y", "l": []any{map[string]any{"b": int64(1)}}}, false},
		{"no b", map[string]any{"a": "x", "l": []any{map[string]any{}}}, false},
		{"a null b", map[string]any{"a": "x", "l": []any{map[string]any{"b": nil}}}, false},
		{"two items", map[string]any{"a": "x", "l": []any{map[string]any{"b": int64(1)}, map[string]any{"b": int64(1)}}}, false},
		{"no l", map[string]any{"a": "x"}, false},
	}
	want, _ := projectedSum(base, r)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := projectedSum(tt.other, r)
			if !ok {
				t.Fatal("not encodable")
			}
			if (got == want) != tt.same {
				t.Errorf("same sum %v, want %v", got == want, tt.same)
			}
		})
	}
}
