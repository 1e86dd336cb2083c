package manifests

import (
	"strings"
	"testing"
)

// A directory stands for a cluster with one channel's CRDs: on standard,
// a field only the experimental CRDs keep (an HTTPRoute rule's retry) is
// dropped with the API server's warning, and the X kinds, which only the
// experimental channel defines, are admitted against its CRDs.
func TestChannelOfTheAdmittingCRDs(t *testing.T) {
	const file = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop}
spec:
  parentRefs: [{name: edge}]
  rules:
  - backendRefs: [{name: pay, port: 443}]
    retry: {attempts: 2}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: partner, namespace: shop}
spec:
  type: ExternalHostname
  externalHostname: {hostname: partner.example.com}
  port: {port: 443}
`
	for _, c := range []struct {
		channel   string
		withRetry bool
	}{
		{"standard", false},
		{"experimental", true},
	} {
		l := DefaultLimits
		l.CRDChannel = c.channel
		var warnings []string
		in, err := l.Parse("routes.yaml", []byte(file), func(w string) { warnings = append(warnings, w) })
		if err != nil {
			t.Fatalf("%s: %v", c.channel, err)
		}
		if len(in.HTTPRoutes) != 1 || len(in.XBackends) != 1 {
			t.Fatalf("%s: %d HTTPRoutes, %d XBackends; want 1 and 1", c.channel, len(in.HTTPRoutes), len(in.XBackends))
		}
		if got := in.HTTPRoutes[0].Spec.Rules[0].Retry != nil; got != c.withRetry {
			t.Errorf("%s: rule keeps retry = %v, want %v", c.channel, got, c.withRetry)
		}
		dropped := strings.Contains(strings.Join(warnings, "\n"), `unknown field "spec.rules[0].retry"`)
		if dropped == c.withRetry {
			t.Errorf("%s: warnings %q: want the unknown-field warning only on standard", c.channel, warnings)
		}
	}
}
