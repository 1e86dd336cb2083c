package xbackend

import (
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// Family is the kind of route traffic a cluster of an XBackend carries.
type Family int

const (
	// FamilyHTTP is HTTPRoutes' (XBackendClusterName); a terminating
	// TLSRoute's stream goes there too, as to a Service's port cluster.
	FamilyHTTP Family = iota
	// FamilyGRPC is GRPCRoutes': HTTP/2 always.
	FamilyGRPC
	// FamilyRaw is TCPRoutes' and TLSRoutes' on listeners passing
	// streams on (RawOf): no HTTP, no ALPN.
	FamilyRaw
)

// Cluster is the plan of one cluster of an XBackend: the route traffic it
// carries, where it goes, the TLS it speaks (nil: plaintext) and whether
// it speaks HTTP/2 in plaintext (h2c).
type Cluster struct {
	Family Family
	Plan   plan.Cluster
	TLS    *plan.UpstreamTLS
	H2C    bool
}

// Serves says whether an XBackend of protocol p can carry family f's
// traffic (D4): what clusters it gets, and what routes may send to it.
func Serves(p gwxv1a1.BackendProtocol, f Family) bool {
	switch f {
	case FamilyHTTP:
		return p != gwxv1a1.BackendProtocolTCP
	case FamilyGRPC:
		switch p {
		case gwxv1a1.BackendProtocolHTTP11, gwxv1a1.BackendProtocolMCP, gwxv1a1.BackendProtocolTCP:
			return false
		}
		return true
	case FamilyRaw:
		return p == "" || p == gwxv1a1.BackendProtocolTCP
	}
	return false
}

// speaks says whether the family may speak HTTP/2 (h2) and HTTP/1.1
// (h1) to an XBackend of protocol p: both, ALPN decides (HTTP/1.1 in
// plaintext).
func speaks(p gwxv1a1.BackendProtocol, f Family) (h2, h1 bool) {
	if f == FamilyGRPC {
		return true, false
	}
	switch p {
	case gwxv1a1.BackendProtocolHTTP11:
		return false, true
	case gwxv1a1.BackendProtocolHTTP2, gwxv1a1.BackendProtocolGRPC, gwxv1a1.BackendProtocolH2C:
		return true, false
	}
	return true, true // unset, HTTP, MCP (Streamable HTTP is HTTP): ALPN decides, HTTP/1.1 in plaintext
}

// Clusters are the plans of every cluster an accepted XBackend serves,
// one per family its protocol allows (D2: XBackends are few; a fleet is
// served those its routes reach). None when it is not accepted.
func (v *Verdict) Clusters() []Cluster {
	if !v.Accepted() {
		return nil
	}
	base := plan.XBackendClusterName(v.Name.Namespace, v.Name.Name, v.Port)
	names := map[Family]string{FamilyHTTP: base, FamilyGRPC: plan.XBackendGRPCClusterName(v.Name.Namespace, v.Name.Name, v.Port), FamilyRaw: plan.RawOf(base)}
	var out []Cluster
	for _, f := range []Family{FamilyHTTP, FamilyGRPC, FamilyRaw} {
		// The base cluster always: a terminating TLSRoute's streams go
		// there whatever the protocol.
		if f != FamilyHTTP && !Serves(v.Protocol, f) {
			continue
		}
		stream := f == FamilyRaw || v.Protocol == gwxv1a1.BackendProtocolTCP
		c := Cluster{Family: f, Plan: plan.Cluster{Name: names[f], ExternalName: v.Hostname, Port: uint32(v.Port), FollowDNSTTL: true}}
		h2, h1 := speaks(v.Protocol, f)
		if v.TLS != nil {
			t := *v.TLS
			switch {
			case stream:
				t.Params.ALPNProtocols = nil
			case h2 && h1:
				t.Params.ALPNProtocols = []string{"h2", "http/1.1"}
			case h2:
				t.Params.ALPNProtocols = []string{"h2"}
			default:
				t.Params.ALPNProtocols = []string{"http/1.1"}
			}
			c.TLS = &t
		} else {
			c.H2C = !stream && h2 && !h1
		}
		out = append(out, c)
	}
	return out
}
