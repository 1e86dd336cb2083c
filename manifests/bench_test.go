package manifests

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseRoutes reads one file of 1,000 Services, each with an
// HTTPRoute and a BackendTLSPolicy, as a generated manifest holds them.
func BenchmarkParseRoutes(b *testing.B) {
	var sb strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&sb, `---
apiVersion: v1
kind: Service
metadata: {name: svc-%[1]d, namespace: shop}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route-%[1]d, namespace: shop}
spec:
  parentRefs: [{name: edge}]
  hostnames: [svc-%[1]d.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api/%[1]d}, headers: [{name: x-tenant, value: t%[1]d}]}]
    backendRefs: [{name: svc-%[1]d, port: 443}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tls-%[1]d, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: svc-%[1]d}]
  validation: {hostname: svc-%[1]d.example.com, caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}]}
`, i)
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		if _, err := Parse("routes.yaml", data, func(string) {}); err != nil {
			b.Fatal(err)
		}
	}
}
