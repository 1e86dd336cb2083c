package translator

import (
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// ClusterName is the name users route to: `<namespace>/<service>/<port>`.
func ClusterName(service types.NamespacedName, port int32) string {
	return service.Namespace + "/" + service.Name + "/" + strconv.Itoa(int(port))
}

// GatewayFleet is the fleet (the Envoy node's cluster) that serves a
// Gateway: `<namespace>/<gateway>`.
func GatewayFleet(gateway types.NamespacedName) string {
	return gateway.Namespace + "/" + gateway.Name
}
