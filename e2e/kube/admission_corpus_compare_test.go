package kube

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// serverSetMetadata are the fields the API server writes into every object
// it admits; they are no defaults of the CRDs and tlsplane sets none.
var serverSetMetadata = []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink"}

// comparable is obj without server-set metadata, through JSON so numbers
// compare alike whichever decoder produced them.
func comparable(obj map[string]any) (any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	if md, ok := out["metadata"].(map[string]any); ok {
		for _, f := range serverSetMetadata {
			delete(md, f)
		}
	}
	return out, nil
}

// objectDiff lists, by JSON path, where tlsplane's defaulted object
// differs from the API server's; empty when they are equal.
func objectDiff(apiServer, tlsplane map[string]any) ([]string, error) {
	a, err := comparable(apiServer)
	if err != nil {
		return nil, err
	}
	b, err := comparable(tlsplane)
	if err != nil {
		return nil, err
	}
	var diffs []string
	diffValues("", a, b, &diffs)
	sort.Strings(diffs)
	return diffs, nil
}

// diffValues appends one line per path where a and b differ, with both
// values, descending into objects and equal-length lists.
func diffValues(path string, a, b any, diffs *[]string) {
	if len(*diffs) >= 20 {
		return // enough to see what differs
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		slices.Sort(sorted)
		for _, k := range sorted {
			diffValues(path+"."+k, am[k], bm[k], diffs)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			diffValues(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], diffs)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*diffs = append(*diffs, fmt.Sprintf("%s: API server %s, tlsplane %s", strings.TrimPrefix(path, "."), short(a), short(b)))
	}
}

// short is v as JSON, cut to a length a log line can hold.
func short(v any) string {
	if v == nil {
		return "absent"
	}
	data, _ := json.Marshal(v)
	if len(data) > 200 {
		return string(data[:200]) + "…"
	}
	return string(data)
}

// warningsDiff says which warnings only one side gave; empty when both gave
// the same set.
func warningsDiff(apiServer, tlsplane []string) string {
	var onlyAPI, onlyOurs []string
	for _, w := range apiServer {
		if !slices.Contains(tlsplane, w) {
			onlyAPI = append(onlyAPI, w)
		}
	}
	for _, w := range tlsplane {
		if !slices.Contains(apiServer, w) {
			onlyOurs = append(onlyOurs, w)
		}
	}
	if len(onlyAPI) == 0 && len(onlyOurs) == 0 {
		return ""
	}
	return fmt.Sprintf("API server only %q, tlsplane only %q", onlyAPI, onlyOurs)
}
