package manifests

import "testing"

func TestObjectLines(t *testing.T) {
	file := `# a comment
apiVersion: v1
kind: Service
metadata: {name: pay}
---
apiVersion: v1
kind: List
items:
- apiVersion: gateway.networking.k8s.io/v1
  kind: GatewayClass
  metadata: {name: tlsplane, namespace: ignored}
- apiVersion: v1
  kind: Service
  metadata:
    name: pay
    namespace: other
---
{"apiVersion": "v1", "kind": "ConfigMap",
 "metadata": {"name": "ca", "namespace": "shop"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca, namespace: shop}
`
	lines := ObjectLines([]byte(file))
	for _, c := range []struct {
		key  ObjectKey
		want int
	}{
		{ObjectKey{"Service", "default", "pay"}, 2},
		{ObjectKey{"Service", "other", "pay"}, 12},
		{ObjectKey{"GatewayClass", "", "tlsplane"}, 9},
		{ObjectKey{"ConfigMap", "shop", "ca"}, 18}, // the first of two
		{ObjectKey{"ConfigMap", "default", "ca"}, 0},
		{ObjectKey{"Secret", "default", "pay"}, 0},
	} {
		if got := lines[c.key]; got != c.want {
			t.Errorf("line of %+v = %d, want %d", c.key, got, c.want)
		}
	}
	if len(lines) != 4 {
		t.Errorf("%d objects found, want 4: %v", len(lines), lines)
	}
}
