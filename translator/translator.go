package translator

import (
	"slices"
	"sync"
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/capem"
	"github.com/tlsplane/tlsplane/translator/envoy"
	"github.com/tlsplane/tlsplane/translator/fleetclusters"
	"github.com/tlsplane/tlsplane/translator/gateway"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
	"github.com/tlsplane/tlsplane/translator/upstream"
)

// Translator is Translate with a memory: it reuses what it computed for
// objects that did not change since its last call (the same pointer, or
// the same UID at the same resourceVersion), so a translation after one
// edit costs little more than reading the inputs. Its results are exactly
// Translate's. Calls are serialised.
//
// What it keeps: parsed CA bundles (per object, checked against the bytes),
// each policy's verdict and emitted TLS (per policy and the CA objects it
// references), each Service's clusters and load assignments (per Service,
// its EndpointSlices and the verdicts governing its ports), and each
// policy's status (per verdict, targets and the previous status). Only
// what the last call used is kept, so memory follows the inputs.
type Translator struct {
	mu   sync.Mutex
	opts Options // of the last call; other options start afresh
	// What the judging packages read of opts.
	policyConfig  backendtls.Config
	gatewayConfig gateway.Config

	parts *envoy.Parts
	// caSecretRules are what a CA secret must pass to be served: Envoy's
	// (ValidateAll). No parsed CA breaks them today; a test sets others.
	caSecretRules func(*tlsv3.Secret) error
	// forget: nothing is kept between calls (Translate, the function).
	forget bool
	memos  memos

	// serviceOrder and policyOrder are the last call's sorted names.
	serviceOrder, policyOrder []types.NamespacedName
	secretOrder               []string

	// world is the last translation's, for Update; nil for a forgetful
	// Translator and after options changed. generation numbers Outputs.
	world      *world
	whole      *wholeTranslation // the last whole translation, until Update builds its world
	generation uint64

	verdicts generations[types.NamespacedName, *verdictEntry]
	services generations[types.NamespacedName, *serviceEntry]
	statuses generations[types.NamespacedName, *statusEntry]
}

// memos are what judging and emitting may reuse across calls.
type memos struct {
	judging     backendtls.Memos
	httpOptions *envoy.HTTPOptionsMemo
}

func newMemos() memos {
	return memos{
		judging:     backendtls.Memos{CAs: capem.NewCache(), Options: &tlsopts.Memo{}},
		httpOptions: &envoy.HTTPOptionsMemo{},
	}
}

// New returns a Translator with nothing remembered.
func New() *Translator {
	return &Translator{
		parts:         envoy.NewParts(),
		caSecretRules: (*tlsv3.Secret).ValidateAll,
		memos:         newMemos(),
	}
}

// fleetEmitter is what the Gateway fleets' own clusters are emitted with.
func (t *Translator) fleetEmitter() fleetclusters.Emitter {
	return fleetclusters.Emitter{Parts: t.parts, HTTPOptions: t.memos.httpOptions}
}

// newForgetful is a Translator for one call: it stores nothing it could
// only use in a later call.
func newForgetful() *Translator {
	t := New()
	t.forget = true
	return t
}

// Translate is Translate (the function) reusing earlier results.
func (t *Translator) Translate(in Inputs, previous PreviousStatus, now time.Time, opts Options) Output {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.translate(in, previous, now, opts)
}

// withDefaults fills in the options whose zero value means a default.
func withDefaults(opts Options) Options {
	if opts.ControllerName == "" {
		opts.ControllerName = DefaultControllerName
	}
	return opts
}

// begin starts a call; options other than last time's forget everything,
// since every verdict and status depends on them.
func (t *Translator) begin(opts Options) {
	if opts != t.opts {
		t.opts = opts
		t.policyConfig, t.gatewayConfig = configs(opts)
		t.memos = newMemos()
		t.verdicts = generations[types.NamespacedName, *verdictEntry]{}
		t.services = generations[types.NamespacedName, *serviceEntry]{}
		t.statuses = generations[types.NamespacedName, *statusEntry]{}
		t.world, t.whole = nil, nil
	}
}

// configs splits the options into what each judging package reads.
func configs(opts Options) (backendtls.Config, gateway.Config) {
	system := opts.SystemCABundlePath
	if system == "" {
		system = DefaultSystemCABundlePath
	}
	address := opts.ListenerAddress
	if address == "" {
		address = DefaultListenerAddress
	}
	return backendtls.Config{
			SystemCABundlePath:      system,
			AllowInsecureSkipVerify: opts.AllowInsecureSkipVerify,
			CAExpiryWarning:         opts.CAExpiryWarning,
			ControllerName:          opts.ControllerName,
		}, gateway.Config{
			ControllerName:  opts.ControllerName,
			ListenerAddress: address,
			Channel:         opts.GatewayAPIChannel,
			Provisioning:    opts.Provisioning,
		}
}

// done keeps what this call used, and only that, for the next.
func (t *Translator) done() {
	t.memos.judging.CAs.Done()
	t.memos.judging.Options.Done()
	t.verdicts.done()
	t.services.done()
	t.statuses.done()
}

// generations holds entries across calls, each stamped with the last call
// that used it; done drops those the current call did not use.
type generations[K comparable, V any] struct {
	call    uint64
	entries map[K]*stamped[V]
}

type stamped[V any] struct {
	call  uint64
	value V
}

// get returns k's entry, marked used by this call.
func (g *generations[K, V]) get(k K) (V, bool) {
	e, ok := g.entries[k]
	if !ok {
		var zero V
		return zero, false
	}
	e.call = g.call
	return e.value, true
}

// put stores v as k's entry, used by this call.
func (g *generations[K, V]) put(k K, v V) {
	if e, ok := g.entries[k]; ok {
		e.call, e.value = g.call, v
		return
	}
	if g.entries == nil {
		g.entries = map[K]*stamped[V]{}
	}
	g.entries[k] = &stamped[V]{call: g.call, value: v}
}

func (g *generations[K, V]) done() {
	for k, e := range g.entries {
		if e.call != g.call {
			delete(g.entries, k)
		}
	}
	g.call++
}

// verdictEntry is a policy's verdict, as emitted, and what decided it.
type verdictEntry struct {
	policy *gwv1.BackendTLSPolicy
	// refs are the objects the policy reads (backendtls.AppendRefs, a
	// function of the policy alone), objects each one as judged (nil when
	// missing).
	refs    []backendtls.Ref
	objects []metav1.Object
	gov     *governor
}

// judge is backendtls.Judge then emitPolicy, reused while the policy and
// the objects it reads stay.
func (t *Translator) judge(p *gwv1.BackendTLSPolicy, ix *input.Index) *governor {
	nn := input.NameOf(p.Namespace, p.Name)
	if e, ok := t.verdicts.get(nn); ok && input.SameObject(e.policy, p) {
		// The same policy names the same objects: only theirs can differ.
		same := true
		for i, ref := range e.refs {
			if !input.SameObject(e.objects[i], ref.Object(ix)) {
				same = false
				break
			}
		}
		if same {
			return e.gov
		}
	}
	g := t.emitPolicy(backendtls.Judge(p, ix, t.policyConfig, t.memos.judging))
	if t.forget {
		return g
	}
	refs := backendtls.AppendRefs(nil, p)
	e := &verdictEntry{policy: p, refs: refs, objects: make([]metav1.Object, len(refs)), gov: g}
	for i, ref := range refs {
		e.objects[i] = ref.Object(ix)
	}
	t.verdicts.put(nn, e)
	return e.gov
}

// serviceEntry is a Service's translated ports and what decided them.
type serviceEntry struct {
	svc       *corev1.Service
	slices    []*discoveryv1.EndpointSlice
	governors []*backendtls.Verdict // per port, in spec order
	variants  []int32               // its ports GRPCRoutes (then stream routes) name
	ports     []portOutput
}

// addService adds a Service's translated TCP ports to the output.
func (t *Translator) addService(b *outputBuilder, svc *corev1.Service, nn types.NamespacedName, governors []*backendtls.Verdict, ix *input.Index, emitted map[types.NamespacedName]*governor) {
	ports := t.servicePorts(svc, nn, governors, ix, emitted)
	for i := range ports {
		b.add(&ports[i], nn)
	}
}

// servicePorts translates a Service's TCP ports, or reuses their last
// translation when the Service, its EndpointSlices and the verdicts
// governing its ports are the same. The result is read-only. emitted holds
// the governor of every current verdict, by policy; nil: the verdict memo
// holds them (a remembering Translator's whole translation).
// the governor of every current verdict, by policy.
func (t *Translator) servicePorts(svc *corev1.Service, nn types.NamespacedName, governors []*backendtls.Verdict, ix *input.Index, emitted map[types.NamespacedName]*governor) []portOutput {
	slices := ix.SlicesByService[nn]
	variants := variantPorts(svc, nn, ix)
	if e, ok := t.services.get(nn); ok && input.SameObject(e.svc, svc) && sameSlices(e.slices, slices) && samePointers(e.governors, governors) && equalPorts(e.variants, variants) {
		return e.ports
	}
	var ports []portOutput
	for _, cp := range upstream.Ports(svc, nn, governors, ix.GRPCBackends, ix.StreamBackends, ix.DatagramBackends) {
		var g *governor
		if cp.Governor != nil {
			g = t.governorOf(cp.Governor, emitted)
		}
		ports = append(ports, t.translatePort(svc, nn, cp, g, slices))
	}
	if !t.forget {
		t.services.put(nn, &serviceEntry{svc: svc, slices: slices, governors: append([]*backendtls.Verdict(nil), governors...), variants: variants, ports: ports})
	}
	return ports
}

// governorOf is v's governor, from emitted or else the verdict memo
// (which this call filled for every policy it judged).
func (t *Translator) governorOf(v *backendtls.Verdict, emitted map[types.NamespacedName]*governor) *governor {
	if emitted != nil {
		return emitted[v.Name]
	}
	return t.verdicts.entries[v.Name].value.gov
}

func sameSlices(a, b []*discoveryv1.EndpointSlice) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !input.SameObject(a[i], b[i]) {
			return false
		}
	}
	return true
}

func samePointers[T any](a, b []*T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// statusEntry is a policy's computed status and what decided it.
type statusEntry struct {
	verdict *backendtls.Verdict
	// per attachment: what was missing and which policy won
	outcomes []string
	winners  []*backendtls.Verdict
	status   gwv1.PolicyStatus
}

// status is MergeStatus of the policy's ancestor statuses. It is reused
// when the verdict and its attachments are the same and previous is the
// status computed last time: merging again would give it back unchanged.
func (t *Translator) status(v *backendtls.Verdict, as []*backendtls.Attachment, previous gwv1.PolicyStatus, controller gwv1.GatewayController, now metav1.Time) gwv1.PolicyStatus {
	if e, ok := t.statuses.get(v.Name); ok && e.verdict == v && sameAncestors(e.status.Ancestors, previous.Ancestors) && sameAttachments(e, as) {
		return e.status
	}
	if t.forget {
		return backendtls.MergeStatus(previous, backendtls.AncestorStatuses(v, as, controller), controller, v.Policy.Generation, now)
	}
	e := &statusEntry{
		verdict:  v,
		outcomes: make([]string, len(as)),
		winners:  make([]*backendtls.Verdict, len(as)),
		status:   backendtls.MergeStatus(previous, backendtls.AncestorStatuses(v, as, controller), controller, v.Policy.Generation, now),
	}
	for i, a := range as {
		e.outcomes[i], e.winners[i] = a.Outcome(), a.Winner
	}
	t.statuses.put(v.Name, e)
	return e.status
}

// sameAncestors: the same slice, not merely equal content.
func sameAncestors(a, b []gwv1.PolicyAncestorStatus) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func sameAttachments(e *statusEntry, as []*backendtls.Attachment) bool {
	if len(e.outcomes) != len(as) {
		return false
	}
	for i, a := range as {
		if e.outcomes[i] != a.Outcome() || e.winners[i] != a.Winner {
			return false
		}
	}
	return true
}

// Forget drops what Update starts from, so the next call must be a whole
// Translate: for a caller that cannot vouch for the last call.
func (t *Translator) Forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.world, t.whole = nil, nil
}

// Prepare builds now what the first Update after a whole translation
// would build (70-120 ms at 10,000 Services), so that Update is not the
// one an edit waits for. It does nothing when there is nothing to build.
func (t *Translator) Prepare() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.world == nil && t.whole != nil && !t.forget {
		t.world, t.whole = t.buildWorld(t.whole), nil
	}
}

// variantPorts are the ports of svc that GRPCRoutes name, then -1, then
// those TLSRoutes or TCPRoutes name, then -1, then those UDPRoutes name, in
// spec order: what decides its clusters beside the ports' own. nil for
// none (the common case costs no allocation).
func variantPorts(svc *corev1.Service, nn types.NamespacedName, ix *input.Index) []int32 {
	if len(ix.GRPCBackends) == 0 && len(ix.StreamBackends) == 0 && len(ix.DatagramBackends) == 0 {
		return nil
	}
	var out []int32
	for i, routes := range []input.RouteBackends{ix.GRPCBackends, ix.StreamBackends, ix.DatagramBackends} {
		if i > 0 {
			out = append(out, -1)
		}
		for _, p := range svc.Spec.Ports {
			if routes[input.ServicePort{Service: nn, Port: p.Port}] > 0 {
				out = append(out, p.Port)
			}
		}
	}
	return out
}

func equalPorts(a, b []int32) bool { return slices.Equal(a, b) }
