package xds

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// A Gateway fleet's name holds a '/' (`<namespace>/<gateway>`). The
// identity rule compares the whole identity for equality, so the default
// SPIFFE template gives spiffe://cluster.local/fleet/shop/edge, which reads
// shop/edge and nothing else: not the fleet "shop" (a prefix of it), nor
// shop/edge2, and a certificate of "shop" does not read shop/edge.
func TestMutualTLSGatewayFleetNameWithASlash(t *testing.T) {
	s := startSecure(t, DefaultFleetIdentity)
	s.publish(t, st.WithGateways(st.Output(payments), edge), true)
	gwCert, gwKey := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/shop/edge"})
	shopCert, shopKey := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/shop"})
	for _, tc := range []struct {
		name      string
		cert, key []byte
		fleet     string
		code      codes.Code
	}{
		{"the Gateway's certificate reads its fleet", gwCert, gwKey, "shop/edge", codes.OK},
		{"the Gateway's certificate does not read a prefix of its name", gwCert, gwKey, "shop", codes.PermissionDenied},
		{"the Gateway's certificate does not read a longer name", gwCert, gwKey, "shop/edge2", codes.PermissionDenied},
		{"the Gateway's certificate does not read a fleet below its name", gwCert, gwKey, "shop/edge/x", codes.PermissionDenied},
		{"a namespace's certificate does not read its Gateways", shopCert, shopKey, "shop/edge", codes.PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sotwOutcome(t, s.dial(t, tc.cert, tc.key, nil), tc.fleet)
			if status.Code(err) != tc.code {
				t.Fatalf("responses %d, stream error %v, want code %v", got, err, tc.code)
			}
			if tc.code != codes.OK && got != 0 {
				t.Fatalf("received %d responses, want none", got)
			}
		})
	}
}

// A DNS template puts the '/' into a DNS SAN: "shop/edge.fleet.example.org"
// is no DNS name, yet Go parses and compares it, so such a certificate is
// honoured exactly; whether a CA issues it is the CA's choice.
func TestMutualTLSGatewayFleetWithADNSTemplate(t *testing.T) {
	s := startSecure(t, "{cluster}.fleet.example.org")
	s.publish(t, st.WithGateways(st.Output(payments), edge), true)
	cert, key := s.ca.issue(t, leafSpec{dns: "shop/edge.fleet.example.org"})
	if got, err := sotwOutcome(t, s.dial(t, cert, key, nil), "shop/edge"); err != nil || got != 1 {
		t.Fatalf("responses %d, error %v: want the fleet's clusters", got, err)
	}
	if _, err := sotwOutcome(t, s.dial(t, cert, key, nil), "shop"); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("fleet shop: %v, want PermissionDenied", err)
	}
}
