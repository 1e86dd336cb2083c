package provisioner

import (
	"cmp"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// servicePort is one port of the Gateway's Service.
type servicePort struct {
	port     int32
	protocol corev1.Protocol
}

// listenerPorts are the listener ports of the Gateway and its
// ListenerSets, once each per protocol (UDP for UDP listeners, TCP for
// every other), sorted.
func listenerPorts(gw *gwv1.Gateway, listenerSets []*gwv1.ListenerSet) []servicePort {
	var out []servicePort
	add := func(port gwv1.PortNumber, protocol gwv1.ProtocolType) {
		sp := servicePort{port: int32(port), protocol: corev1.ProtocolTCP}
		if protocol == gwv1.UDPProtocolType {
			sp.protocol = corev1.ProtocolUDP
		}
		if !slices.Contains(out, sp) {
			out = append(out, sp)
		}
	}
	for _, l := range gw.Spec.Listeners {
		add(l.Port, l.Protocol)
	}
	for _, ls := range listenerSets {
		for _, l := range ls.Spec.Listeners {
			add(l.Port, l.Protocol)
		}
	}
	slices.SortFunc(out, func(a, b servicePort) int {
		return cmp.Or(cmp.Compare(a.port, b.port), cmp.Compare(a.protocol, b.protocol))
	})
	return out
}

// serviceName names a port of the Service: "tcp-443", "udp-53".
func (sp servicePort) name() string {
	proto := "tcp"
	if sp.protocol == corev1.ProtocolUDP {
		proto = "udp"
	}
	return proto + "-" + strconv.Itoa(int(sp.port))
}

func (sp servicePort) apply() *corev1ac.ServicePortApplyConfiguration {
	return corev1ac.ServicePort().WithName(sp.name()).WithProtocol(sp.protocol).
		WithPort(sp.port).WithTargetPort(intstr.FromInt32(sp.port))
}

// Preferred ports of the admin and the readiness listener; the first free
// one from there is taken when a Gateway listener uses it.
const (
	preferredAdminPort = 19000
	preferredReadyPort = 19001
)

// portsFor picks the admin and readiness ports clear of the Gateway's
// listener ports (a listener binds every address, the admin loopback).
func portsFor(listeners []servicePort) envoyPorts {
	used := map[int32]bool{}
	for _, sp := range listeners {
		used[sp.port] = true
	}
	free := func(from int32) int32 {
		for used[from] {
			from++
		}
		used[from] = true
		return from
	}
	// The readiness port first: the probe sees it, the admin is private.
	ready := free(preferredReadyPort)
	return envoyPorts{Ready: ready, Admin: free(preferredAdminPort)}
}
