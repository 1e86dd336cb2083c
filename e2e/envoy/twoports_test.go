package envoy

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const (
	twoPortsSvc = "two-ports"
	portA       = 443  // covered by the older whole-Service policy
	portB       = 8443 // covered by the newer sectionName policy
)

// twoPortsObjects: a Service with two ports, an older policy for the whole
// Service and a newer one for port https-b; the sectionName one governs B.
func twoPortsObjects(p *pki, b *backends) []object {
	objs := serviceWithEndpoints(twoPortsSvc,
		svcPort{name: "https-a", port: portA, backendPort: b.main.port},
		svcPort{name: "https-b", port: portB, backendPort: b.tls12.port})
	objs = append(objs, caConfigMap("ca-two-ports", p.ca.PEM))
	whole := policy{name: "whole-service", created: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		targets: []target{{svc: twoPortsSvc}}, caRefs: []caRef{{name: "ca-two-ports"}}, hostname: hostAbc}
	section := policy{name: "port-b", created: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		targets: []target{{svc: twoPortsSvc, section: "https-b"}}, caRefs: []caRef{{name: "ca-two-ports"}}, hostname: hostOther}
	return append(objs, whole.object(), section.object())
}

func twoPorts(t *testing.T, e *env, b *backends, s *summary) {
	var seen []string
	defer func() { s.note("two-ports-section-name", "%s", strings.Join(seen, "; ")) }()
	for _, c := range []struct {
		port int
		be   *backend
		sni  string
	}{{portA, b.main, hostAbc}, {portB, b.tls12, hostOther}} {
		cluster := clusterName(twoPortsSvc, c.port)
		e.waitCluster(t, cluster, activeTLS("", c.be.port))
		r := e.request(t, cluster, "/two-ports")
		seen = append(seen, fmt.Sprintf("port %d: backend %s sni=%q", c.port, r.Echo.Name, r.Echo.SNI))
		t.Logf("%s: %s", cluster, r)
		if r.Status != 200 {
			t.Errorf("%s: want 200, got %s", cluster, r)
			continue
		}
		if r.Echo.SNI != c.sni || r.Echo.Name != c.be.name {
			t.Errorf("%s: backend %s saw SNI %q, want backend %s and SNI %q", cluster, r.Echo.Name, r.Echo.SNI, c.be.name, c.sni)
		}
	}
}
