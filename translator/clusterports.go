package translator

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// clusterPort is one Service port that gets a cluster, with the policy
// governing it.
type clusterPort struct {
	port     corev1.ServicePort
	governor *policyVerdict
	// warning is set when other ports of the same number were folded in.
	warning string
}

// clusterPorts lists the TCP ports of svc that get a cluster, in spec
// order. Clusters are named by port number, so TCP ports sharing a number
// (the API server refuses that; a manifest file need not) make one
// cluster: the first port's, governed by the first policy among them, so
// a targeted port is never served by a plaintext twin.
func clusterPorts(svc *corev1.Service, nn types.NamespacedName, governors []*policyVerdict) []clusterPort {
	out := make([]clusterPort, 0, len(svc.Spec.Ports))
	byNumber := make(map[int32]int, len(svc.Spec.Ports))
	for i, port := range svc.Spec.Ports {
		if protocolOrTCP(port.Protocol) != corev1.ProtocolTCP {
			continue
		}
		j, seen := byNumber[port.Port]
		if !seen {
			byNumber[port.Port] = len(out)
			out = append(out, clusterPort{port: port, governor: governors[i]})
			continue
		}
		first := &out[j]
		if first.governor == nil {
			first.governor = governors[i]
		}
		first.warning = fmt.Sprintf("Service %s: ports %q and %q share number %d; one cluster serves both", nn, first.port.Name, port.Name, port.Port)
	}
	return out
}
