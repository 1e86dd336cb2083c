package translator

import (
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/fleet"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/smallset"
)

// world is what Update needs of the last translation to re-translate only
// what changes reach: the objects, what refers to what, each policy's
// attachments, and the output with the counts behind its shared parts.
// Translate builds it whole; Update patches it.
type world struct {
	// The objects, by key (input.NameOf for namespaced kinds).
	policies map[types.NamespacedName]*gwv1.BackendTLSPolicy
	slices   map[types.NamespacedName]*discoveryv1.EndpointSlice
	ix       *input.Index
	gateway  gatewayObjects
	traffic  trafficObjects
	xmeshes  map[types.NamespacedName]*gwxv1a1.XMesh

	// What refers to what: the Services each policy's targetRefs name
	// (found or not), the policies naming each Service, and those
	// reading each ConfigMap or Secret (CA bundles, client certificates).
	targets   map[types.NamespacedName][]types.NamespacedName
	byService map[types.NamespacedName]smallset.Set[types.NamespacedName]
	byRef     map[backendtls.Ref]smallset.Set[types.NamespacedName]
	refs      []backendtls.Ref // index's buffer
	// byCRL: the policies whose verdict wants each distribution point.
	byCRL map[string]smallset.Set[types.NamespacedName]
	// slicesOf lists the EndpointSlice keys of each Service.
	slicesOf map[types.NamespacedName]smallset.Set[types.NamespacedName]

	// verdicts are each policy's, as emitted.
	verdicts    map[types.NamespacedName]*governor
	attachments map[types.NamespacedName][]*backendtls.Attachment
	winners     map[backendtls.Target]*backendtls.Verdict

	// ports is each Service's translation; unserved its governed ports
	// without a cluster.
	ports    map[types.NamespacedName][]portOutput
	unserved map[types.NamespacedName][]backendtls.UnservedPort
	// producers is the port output of each cluster.
	producers map[string]*portOutput

	// secrets counts the ports serving each CA secret, and by policy.
	secrets  map[string]*secretUse
	warnings map[string]int
	gateways gatewayOutput
	// xbackends are the XBackends as last judged and emitted.
	xbackends *xbackendOutput

	// noteDue is when each policy's CA expiry warning next changes;
	// firstDue the earliest of them (zero: none).
	noteDue  map[types.NamespacedName]time.Time
	firstDue time.Time

	out Output
}

// secretUse is one served secret (a CA bundle or a client certificate):
// the object served (the first port's; every port naming it has the same
// content) and who uses it.
type secretUse struct {
	secret   *tlsv3.Secret
	notAfter time.Time
	ports    int
	policies map[types.NamespacedName]int
}

// wholeTranslation is what a whole translation leaves for Update: its
// parts, from which the first Update builds the world. Building it at
// once would add a third to every whole translation's cost, most of
// them never followed by an Update (Translate on a fresh Translator, the
// pipeline without a ChangeSource).
type wholeTranslation struct {
	in       Inputs
	ix       *input.Index
	verdicts []*backendtls.Verdict // as byPolicy lists them; their governors are in the verdict memo
	byPolicy [][]*backendtls.Attachment
	winners  map[backendtls.Target]*backendtls.Verdict
	gateways gatewayOutput
	unserved map[types.NamespacedName][]backendtls.UnservedPort
	out      Output
	now      time.Time
	// xbackends are the XBackends as judged and emitted.
	xbackends *xbackendOutput
}

// buildWorld makes the world of a whole translation, from its parts and
// the verdicts and Service translations the memos hold since; nil when
// the memo lacks a verdict (then Update translates whole).
func (m *memory) buildWorld(wt *wholeTranslation) *world {
	in, ix, verdicts, byPolicy, winners, gateways, now := wt.in, wt.ix, wt.verdicts, wt.byPolicy, wt.winners, wt.gateways, wt.now
	w := &world{
		policies:    make(map[types.NamespacedName]*gwv1.BackendTLSPolicy, len(verdicts)),
		slices:      make(map[types.NamespacedName]*discoveryv1.EndpointSlice, len(in.EndpointSlices)),
		ix:          ix,
		gateway:     newGatewayObjects(in),
		traffic:     newTrafficObjects(in),
		xmeshes:     xmeshObjects(in),
		targets:     make(map[types.NamespacedName][]types.NamespacedName, len(verdicts)),
		byService:   make(map[types.NamespacedName]smallset.Set[types.NamespacedName], len(verdicts)),
		byRef:       map[backendtls.Ref]smallset.Set[types.NamespacedName]{},
		byCRL:       map[string]smallset.Set[types.NamespacedName]{},
		slicesOf:    make(map[types.NamespacedName]smallset.Set[types.NamespacedName], len(in.EndpointSlices)),
		verdicts:    make(map[types.NamespacedName]*governor, len(verdicts)),
		attachments: make(map[types.NamespacedName][]*backendtls.Attachment, len(verdicts)),
		winners:     winners,
		ports:       make(map[types.NamespacedName][]portOutput, len(ix.Services)),
		unserved:    map[types.NamespacedName][]backendtls.UnservedPort{},
		producers:   make(map[string]*portOutput, len(ix.Services)),
		secrets:     make(map[string]*secretUse, len(wt.out.Secrets)),
		warnings:    map[string]int{},
		gateways:    gateways,
		noteDue:     map[types.NamespacedName]time.Time{},
		out:         wt.out,
		xbackends:   wt.xbackends,
	}
	for i, v := range verdicts {
		e, ok := m.verdicts.Peek(v.Name)
		if !ok || e.gov.verdict != v {
			return nil
		}
		w.verdicts[v.Name] = e.gov
		w.policies[v.Name] = v.Policy
		w.attachments[v.Name] = byPolicy[i]
		w.index(v.Name, v.Policy)
		w.indexCRLWants(v.Name, v, true)
		w.scheduleNote(v, now, m.policyConfig)
	}
	// The last EndpointSlice of a key wins, as the index's Services do.
	for _, es := range in.EndpointSlices {
		key := input.NameOf(es.Namespace, es.Name)
		if old := w.slices[key]; old != nil {
			smallset.Remove(w.slicesOf, serviceOfSlice(old), key)
		}
		w.slices[key] = es
		w.addSliceKey(es, key)
	}
	for nn := range ix.Services {
		if e, ok := m.services.Peek(nn); ok {
			w.ports[nn] = e.ports
			w.count(nn, e.ports, 1)
			w.produce(e.ports, true)
		}
	}
	for svc, ports := range wt.unserved {
		w.unserved[svc] = ports
	}
	w.countWarnings(gateways.warnings, 1)
	w.countWarnings(fleet.Warnings(gateways.ownClusters), 1)
	return w
}

// index records what policy p refers to.
func (w *world) index(nn types.NamespacedName, p *gwv1.BackendTLSPolicy) {
	targets := make([]types.NamespacedName, 0, len(p.Spec.TargetRefs))
	for _, ref := range p.Spec.TargetRefs {
		svc := input.NameOf(nn.Namespace, string(ref.Name))
		targets = append(targets, svc)
		smallset.Add(w.byService, svc, nn)
	}
	w.targets[nn] = targets
	w.refs = backendtls.AppendRefs(w.refs[:0], p)
	for _, ref := range w.refs {
		smallset.Add(w.byRef, ref, nn)
	}
}

// unindex undoes index.
func (w *world) unindex(nn types.NamespacedName, p *gwv1.BackendTLSPolicy) {
	for _, svc := range w.targets[nn] {
		smallset.Remove(w.byService, svc, nn)
	}
	delete(w.targets, nn)
	w.refs = backendtls.AppendRefs(w.refs[:0], p)
	for _, ref := range w.refs {
		smallset.Remove(w.byRef, ref, nn)
	}
}

// serviceOfSlice is the Service an EndpointSlice's label names, or the
// zero key.
func serviceOfSlice(es *discoveryv1.EndpointSlice) types.NamespacedName {
	svc, ok := es.Labels[discoveryv1.LabelServiceName]
	if !ok {
		return types.NamespacedName{}
	}
	return input.NameOf(es.Namespace, svc)
}

func (w *world) addSliceKey(es *discoveryv1.EndpointSlice, key types.NamespacedName) {
	if svc := serviceOfSlice(es); svc != (types.NamespacedName{}) {
		smallset.Add(w.slicesOf, svc, key)
	}
}

// count adds (sign 1) or removes (-1) what a Service's ports contribute to
// the shared parts of the output: CA secrets and warnings.
func (w *world) count(svc types.NamespacedName, ports []portOutput, sign int) {
	for i := range ports {
		p := &ports[i]
		for _, warning := range p.warnings {
			if w.warnings[warning] += sign; w.warnings[warning] == 0 {
				delete(w.warnings, warning)
			}
		}
		if p.cluster == nil {
			continue
		}
		for _, secret := range p.secrets {
			w.countSecret(secret, p.policy, sign)
		}
	}
}

// countSecret adds (sign 1) or removes (-1) one port's use of a secret.
func (w *world) countSecret(secret *tlsv3.Secret, g *governor, sign int) {
	use := w.secrets[secret.Name]
	if use == nil {
		use = &secretUse{secret: secret, notAfter: g.notAfter(secret.Name), policies: map[types.NamespacedName]int{}}
		w.secrets[secret.Name] = use
	}
	use.ports += sign
	name := g.verdict.Name
	if use.policies[name] += sign; use.policies[name] == 0 {
		delete(use.policies, name)
	}
	if use.ports == 0 {
		delete(w.secrets, secret.Name)
	}
}

// countWarnings adds (sign 1) or removes (-1) warnings.
func (w *world) countWarnings(warnings []string, sign int) {
	for _, warning := range warnings {
		if w.warnings[warning] += sign; w.warnings[warning] == 0 {
			delete(w.warnings, warning)
		}
	}
}

// produce adds (true) or removes the clusters of ports from producers.
func (w *world) produce(ports []portOutput, add bool) {
	for i := range ports {
		if c := ports[i].cluster; c != nil {
			if add {
				w.producers[c.Name] = &ports[i]
			} else if w.producers[c.Name] == &ports[i] {
				delete(w.producers, c.Name)
			}
		}
	}
}

// scheduleNote records when v's CA expiry warning next changes.
func (w *world) scheduleNote(v *backendtls.Verdict, now time.Time, cfg backendtls.Config) {
	delete(w.noteDue, v.Name)
	due := backendtls.NoteChanges(v, now, cfg)
	if due.IsZero() {
		return
	}
	w.noteDue[v.Name] = due
	if w.firstDue.IsZero() || due.Before(w.firstDue) {
		w.firstDue = due
	}
}

// xmeshObjects are the XMeshes by name (Namespace ""), the last of a name
// winning.
func xmeshObjects(in Inputs) map[types.NamespacedName]*gwxv1a1.XMesh {
	return input.ByKey(in.XMeshes, func(o *gwxv1a1.XMesh) types.NamespacedName { return types.NamespacedName{Name: o.Name} })
}
