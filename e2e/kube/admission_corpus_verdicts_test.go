package kube

import (
	"strings"
	"testing"
)

// TestAdmissionCorpusVerdicts: the corpus test's comparison finds each
// kind of disagreement, so a corpus run that reports none means none.
func TestAdmissionCorpusVerdicts(t *testing.T) {
	route := func(weight any, extra map[string]any) map[string]any {
		md := map[string]any{"name": "r", "namespace": "ns"}
		for k, v := range extra {
			md[k] = v
		}
		return map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": md,
			"spec": map[string]any{"rules": []any{map[string]any{"backendRefs": []any{map[string]any{"name": "svc", "port": int64(80), "weight": weight}}}}},
		}
	}
	accepted := func(obj map[string]any, warnings ...string) verdict {
		return verdict{accepted: true, defaulted: obj, warnings: warnings}
	}
	refused := func(msg string, fields ...string) verdict { return verdict{message: msg, fields: fields} }
	for _, tc := range []struct {
		name                     string
		want                     expectation
		theirs, mine             verdict
		disagreement             string // a substring; empty: they agree
		unexpected               bool
		fieldsNamed, fieldsFound int
	}{
		{name: "same object, numbers of either decoder", want: wantValid,
			theirs: accepted(route(int64(1), map[string]any{"uid": "u", "resourceVersion": "1", "generation": int64(1), "managedFields": []any{}, "creationTimestamp": "2026-01-01T00:00:00Z"})),
			mine:   accepted(route(float64(1), nil))},
		{name: "a default tlsplane did not apply", want: wantValid,
			theirs: accepted(route(int64(1), nil)), mine: accepted(route(nil, nil)),
			disagreement: "spec.rules[0].backendRefs[0].weight: API server 1, tlsplane absent"},
		{name: "a label is no server-set metadata", want: wantValid,
			theirs: accepted(route(int64(1), map[string]any{"labels": map[string]any{"a": "b"}})), mine: accepted(route(int64(1), nil)),
			disagreement: "metadata.labels"},
		{name: "warnings differ", want: wantValid,
			theirs: accepted(route(int64(1), nil), `unknown field "spec.x"`), mine: accepted(route(int64(1), nil)),
			disagreement: "warnings differ"},
		{name: "tlsplane accepts what the API server refuses", want: wantInvalid,
			theirs: refused("spec.rules: Too many: 17"), mine: accepted(route(int64(1), nil)),
			disagreement: "API server refuses (spec.rules: Too many: 17), tlsplane accepts"},
		{name: "tlsplane refuses what the API server accepts", want: wantValid,
			theirs: accepted(route(int64(1), nil)), mine: refused("spec.rules: Too many", "spec.rules"),
			disagreement: "API server accepts, tlsplane refuses"},
		{name: "both refuse, paths counted", want: wantInvalid,
			theirs: refused(`HTTPRoute "r" is invalid: spec.rules: Too many: 17`), mine: refused("", "spec.rules", "spec.hostnames"),
			fieldsNamed: 2, fieldsFound: 1},
		{name: "the API server against the source", want: wantInvalid,
			theirs: accepted(route(int64(1), nil)), mine: accepted(route(int64(1), nil)), unexpected: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := compareVerdicts("standard "+tc.name, tc.want, tc.theirs, tc.mine)
			if tc.disagreement == "" && o.disagreement != "" || !strings.Contains(o.disagreement, tc.disagreement) {
				t.Errorf("disagreement = %q, want one containing %q", o.disagreement, tc.disagreement)
			}
			if (o.unexpected != "") != tc.unexpected {
				t.Errorf("unexpected = %q, want one: %v", o.unexpected, tc.unexpected)
			}
			if o.fieldsNamed != tc.fieldsNamed || o.fieldsFound != tc.fieldsFound {
				t.Errorf("fields named %d, found %d; want %d, %d", o.fieldsNamed, o.fieldsFound, tc.fieldsNamed, tc.fieldsFound)
			}
		})
	}
}
