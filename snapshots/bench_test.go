package snapshots

import (
	"fmt"
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
	"github.com/tlsplane/tlsplane/translator"
)

// BenchmarkPublishGatewayFleets: n backends served to a fleet without a
// Gateway and to g connected Gateway fleets; an operation is one backend
// CA rotation published, the worst case for a Gateway fleet, whose SDS
// mixes every fleet's CA secrets with its own certificates. Compare g=0
// with g>0 for what each Gateway fleet costs a publish.
func BenchmarkPublishGatewayFleets(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, g := range []int{0, 10, 100} {
			b.Run(fmt.Sprintf("n=%d/gateways=%d", n, g), func(b *testing.B) {
				backends := make([]st.Backend, n)
				for i := range backends {
					backends[i] = st.Backend{Namespace: fmt.Sprintf("ns-%d", i%100), Service: fmt.Sprintf("svc-%d", i), Port: 443, SNI: "svc.example"}
				}
				gateways := make([]st.Gateway, g)
				for i := range gateways {
					gateways[i] = st.Gateway{Namespace: "gw", Name: fmt.Sprintf("edge-%d", i), HTTPPort: 80, HTTPSPort: 443, Hostname: "edge.example", Backend: backends[i]}
				}
				out := st.WithGateways(st.Output(backends...), gateways...)
				rotated := rotateSecret(out, n/2)
				p := New(Options{})
				p.NodeStreamOpened(&corev3.Node{Id: "mesh", Cluster: "mesh"})
				for _, gw := range gateways {
					p.NodeStreamOpened(&corev3.Node{Id: gw.Fleet(), Cluster: gw.Fleet()})
				}
				if _, err := p.Publish(out); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					i++
					next := out
					if i%2 == 1 {
						next = rotated
					}
					if changed, err := p.Publish(next); err != nil || !changed {
						b.Fatalf("changed=%v err=%v", changed, err)
					}
				}
			})
		}
	}
}

// rotateSecret is out with secret i's CA changed (a new pointer, as the
// translator hands back for a changed input).
func rotateSecret(out translator.Output, i int) translator.Output {
	out.Secrets = slices.Clone(out.Secrets)
	b := st.Backend{}
	secret := st.Secret(b)
	secret.Name = out.Secrets[i].GetName()
	out.Secrets[i] = secret
	return out
}
