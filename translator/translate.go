package translator

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
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
//
// It remembers nothing between calls; a Translator gives the same result
// faster when called again with mostly the same objects.
func Translate(in Inputs, previous PreviousStatus, now time.Time, opts Options) Output {
	return newForgetful().Translate(in, previous, now, opts)
}

// translate is Translate with the caches of t.
func (t *Translator) translate(in Inputs, previous PreviousStatus, now time.Time, opts Options) Output {
	if opts.ControllerName == "" {
		opts.ControllerName = DefaultControllerName
	}
	t.begin(opts)
	defer t.done()
	ix := newObjectIndex(in)
	policies := t.uniquePolicies(in.Policies)
	verdicts := make([]*policyVerdict, 0, len(policies))
	for _, p := range policies {
		verdicts = append(verdicts, t.judge(p, ix, opts))
	}
	byPolicy, winners := attach(verdicts, ix)

	b := newOutputBuilder(len(ix.services))
	var governors []*policyVerdict
	t.serviceOrder = sameKeysSorted(ix.services, t.serviceOrder)
	for _, nn := range t.serviceOrder {
		svc := ix.services[nn]
		governors = governors[:0]
		for _, port := range svc.Spec.Ports {
			governors = append(governors, governing(winners, nn, port))
		}
		t.addService(b, svc, nn, governors, ix)
	}

	stamp := metav1.NewTime(now.UTC().Truncate(time.Second))
	gateways := translateGateways(in, ix, opts, stamp)
	b.warnings = append(b.warnings, gateways.warnings...)
	out := b.output(t.secretOrder)
	t.secretOrder = b.secretOrder
	out.Fleets, out.GatewayAPI = gateways.fleets, gateways.statuses
	if b.unserved != nil {
		markUnserved(byPolicy, b.unserved, ix)
	}
	out.Statuses = make(map[types.NamespacedName]gwv1.PolicyStatus, len(verdicts))
	for i, v := range verdicts {
		prev, ok := previous[v.name]
		if !ok {
			prev = v.policy.Status
		}
		out.Statuses[v.name] = t.policyStatus(v, byPolicy[i], prev, gateways.reach, ix, opts, now, stamp)
	}
	if !t.forget {
		t.remember(in, ix, verdicts, byPolicy, winners, gateways, b, &out, now)
	}
	return out
}

// policyStatus is one policy's complete status, from its attachments.
func (t *Translator) policyStatus(v *policyVerdict, as []*attachment, prev gwv1.PolicyStatus, reach map[serviceBackend][]types.NamespacedName,
	ix *objectIndex, opts Options, now time.Time, stamp metav1.Time) gwv1.PolicyStatus {
	if note := caExpiryNote(v, now, opts); note != "" {
		for _, a := range as {
			a.caNote = note
		}
	}
	if reached := reachingGateways(as, reach, ix); reached != nil {
		// Gateway ancestors depend on routes, which the memo does not
		// track: computed afresh.
		return mergeStatus(prev, gatewayAncestorStatuses(v, as, reached, opts.ControllerName), opts.ControllerName, v.policy.Generation, stamp)
	}
	return t.status(v, as, prev, opts.ControllerName, stamp)
}

// outputBuilder collects resources as ports are translated, then sorts them.
type outputBuilder struct {
	clusters  []*clusterv3.Cluster
	endpoints []*endpointv3.ClusterLoadAssignment
	secrets   map[string]*tlsv3.Secret
	// origins lists, per resource, the policies that produced it, unique.
	origins map[string][]types.NamespacedName
	// namespaces is each cluster's Service namespace.
	namespaces map[string]string
	// caNotAfter is each CA secret's earliest certificate expiry.
	caNotAfter map[string]time.Time
	warnings   []string
	// unserved lists, per Service, its governed ports without a cluster.
	unserved map[types.NamespacedName][]*portOutput
	// secretOrder is the sorted names of secrets, set by output.
	secretOrder []string
}

func newOutputBuilder(services int) *outputBuilder {
	return &outputBuilder{
		clusters:   make([]*clusterv3.Cluster, 0, services),
		endpoints:  make([]*endpointv3.ClusterLoadAssignment, 0, services),
		secrets:    make(map[string]*tlsv3.Secret, services),
		namespaces: make(map[string]string, services),
		origins:    make(map[string][]types.NamespacedName, 2*services),
		caNotAfter: map[string]time.Time{},
	}
}

// portOutput is what one Service port contributed to the output.
type portOutput struct {
	cluster  *clusterv3.Cluster
	endpoint *endpointv3.ClusterLoadAssignment // nil for ExternalName
	secret   *tlsv3.Secret                     // nil without a CA secret
	policy   *policyVerdict                    // the port's; nil without one
	// namespace is the Service's, for the fleet filter.
	namespace string
	warnings  []string
	// unserved says why the port (number) gets no cluster, for the status
	// of its policy.
	unserved string
	number   int32
}

// translatePort makes one Service port's cluster (and its endpoints):
// plaintext without a policy, the policy's TLS when it is accepted, and a
// TLS that fails every handshake when it is not. Without a cluster, only
// the warnings are set.
func translatePort(svc *corev1.Service, nn types.NamespacedName, cp clusterPort, shared *sharedParts, ix *objectIndex) portOutput {
	port, policy := cp.port, cp.governor
	var warnings []string
	if cp.warning != "" {
		warnings = append(warnings, cp.warning)
	}
	spec := clusterSpec{name: ClusterName(nn, port.Port), eds: shared.eds}
	external := svc.Spec.Type == corev1.ServiceTypeExternalName
	if external {
		if svc.Spec.ExternalName == "" {
			// The API server refuses it; a manifest file need not. An EDS
			// cluster in its place would have no load assignment and make
			// the whole snapshot inconsistent.
			return unservedPort(warnings, cp, fmt.Sprintf("Service %s port %d: no cluster: type ExternalName without spec.externalName", nn, port.Port))
		}
		spec.externalName, spec.port = svc.Spec.ExternalName, uint32(port.Port)
	}
	var secret *tlsv3.Secret
	if policy == nil && port.AppProtocol != nil && *port.AppProtocol == appProtocolH2C {
		// Without a policy the port is cleartext; its appProtocol says
		// HTTP/2. Under a policy, the policy's ALPN decides.
		spec.tls = shared.h2c
	}
	if policy != nil {
		spec.tls = shared.failClosed
		if policy.accepted() {
			spec.tls = policy.cluster
			secret = policy.secret
		}
	}
	c, err := envoyCluster(spec)
	if err != nil {
		return unservedPort(warnings, cp, fmt.Sprintf("Service %s port %d: no cluster: Envoy would reject it: %v", nn, port.Port, err))
	}
	out := portOutput{cluster: c, secret: secret, policy: policy, namespace: nn.Namespace, warnings: warnings}
	if external {
		return out
	}
	cla, err := loadAssignment(c.Name, readyEndpoints(port, ix.slicesByService[nn]))
	if err != nil {
		// An EDS cluster without its assignment would never warm; serve it
		// empty rather than not at all.
		out.warnings = append(out.warnings, fmt.Sprintf("Service %s port %d: endpoints dropped: %v", nn, port.Port, err))
		cla = &endpointv3.ClusterLoadAssignment{ClusterName: c.Name}
	}
	out.endpoint = cla
	return out
}

// unservedPort is the output of a port that gets no cluster: a warning,
// and why, for its policy's status.
func unservedPort(warnings []string, cp clusterPort, why string) portOutput {
	return portOutput{warnings: append(warnings, why), unserved: why, policy: cp.governor, number: cp.port.Port}
}

// add puts one port's output into the result; a secret already there (same
// name, so same refs and content) is kept.
func (b *outputBuilder) add(p *portOutput, svc types.NamespacedName) {
	b.warnings = append(b.warnings, p.warnings...)
	if p.cluster == nil {
		if p.policy != nil {
			if b.unserved == nil {
				b.unserved = map[types.NamespacedName][]*portOutput{}
			}
			b.unserved[svc] = append(b.unserved[svc], p)
		}
		return
	}
	b.clusters = append(b.clusters, p.cluster)
	b.namespaces[p.cluster.Name] = p.namespace
	if p.endpoint != nil {
		b.endpoints = append(b.endpoints, p.endpoint)
	}
	if p.secret != nil && b.secrets[p.secret.Name] == nil {
		b.secrets[p.secret.Name] = p.secret
		if bundle := p.policy.trust.bundle; bundle != nil && !bundle.notAfter.IsZero() {
			b.caNotAfter[p.secret.Name] = bundle.notAfter
		}
	}
	if p.policy != nil {
		b.origin(p.cluster.Name, p.policy.name)
		if p.secret != nil {
			b.origin(p.secret.Name, p.policy.name)
		}
	}
}

func (b *outputBuilder) origin(resource string, policy types.NamespacedName) {
	if slices.Contains(b.origins[resource], policy) {
		return
	}
	b.origins[resource] = append(b.origins[resource], policy)
}

// output sorts everything by name; secretOrder, when it holds exactly the
// secrets' names, is their order.
func (b *outputBuilder) output(secretOrder []string) Output {
	b.secretOrder = sameNamesSorted(b.secrets, secretOrder)
	out := Output{
		Clusters:  b.clusters,
		Endpoints: b.endpoints,
		Secrets:   make([]*tlsv3.Secret, 0, len(b.secrets)),
		Origins:   b.origins,
		Warnings:  b.warnings,

		CANotAfter: b.caNotAfter,

		ClusterNamespaces: b.namespaces,
	}
	// Names are unique, so any sort gives the same order.
	slices.SortFunc(out.Clusters, func(x, y *clusterv3.Cluster) int { return strings.Compare(x.Name, y.Name) })
	slices.SortFunc(out.Endpoints, func(x, y *endpointv3.ClusterLoadAssignment) int {
		return strings.Compare(x.ClusterName, y.ClusterName)
	})
	for _, name := range b.secretOrder {
		out.Secrets = append(out.Secrets, b.secrets[name])
	}
	for _, policies := range out.Origins {
		if len(policies) > 1 {
			sort.Slice(policies, func(i, j int) bool { return policies[i].String() < policies[j].String() })
		}
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

// uniquePolicies is uniquePolicies remembering the last order.
func (t *Translator) uniquePolicies(in []*gwv1.BackendTLSPolicy) []*gwv1.BackendTLSPolicy {
	byName := make(map[types.NamespacedName]*gwv1.BackendTLSPolicy, len(in))
	for _, p := range in {
		byName[nameOf(p.Namespace, p.Name)] = p
	}
	t.policyOrder = sameKeysSorted(byName, t.policyOrder)
	out := make([]*gwv1.BackendTLSPolicy, 0, len(byName))
	for _, nn := range t.policyOrder {
		out = append(out, byName[nn])
	}
	return out
}

// sameKeysSorted is sortedKeys(m), returning last when it holds exactly
// m's keys: checking that costs one lookup per key, sorting far more.
func sameKeysSorted[V any](m map[types.NamespacedName]V, last []types.NamespacedName) []types.NamespacedName {
	if len(last) == len(m) {
		same := true
		for _, k := range last {
			if _, ok := m[k]; !ok {
				same = false
				break
			}
		}
		if same {
			return last
		}
	}
	return sortedKeys(m)
}

// sameNamesSorted is sortedNames(m), returning last when it holds exactly
// m's keys.
func sameNamesSorted[V any](m map[string]V, last []string) []string {
	if len(last) == len(m) {
		same := true
		for _, k := range last {
			if _, ok := m[k]; !ok {
				same = false
				break
			}
		}
		if same {
			return last
		}
	}
	return sortedNames(m)
}

// sortedKeys returns a map's namespace/name keys by namespace, then name.
func sortedKeys[V any](m map[types.NamespacedName]V) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return keys
}

// sortedNames returns a string-keyed map's keys in order.
func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
