package translator

import (
	"fmt"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/envoy"
	"github.com/tlsplane/tlsplane/translator/fleet"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/upstream"
)

// portOutput is what one Service port contributed to the output.
type portOutput struct {
	cluster  *clusterv3.Cluster
	endpoint *endpointv3.ClusterLoadAssignment // nil for ExternalName
	secrets  []*tlsv3.Secret                   // its governor's SDS secrets; read-only
	policy   *governor                         // the port's; nil without one
	// spec is what cluster was built from; presentable the policy's TLS
	// plan of its context when a Gateway's client certificate may be
	// added to it (package fleet), nil otherwise.
	spec        plan.Cluster
	presentable *plan.UpstreamTLS
	// namespace is the Service's, for the fleet filter.
	namespace string
	warnings  []string
	// unserved says why the port (number) gets no cluster, for the status
	// of its policy.
	unserved string
	number   int32
}

// translatePort emits one Service port's cluster (and its endpoints):
// plaintext without a policy, the policy's TLS when it is accepted, and a
// TLS that fails every handshake when it is not. Without a cluster, only
// the warnings are set. g is the port's governor, nil without one; budget
// the Service's XBackendTrafficPolicy's retry budget, nil without one.
func (e *emitter) translatePort(svc *corev1.Service, nn types.NamespacedName, cp upstream.Port, g *governor, slices []*discoveryv1.EndpointSlice, budget *plan.RetryBudget) portOutput {
	var warnings []string
	if cp.Warning != "" {
		warnings = append(warnings, cp.Warning)
	}
	spec, kind, why := cp.Cluster(svc, nn)
	if why != "" {
		return unservedPort(warnings, cp, g, why)
	}
	if cp.Variant == upstream.Own || cp.Variant == upstream.GRPC {
		spec.RetryBudget = budget // routes retry HTTP requests only
	}
	var tls envoy.ClusterTLS // plaintext
	var secrets []*tlsv3.Secret
	var presentable *plan.UpstreamTLS
	switch kind {
	case upstream.H2C:
		tls = e.parts.H2C
	case upstream.FailClosed:
		tls = e.parts.FailClosed
	case upstream.Governed:
		tls, secrets, presentable = g.tls, g.secrets, &g.verdict.TLS
	case upstream.GovernedGRPC:
		tls, secrets = e.grpcTLS(g), g.secrets
		presentable = g.grpcPlan
	}
	if presentable != nil && presentable.ClientCertificate != "" {
		presentable = nil // its own policy's certificate wins over a Gateway's
	}
	c, err := envoy.Cluster(spec, tls, e.parts)
	if err != nil {
		return unservedPort(warnings, cp, g, fmt.Sprintf("Service %s port %d: no cluster: Envoy would reject it: %v", nn, cp.Port, err))
	}
	out := portOutput{cluster: c, secrets: secrets, policy: g, namespace: nn.Namespace, warnings: warnings, spec: spec, presentable: presentable}
	if spec.ExternalName != "" || spec.EDSName != "" {
		return out // DNS, or the endpoints of the port's own cluster
	}
	cla, err := envoy.LoadAssignment(c.Name, upstream.ReadyEndpoints(cp.ServicePort, slices))
	if err != nil {
		// An EDS cluster without its assignment would never warm; serve it
		// empty rather than not at all.
		out.warnings = append(out.warnings, fmt.Sprintf("Service %s port %d: endpoints dropped: %v", nn, cp.Port, err))
		cla = &endpointv3.ClusterLoadAssignment{ClusterName: c.Name}
	}
	out.endpoint = cla
	return out
}

// unservedPort is the output of a port that gets no cluster: a warning,
// and why, for its policy's status.
func unservedPort(warnings []string, cp upstream.Port, g *governor, why string) portOutput {
	return portOutput{warnings: append(warnings, why), unserved: why, policy: g, number: cp.Port}
}

// unservedPort is what the status of a governed port without a cluster
// needs: plain data, not emitter output.
func (p *portOutput) unservedPort() backendtls.UnservedPort {
	return backendtls.UnservedPort{Governor: p.policy.verdict, Number: p.number, Why: p.unserved}
}

// producers is each cluster's port output, by cluster name.
func producers(produced []*portOutput) map[string]*portOutput {
	m := make(map[string]*portOutput, len(produced))
	for _, p := range produced {
		m[p.cluster.Name] = p
	}
	return m
}

// portLookup finds a cluster's port output in producers.
func portLookup(producers map[string]*portOutput) fleet.Lookup {
	return func(name string) (fleet.Port, bool) {
		p := producers[name]
		if p == nil {
			return fleet.Port{}, false
		}
		return fleet.Port{Base: p.cluster, Spec: p.spec, TLS: p.presentable}, true
	}
}
