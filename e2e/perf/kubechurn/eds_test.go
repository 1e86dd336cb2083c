package kubechurn

import (
	"context"
	"net"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// watchLoadAssignments tells arrivals which generation of which Service
// each load assignment a delta ADS client (harness.WatchLoadAssignments)
// receives carries, and when it arrived. It runs until ctx ends; an error
// ends it early and is sent on the returned channel.
func watchLoadAssignments(ctx context.Context, addr, nodeID, fleet string, a *arrivals) (<-chan error, error) {
	return harness.WatchLoadAssignments(ctx, addr, &corev3.Node{Id: nodeID, Cluster: fleet}, func(la harness.LoadAssignment) {
		if i, g, ok := churnedGeneration(la); ok {
			a.served(i, g, la.At)
		}
	})
}

// churnedGeneration reads which Service a load assignment is and the
// generation its churned endpoint's address carries.
func churnedGeneration(la harness.LoadAssignment) (service, gen int, ok bool) {
	service, ok = serviceOfCluster(la.Cluster)
	if !ok {
		return 0, 0, false
	}
	for _, endpoint := range la.Endpoints {
		host, _, err := net.SplitHostPort(endpoint)
		if err != nil {
			continue
		}
		if g, ok := addressGen(host); ok {
			return service, g, true
		}
	}
	return 0, 0, false
}

// serviceOfCluster is clusterName's inverse: "churn-K/svc-I/443" → I.
func serviceOfCluster(name string) (int, bool) {
	parts := strings.Split(name, "/")
	if len(parts) != 3 || !strings.HasPrefix(parts[1], "svc-") {
		return 0, false
	}
	i, err := strconv.Atoi(strings.TrimPrefix(parts[1], "svc-"))
	return i, err == nil && clusterName(i) == name
}
