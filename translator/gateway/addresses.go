package gateway

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// addressVerdict is what a Gateway's addresses make of its status: the
// addresses to report, and why it is not Programmed (reason, message), ""
// for nothing. An address of a type tlsplane does not report makes it not
// Accepted instead (unsupportedAddress).
type addressVerdict struct {
	addresses []gwv1.GatewayStatusAddress
	reason    gwv1.GatewayConditionReason
	message   string
}

// gatewayAddresses judges spec.addresses against what the Gateway's
// infrastructure assigned. tlsplane runs no Envoy and no Service: the
// infrastructure is the Services of the Gateway's namespace labelled with
// its name (their load-balancer ingress, else the cluster IPs of those not
// of type LoadBalancer). Without such a Service, spec.addresses (with a
// value) are taken as where the operator's Envoys are. With one, its
// addresses are the Gateway's: a requested value it was not given is not
// usable, and a request without a value wants one address of its type.
func gatewayAddresses(gs *Gateway, g *gatewayIndex) addressVerdict {
	var v addressVerdict
	spec := gs.gw.Spec.Addresses
	fronting := g.fronting[gs.nn]
	if len(fronting) == 0 {
		for i, a := range spec {
			if a.Value != "" {
				v.addresses = append(v.addresses, gwv1.GatewayStatusAddress{Type: ptrTo(specAddressType(a)), Value: a.Value})
			} else if v.reason == "" {
				v.reason, v.message = gwv1.GatewayReasonAddressNotAssigned, fmt.Sprintf("spec.addresses[%d]: no value, and no Service of namespace %s labelled %s=%s to assign an %s",
					i, gs.nn.Namespace, gwv1.GatewayNameLabelKey, gs.nn.Name, specAddressType(a))
			}
		}
		if len(v.addresses) == 0 && v.reason == "" {
			v.reason, v.message = gwv1.GatewayReasonAddressNotAssigned, fmt.Sprintf("no address: set spec.addresses, or label a Service of namespace %s %s=%s", gs.nn.Namespace, gwv1.GatewayNameLabelKey, gs.nn.Name)
		}
		return v
	}
	v.addresses = serviceAddresses(fronting)
	services := serviceNames(fronting)
	claimed := make([]bool, len(v.addresses))
	var unusable, unassigned []string
	for i, a := range spec {
		if a.Value == "" {
			continue
		}
		j := indexOfAddress(v.addresses, specAddressType(a), a.Value)
		switch {
		case j >= 0:
			claimed[j] = true
		case len(v.addresses) == 0:
			unassigned = append(unassigned, fmt.Sprintf("spec.addresses[%d] %s %q: Service %s has no address yet", i, specAddressType(a), a.Value, services))
		default:
			unusable = append(unusable, fmt.Sprintf("spec.addresses[%d] %s %q is not usable: Service %s was given %s instead; remove it or request an address that infrastructure can assign",
				i, specAddressType(a), a.Value, services, addressList(v.addresses)))
		}
	}
	for i, a := range spec {
		if a.Value != "" {
			continue
		}
		j := firstUnclaimed(v.addresses, claimed, specAddressType(a))
		if j < 0 {
			unassigned = append(unassigned, fmt.Sprintf("spec.addresses[%d]: Service %s has no %s address left to assign", i, services, specAddressType(a)))
			continue
		}
		claimed[j] = true
	}
	switch {
	case len(unusable) > 0:
		v.reason, v.message = gwv1.GatewayReasonAddressNotUsable, strings.Join(append(unusable, unassigned...), "; ")
	case len(unassigned) > 0:
		v.reason, v.message = gwv1.GatewayReasonAddressNotAssigned, strings.Join(unassigned, "; ")
	case len(v.addresses) == 0:
		v.reason, v.message = gwv1.GatewayReasonAddressNotAssigned, fmt.Sprintf("no address yet: Service %s has no load-balancer ingress (nor, if not of type LoadBalancer, a cluster IP)", services)
	}
	return v
}

// serviceAddresses are the load-balancer ingress of the Services, else
// the cluster IPs of those not of type LoadBalancer: a load balancer
// without an ingress yet gives none, since a cluster IP reached without a
// kube-proxy leads nowhere, or worse, out of the cluster.
func serviceAddresses(services []*corev1.Service) []gwv1.GatewayStatusAddress {
	var out []gwv1.GatewayStatusAddress
	for _, svc := range services {
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				out = append(out, gwv1.GatewayStatusAddress{Type: ptrTo(gwv1.IPAddressType), Value: in.IP})
			} else if in.Hostname != "" {
				out = append(out, gwv1.GatewayStatusAddress{Type: ptrTo(gwv1.HostnameAddressType), Value: in.Hostname})
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, svc := range services {
		if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			continue
		}
		for _, cip := range svc.Spec.ClusterIPs {
			if cip != "" && cip != corev1.ClusterIPNone {
				out = append(out, gwv1.GatewayStatusAddress{Type: ptrTo(gwv1.IPAddressType), Value: cip})
			}
		}
	}
	return out
}

// specAddressType is a requested address's type; the API defaults it to
// IPAddress.
func specAddressType(a gwv1.GatewaySpecAddress) gwv1.AddressType {
	if a.Type == nil {
		return gwv1.IPAddressType
	}
	return *a.Type
}

// indexOfAddress finds value among addresses of type t: IPs compare as
// addresses (so 2001:db8::1 is 2001:db8:0::1), hostnames without case.
func indexOfAddress(addresses []gwv1.GatewayStatusAddress, t gwv1.AddressType, value string) int {
	want, wantErr := netip.ParseAddr(value)
	for i, a := range addresses {
		if *a.Type != t {
			continue
		}
		if t == gwv1.IPAddressType && wantErr == nil {
			if got, err := netip.ParseAddr(a.Value); err == nil && got == want {
				return i
			}
			continue
		}
		if strings.EqualFold(a.Value, value) {
			return i
		}
	}
	return -1
}

func firstUnclaimed(addresses []gwv1.GatewayStatusAddress, claimed []bool, t gwv1.AddressType) int {
	for i, a := range addresses {
		if !claimed[i] && *a.Type == t {
			return i
		}
	}
	return -1
}

func serviceNames(services []*corev1.Service) string {
	names := make([]string, len(services))
	for i, s := range services {
		names[i] = s.Namespace + "/" + s.Name
	}
	return strings.Join(names, ", ")
}

func addressList(addresses []gwv1.GatewayStatusAddress) string {
	values := make([]string, len(addresses))
	for i, a := range addresses {
		values[i] = a.Value
	}
	return strings.Join(values, ", ")
}
