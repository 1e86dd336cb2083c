package translator

import (
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

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/fleet"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/xmesh"
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

// Translate is Translate (the function) reusing earlier results.
func (t *Translator) Translate(in Inputs, previous PreviousStatus, now time.Time, opts Options) Output {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.translate(in, previous, now, opts)
}

// translate is Translate with the caches of t: judge every policy (and
// emit its TLS), attach them, translate every Service port, run the
// Gateway rules and emit their plans, then write the statuses, which
// therefore show what Envoy would refuse.
func (t *Translator) translate(in Inputs, previous PreviousStatus, now time.Time, opts Options) Output {
	opts = withDefaults(opts)
	t.begin(opts)
	defer t.done()
	ix := input.NewIndex(in)
	t.traffic = judgeTraffic(in.XBackendTrafficPolicies, ix)
	xbackends := t.translateXBackends(ix)
	policies := t.uniquePolicies(in.Policies)
	verdicts := make([]*backendtls.Verdict, 0, len(policies))
	// A remembering Translator finds each governor in its verdict memo;
	// only a forgetful one needs a map of this call's.
	var emitted map[types.NamespacedName]*governor
	if t.forget {
		emitted = make(map[types.NamespacedName]*governor, len(policies))
	}
	for _, p := range policies {
		g := t.judge(p, ix)
		verdicts = append(verdicts, g.verdict)
		if emitted != nil {
			emitted[g.verdict.Name] = g
		}
	}
	byPolicy, winners := backendtls.Attach(verdicts, ix)

	b := newOutputBuilder(len(ix.Services))
	var governors []*backendtls.Verdict
	t.serviceOrder = input.SameKeysSorted(ix.Services, t.serviceOrder)
	for _, nn := range t.serviceOrder {
		svc := ix.Services[nn]
		governors = governors[:0]
		for _, port := range svc.Spec.Ports {
			governors = append(governors, backendtls.Governing(winners, nn, port))
		}
		t.addService(b, svc, nn, governors, ix, emitted)
	}

	stamp := metav1.NewTime(now.UTC().Truncate(time.Second))
	gateways := t.translateGateways(in, ix, t.gatewayConfig, stamp)
	b.warnings = append(b.warnings, gateways.warnings...)
	b.addXBackends(xbackends)
	out := b.output(t.secretOrder)
	t.secretOrder = b.secretOrder
	if fleet.AnyPresents(gateways.judged) {
		gateways.fleets, gateways.ownClusters, _ = fleet.MakeOwnClusters(gateways.judged, gateways.fleets, nil, t.fleetEmitter(), portLookup(producers(b.produced)), nil, everyFleet)
		if warnings := fleet.Warnings(gateways.ownClusters); len(warnings) > 0 {
			out.Warnings = append(out.Warnings, warnings...)
			sort.Strings(out.Warnings)
		}
	}
	out.Fleets, out.GatewayAPI = gateways.fleets, gateways.statuses
	out.GatewayAPI.XBackendTrafficPolicies = t.traffic.statuses(gateways.judged, ix, t.policyConfig.ControllerName, stamp)
	out.GatewayAPI.XBackends = xbackends.statuses(gateways.judged, t.gatewayConfig.ControllerName, stamp, now, t.policyConfig.CAExpiryWarning)
	out.XBackendOrigins = xbackends.origins
	out.GatewayAPI.XMeshes = xmesh.Statuses(in.XMeshes, t.gatewayConfig.ControllerName, stamp)
	meshOut := t.translateMesh(in, ix, t.opts.MeshNamespaces, t.gatewayConfig.ControllerName, stamp)
	for _, v := range verdicts {
		out.CRLDistributionPoints = addCRLWants(out.CRLDistributionPoints, v.FetchedCRLs.Wants)
	}
	out.CRLDistributionPoints = xbackendCRLWants(out.CRLDistributionPoints, xbackends.verdicts)
	if b.unserved != nil {
		backendtls.MarkUnserved(byPolicy, b.unserved, ix)
	}
	out.Statuses = make(map[types.NamespacedName]gwv1.PolicyStatus, len(verdicts))
	for i, v := range verdicts {
		prev, ok := previous[v.Name]
		if !ok {
			prev = v.Policy.Status
		}
		out.Statuses[v.Name] = t.policyStatus(v, byPolicy[i], prev, gateways.judged.Reach, ix, now, stamp)
	}
	if !t.forget {
		t.remember(in, ix, verdicts, byPolicy, winners, gateways, b, &out, now)
		t.whole.xbackends = xbackends
		t.mesh = meshOut
	}
	// After remember: the world's Output holds no mesh (Update adds it).
	meshOut.addMesh(&out, t.gatewayConfig.ControllerName)
	return out
}

// remember numbers a whole translation's Output and keeps its parts for
// Update.
func (t *Translator) remember(in Inputs, ix *input.Index, verdicts []*backendtls.Verdict, byPolicy [][]*backendtls.Attachment,
	winners map[backendtls.Target]*backendtls.Verdict, gateways gatewayOutput, b *outputBuilder, out *Output, now time.Time) {
	t.generation++
	out.Generation = t.generation
	t.world = nil
	t.whole = &wholeTranslation{in: in, ix: ix, verdicts: verdicts, byPolicy: byPolicy, winners: winners,
		gateways: gateways, unserved: b.unserved, out: *out, now: now}
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
	// produced are the port outputs with a cluster, in order: the fleets'
	// own clusters look a few up by name (producers), so the map is made
	// only when some Gateway presents a client certificate.
	produced []*portOutput
	// caNotAfter is each CA secret's earliest certificate expiry.
	caNotAfter map[string]time.Time
	warnings   []string
	// unserved lists, per Service, its governed ports without a cluster.
	unserved map[types.NamespacedName][]backendtls.UnservedPort
	// secretOrder is the sorted names of secrets, set by output.
	secretOrder []string
}

func newOutputBuilder(services int) *outputBuilder {
	return &outputBuilder{
		clusters:   make([]*clusterv3.Cluster, 0, services),
		endpoints:  make([]*endpointv3.ClusterLoadAssignment, 0, services),
		secrets:    make(map[string]*tlsv3.Secret, services),
		namespaces: make(map[string]string, services),
		produced:   make([]*portOutput, 0, services),
		origins:    make(map[string][]types.NamespacedName, 2*services),
		caNotAfter: map[string]time.Time{},
	}
}

// addService adds a Service's translated TCP ports to the output.
func (t *Translator) addService(b *outputBuilder, svc *corev1.Service, nn types.NamespacedName, governors []*backendtls.Verdict, ix *input.Index, emitted map[types.NamespacedName]*governor) {
	ports := t.servicePorts(svc, nn, governors, ix, emitted)
	for i := range ports {
		b.add(&ports[i], nn)
	}
}

// add puts one port's output into the result; a secret already there (same
// name, so same refs and content) is kept.
func (b *outputBuilder) add(p *portOutput, svc types.NamespacedName) {
	b.warnings = append(b.warnings, p.warnings...)
	if p.cluster == nil {
		if p.policy != nil {
			if b.unserved == nil {
				b.unserved = map[types.NamespacedName][]backendtls.UnservedPort{}
			}
			b.unserved[svc] = append(b.unserved[svc], p.unservedPort())
		}
		return
	}
	b.clusters = append(b.clusters, p.cluster)
	b.namespaces[p.cluster.Name] = p.namespace
	b.produced = append(b.produced, p)
	if p.endpoint != nil {
		b.endpoints = append(b.endpoints, p.endpoint)
	}
	for _, s := range p.secrets {
		if b.secrets[s.Name] == nil {
			b.secrets[s.Name] = s
			if notAfter := p.policy.notAfter(s.Name); !notAfter.IsZero() {
				b.caNotAfter[s.Name] = notAfter
			}
		}
	}
	if p.policy != nil {
		b.origin(p.cluster.Name, p.policy.verdict.Name)
		for _, s := range p.secrets {
			b.origin(s.Name, p.policy.verdict.Name)
		}
	}
}

func (b *outputBuilder) origin(resource string, policy types.NamespacedName) {
	if slices.Contains(b.origins[resource], policy) {
		return
	}
	b.origins[resource] = append(b.origins[resource], policy)
}

// addXBackends puts the XBackends' clusters and secrets into a whole
// translation's builder, after the Service ports' (a secret both name
// has one content: the first is kept).
func (b *outputBuilder) addXBackends(o *xbackendOutput) {
	for _, name := range input.SortedNames(o.clusters) {
		b.clusters = append(b.clusters, o.clusters[name])
		b.namespaces[name] = o.namespaces[name]
	}
	for name, s := range o.secrets {
		if b.secrets[name] == nil {
			b.secrets[name] = s
		}
		if notAfter, ok := o.caNotAfter[name]; ok {
			if _, set := b.caNotAfter[name]; !set {
				b.caNotAfter[name] = notAfter
			}
		}
	}
}

// output sorts everything by name; secretOrder, when it holds exactly the
// secrets' names, is their order.
func (b *outputBuilder) output(secretOrder []string) Output {
	b.secretOrder = input.SameNamesSorted(b.secrets, secretOrder)
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

// UniquePolicies sorts policies by namespace/name, keeping one per name, as
// Translate reads them.
func UniquePolicies(in []*gwv1.BackendTLSPolicy) []*gwv1.BackendTLSPolicy {
	byName := make(map[types.NamespacedName]*gwv1.BackendTLSPolicy, len(in))
	for _, p := range in {
		byName[input.NameOf(p.Namespace, p.Name)] = p
	}
	out := make([]*gwv1.BackendTLSPolicy, 0, len(byName))
	for _, nn := range input.SortedKeys(byName) {
		out = append(out, byName[nn])
	}
	return out
}

// everyFleet: a whole translation built every fleet anew.
func everyFleet(string) fleet.Change { return fleet.Change{Rebuilt: true, Reach: true} }
