package translator

import (
	"fmt"
	"sort"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/anypb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Translate is the whole translation: objects in, Envoy resources and policy
// statuses out. It is pure and deterministic.
//
// A policy missing from previous is taken to carry the status its object
// holds. Only TCP Service ports get clusters: TLS needs a stream.
func Translate(in Inputs, previous PreviousStatus, now time.Time, opts Options) Output {
	if opts.ControllerName == "" {
		opts.ControllerName = DefaultControllerName
	}
	ix := newObjectIndex(in)
	policies := uniquePolicies(in.Policies)
	verdicts := make([]*policyVerdict, 0, len(policies))
	for _, p := range policies {
		verdicts = append(verdicts, judgePolicy(p, ix, opts))
	}
	byPolicy, winners := attach(verdicts, ix)

	b := newOutputBuilder()
	failClosed, _, err := packedTLS(failClosedTLSContext())
	if err != nil {
		panic("translator: the fail-closed TLS context is invalid: " + err.Error())
	}
	b.failClosed = failClosed
	for _, nn := range sortedKeys(ix.services) {
		svc := ix.services[nn]
		for _, port := range svc.Spec.Ports {
			if protocolOrTCP(port.Protocol) != corev1.ProtocolTCP {
				continue
			}
			b.addPort(svc, nn, port, governing(winners, nn, port), ix)
		}
	}

	out := b.output()
	stamp := metav1.NewTime(now.UTC().Truncate(time.Second))
	out.Statuses = make(map[types.NamespacedName]gwv1.PolicyStatus, len(verdicts))
	for _, v := range verdicts {
		prev, ok := previous[v.name]
		if !ok {
			prev = v.policy.Status
		}
		ours := ancestorStatuses(v, byPolicy[v], opts.ControllerName)
		out.Statuses[v.name] = mergeStatus(prev, ours, opts.ControllerName, v.policy.Generation, stamp)
	}
	return out
}

// outputBuilder collects resources as ports are translated, then sorts them.
type outputBuilder struct {
	clusters  []*clusterv3.Cluster
	endpoints []*endpointv3.ClusterLoadAssignment
	secrets   map[string]*tlsv3.Secret
	origins   map[string]map[types.NamespacedName]bool
	warnings  []string
	// failClosed is the packed TLS of ports whose policy is not accepted.
	failClosed *anypb.Any
}

func newOutputBuilder() *outputBuilder {
	return &outputBuilder{secrets: map[string]*tlsv3.Secret{}, origins: map[string]map[types.NamespacedName]bool{}}
}

// addPort makes one Service port's cluster (and its endpoints): plaintext
// without a policy, the policy's TLS when it is accepted, and a TLS that
// fails every handshake when it is not.
func (b *outputBuilder) addPort(svc *corev1.Service, nn types.NamespacedName, port corev1.ServicePort, policy *policyVerdict, ix *objectIndex) {
	spec := clusterSpec{name: ClusterName(nn, port.Port)}
	external := svc.Spec.Type == corev1.ServiceTypeExternalName
	if external {
		spec.externalName, spec.port = svc.Spec.ExternalName, uint32(port.Port)
	}
	var secret *tlsv3.Secret
	if policy != nil {
		spec.transport = b.failClosed
		if policy.accepted() {
			spec.transport, spec.httpOptions = policy.transport, policy.httpOptions
			if !policy.tls.params.InsecureSkipVerify {
				secret = caSecret(policy.trust.bundle)
			}
		}
	}
	c, err := envoyCluster(spec)
	if err != nil {
		b.warnings = append(b.warnings, fmt.Sprintf("Service %s port %d: no cluster: %v", nn, port.Port, err))
		return
	}
	if secret != nil && b.secrets[secret.Name] != nil {
		secret = b.secrets[secret.Name]
	} else if secret != nil {
		if err := secret.ValidateAll(); err != nil {
			b.warnings = append(b.warnings, fmt.Sprintf("Service %s port %d: no cluster: secret %s: %v", nn, port.Port, secret.Name, err))
			return
		}
		b.secrets[secret.Name] = secret
	}
	b.clusters = append(b.clusters, c)
	if policy != nil {
		b.origin(c.Name, policy.name)
		if secret != nil {
			b.origin(secret.Name, policy.name)
		}
	}
	if external {
		return
	}
	cla, err := loadAssignment(c.Name, readyEndpoints(port, ix.slicesByService[nn]))
	if err != nil {
		// An EDS cluster without its assignment would never warm; serve it
		// empty rather than not at all.
		b.warnings = append(b.warnings, fmt.Sprintf("Service %s port %d: endpoints dropped: %v", nn, port.Port, err))
		cla = &endpointv3.ClusterLoadAssignment{ClusterName: c.Name}
	}
	b.endpoints = append(b.endpoints, cla)
}

func (b *outputBuilder) origin(resource string, policy types.NamespacedName) {
	if b.origins[resource] == nil {
		b.origins[resource] = map[types.NamespacedName]bool{}
	}
	b.origins[resource][policy] = true
}

// output sorts everything by name.
func (b *outputBuilder) output() Output {
	out := Output{
		Clusters:  b.clusters,
		Endpoints: b.endpoints,
		Secrets:   make([]*tlsv3.Secret, 0, len(b.secrets)),
		Origins:   make(map[string][]types.NamespacedName, len(b.origins)),
		Warnings:  b.warnings,
	}
	sort.Slice(out.Clusters, func(i, j int) bool { return out.Clusters[i].Name < out.Clusters[j].Name })
	sort.Slice(out.Endpoints, func(i, j int) bool { return out.Endpoints[i].ClusterName < out.Endpoints[j].ClusterName })
	for _, name := range sortedNames(b.secrets) {
		out.Secrets = append(out.Secrets, b.secrets[name])
	}
	for resource, set := range b.origins {
		policies := make([]types.NamespacedName, 0, len(set))
		for p := range set {
			policies = append(policies, p)
		}
		sort.Slice(policies, func(i, j int) bool { return policies[i].String() < policies[j].String() })
		out.Origins[resource] = policies
	}
	sort.Strings(out.Warnings)
	return out
}

// uniquePolicies sorts policies by namespace/name, keeping one per name.
func uniquePolicies(in []*gwv1.BackendTLSPolicy) []*gwv1.BackendTLSPolicy {
	byName := make(map[types.NamespacedName]*gwv1.BackendTLSPolicy, len(in))
	for _, p := range in {
		byName[nameOf(p.Namespace, p.Name)] = p
	}
	out := make([]*gwv1.BackendTLSPolicy, 0, len(byName))
	for _, nn := range sortedKeys(byName) {
		out = append(out, byName[nn])
	}
	return out
}

// sortedKeys returns a map's namespace/name keys by namespace, then name.
func sortedKeys[V any](m map[types.NamespacedName]V) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Namespace != keys[j].Namespace {
			return keys[i].Namespace < keys[j].Namespace
		}
		return keys[i].Name < keys[j].Name
	})
	return keys
}

// sortedNames returns a string-keyed map's keys in order.
func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
