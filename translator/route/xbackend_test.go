package route

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/input"
)

// TestXBackendProtocolPerRouteKind: D4's matrix, every route kind
// against every protocol.
func TestXBackendProtocolPerRouteKind(t *testing.T) {
	protocols := []gwxv1a1.BackendProtocol{"", gwxv1a1.BackendProtocolHTTP, gwxv1a1.BackendProtocolHTTP11, gwxv1a1.BackendProtocolHTTP2,
		gwxv1a1.BackendProtocolH2C, gwxv1a1.BackendProtocolGRPC, gwxv1a1.BackendProtocolMCP, gwxv1a1.BackendProtocolTCP}
	refused := map[input.Kind][]gwxv1a1.BackendProtocol{
		input.KindHTTPRoute: {gwxv1a1.BackendProtocolTCP},
		input.KindGRPCRoute: {gwxv1a1.BackendProtocolHTTP11, gwxv1a1.BackendProtocolMCP, gwxv1a1.BackendProtocolTCP},
		input.KindTLSRoute:  protocols[1:7],
		input.KindTCPRoute:  protocols[1:7],
	}
	for kind, refuses := range refused {
		for _, p := range protocols {
			want := false
			for _, r := range refuses {
				want = want || r == p
			}
			if got := protocolMismatch(kind, p) != ""; got != want {
				t.Errorf("%s to protocol %q: refused %v, want %v", kind, p, got, want)
			}
		}
	}
}

// TestResolveXBackend: the references of D1 and D6, their reasons, and
// the messages naming object, field and value.
func TestResolveXBackend(t *testing.T) {
	xb := func(name string, port int32, refused string) input.XBackend {
		return input.XBackend{Object: &gwxv1a1.XBackend{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: gwxv1a1.BackendSpec{Port: gwxv1a1.BackendPort{Port: gwxv1a1.PortNumber(port)}}}, Refused: refused, Why: "because"}
	}
	ix := &input.Index{XBackends: input.XBackends{
		{Namespace: "shop", Name: "pay"}:    xb("pay", 443, ""),
		{Namespace: "shop", Name: "broken"}: xb("broken", 443, "Invalid"),
		{Namespace: "bank", Name: "ledger"}: xb("ledger", 443, ""),
	}}
	group, kind := gwv1.Group(gwxv1a1.GroupName), gwv1.Kind("XBackend")
	ref := func(ns, name string, port int32) gwv1.BackendObjectReference {
		r := gwv1.BackendObjectReference{Group: &group, Kind: &kind, Name: gwv1.ObjectName(name)}
		if ns != "" {
			n := gwv1.Namespace(ns)
			r.Namespace = &n
		}
		if port != 0 {
			p := gwv1.PortNumber(port)
			r.Port = &p
		}
		return r
	}
	for _, tc := range []struct {
		name                   string
		kind                   input.Kind
		ref                    gwv1.BackendObjectReference
		cluster, reason, where string
	}{
		{"an HTTPRoute", input.KindHTTPRoute, ref("", "pay", 0), "XBackend/shop/pay/443", "", ""},
		{"its port", input.KindHTTPRoute, ref("", "pay", 443), "XBackend/shop/pay/443", "", ""},
		{"a GRPCRoute", input.KindGRPCRoute, ref("shop", "pay", 0), "XBackend/shop/pay/443/grpc", "", ""},
		{"a TCPRoute", input.KindTCPRoute, ref("", "pay", 0), "XBackend/shop/pay/443", "", ""},
		{"another port", input.KindHTTPRoute, ref("", "pay", 8443), "", "BackendNotFound", "XBackend shop/pay: backendRef port 8443 is not its spec.port.port 443"},
		{"another namespace", input.KindHTTPRoute, ref("bank", "ledger", 0), "", "RefNotPermitted", "XBackend bank/ledger: an XBackend must be in the HTTPRoute's namespace shop"},
		{"missing", input.KindHTTPRoute, ref("", "nowhere", 0), "", "BackendNotFound", "XBackend shop/nowhere does not exist"},
		{"not accepted", input.KindHTTPRoute, ref("", "broken", 0), "", ReasonInvalidBackend, "XBackend shop/broken is not accepted (Invalid): because"},
		{"a UDPRoute", input.KindUDPRoute, ref("", "pay", 0), "", "InvalidKind", "XBackend shop/pay: a UDPRoute cannot send to an XBackend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := &Route{Kind: tc.kind, Name: types.NamespacedName{Namespace: "shop", Name: "r"}}
			cluster, reason, msg := rs.resolveBackend(tc.ref, ix, nil)
			if cluster != tc.cluster || reason != tc.reason || !strings.Contains(msg, tc.where) {
				t.Errorf("got %q %q %q, want %q %q %q", cluster, reason, msg, tc.cluster, tc.reason, tc.where)
			}
		})
	}
}
