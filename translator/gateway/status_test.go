package gateway

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
)

// What Envoy refuses is keyed by socket: a refused UDP listener of port 53
// leaves the TCP listener of port 53 Programmed, and the other way round.
func TestRefusedIsPerSocket(t *testing.T) {
	const controller = "tlsplane.io/gateway"
	in := input.Inputs{
		GatewayClasses: []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "tlsplane"}, Spec: gwv1.GatewayClassSpec{ControllerName: controller}}},
		Gateways: []*gwv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw"}, Spec: gwv1.GatewaySpec{
			GatewayClassName: "tlsplane",
			Addresses:        []gwv1.GatewaySpecAddress{{Value: "192.0.2.1"}},
			Listeners: []gwv1.Listener{
				{Name: "dns-tcp", Protocol: gwv1.TCPProtocolType, Port: 53},
				{Name: "dns-udp", Protocol: gwv1.UDPProtocolType, Port: 53},
			},
		}}},
	}
	res := Judge(in, input.NewIndex(in), Config{ControllerName: controller}, metav1.Now())
	if len(res.Gateways) != 1 {
		t.Fatalf("%d Gateways judged, want 1", len(res.Gateways))
	}
	gs := res.Gateways[0]
	sockets := map[string]Socket{}
	for _, p := range gs.Ports("0.0.0.0") {
		sockets[p.Plan.Name] = p.Socket()
	}
	if len(sockets) != 2 {
		t.Fatalf("ports %v, want a TCP and a UDP listener of port 53", sockets)
	}
	for _, tc := range []struct{ refused, served gwv1.SectionName }{{"dns-udp", "dns-tcp"}, {"dns-tcp", "dns-udp"}} {
		t.Run("refused "+string(tc.refused), func(t *testing.T) {
			refused := map[Socket]string{{Port: 53, UDP: tc.refused == "dns-udp"}: "Envoy says no"}
			st := res.Status(gs, refused, metav1.Now())
			for _, l := range st.Listeners {
				programmed := meta.FindStatusCondition(l.Conditions, string(gwv1.ListenerConditionProgrammed))
				want := l.Name == tc.served
				if programmed == nil || (programmed.Status == metav1.ConditionTrue) != want {
					t.Errorf("listener %s: Programmed %+v, want %v", l.Name, programmed, want)
				}
				if !want && !strings.Contains(programmed.Message, "Envoy says no") {
					t.Errorf("listener %s: Programmed message %q does not say what Envoy refused", l.Name, programmed.Message)
				}
			}
		})
	}
}
