package crds

import (
	"math/rand/v2"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
)

// TestListSetsMayRefuse: on random values of every CRD version's schema,
// the library's list set and map validation finds an error only in a
// value mayRefuse flags; both happen.
func TestListSetsMayRefuse(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 4))
	for _, channel := range Channels {
		v, err := build(channel)
		if err != nil {
			t.Fatal(err)
		}
		skipped, refused := 0, 0
		for gvk, ver := range compiledVersions(t, v) {
			if ver.listSets == nil {
				continue
			}
			for i := range 300 {
				obj, _ := randomValue(r, ver.structural, 0).(map[string]any)
				errs := structurallisttype.ValidateListSetsAndMaps(nil, ver.structural, obj)
				if len(errs) > 0 {
					refused++
				}
				if !ver.listSets.mayRefuse(obj) {
					skipped++
					if len(errs) > 0 {
						t.Fatalf("%s value %d: not flagged, the library refuses it: %v\n%v", gvk, i, errs, obj)
					}
				}
			}
		}
		if skipped == 0 || refused == 0 {
			t.Errorf("%s: %d values not flagged, %d refused: the test needs both", channel, skipped, refused)
		}
	}
}

// TestListSetsMayRefuseListeners: a Gateway's listeners (a map list by
// name) of one listener need no check; of two, of one name, are refused.
func TestListSetsMayRefuseListeners(t *testing.T) {
	v, err := Load(Standard)
	if err != nil {
		t.Fatal(err)
	}
	gateway := func(listeners string) string {
		return "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw, namespace: infra}\nspec:\n  gatewayClassName: tlsplane\n  listeners: " + listeners + "\n"
	}
	ver, one := admitted(t, v, gateway(`[{name: http, port: 80, protocol: HTTP}]`))
	delete(one, "status") // validated without it, as a create drops it; its default has two conditions
	if ver.listSets.mayRefuse(one) {
		t.Error("one listener flagged")
	}
	_, two := admitted(t, v, gateway(`[{name: http, port: 80, protocol: HTTP}, {name: http, port: 81, protocol: HTTP}]`))
	delete(two, "status")
	if !ver.listSets.mayRefuse(two) || len(structurallisttype.ValidateListSetsAndMaps(nil, ver.structural, two)) == 0 {
		t.Error("two listeners of one name: not flagged, or not refused by the library")
	}
}

// TestListSetsUnderAdditionalProperties: what no CRD of the pin has, a
// set list as a map's values, is walked as the library walks it.
func TestListSetsUnderAdditionalProperties(t *testing.T) {
	set := "set"
	item := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	list := structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &item, Extensions: structuralschema.Extensions{XListType: &set}}
	s := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{
		"m": {Generic: structuralschema.Generic{Type: "object"}, AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: &list}},
	}}
	obj := map[string]any{"m": map[string]any{"k": []any{"a", "a"}}}
	if len(structurallisttype.ValidateListSetsAndMaps(nil, s, obj)) == 0 {
		t.Fatal("the library finds no duplicate: the case tests nothing")
	}
	if !newListSetNode(s).mayRefuse(obj) {
		t.Error("a set of a duplicate under additional properties not flagged")
	}
}
