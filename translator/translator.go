package translator

import (
	"sync"
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Translator is Translate with a memory: it reuses what it computed for
// objects that did not change since its last call (the same pointer, or
// the same UID at the same resourceVersion), so a translation after one
// edit costs little more than reading the inputs. Its results are exactly
// Translate's. Calls are serialised.
//
// What it keeps: parsed CA bundles (per object, checked against the bytes),
// each policy's verdict (per policy and the CA objects it references), each
// Service's clusters and load assignments (per Service, its EndpointSlices
// and the verdicts governing its ports), and each policy's status (per
// verdict, targets and the previous status). Only what the last call used
// is kept, so memory follows the inputs.
type Translator struct {
	mu   sync.Mutex
	opts Options // of the last call; other options start afresh

	shared *sharedParts
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

// New returns a Translator with nothing remembered.
func New() *Translator {
	failClosed, _, err := packedTLS(failClosedTLSContext(), nil)
	if err != nil {
		panic("translator: the fail-closed TLS context is invalid: " + err.Error())
	}
	return &Translator{
		shared:        &sharedParts{failClosed: newClusterTLS(failClosed, nil), h2c: h2cClusterTLS(), eds: newEDSParts()},
		caSecretRules: (*tlsv3.Secret).ValidateAll,
		memos:         memos{cas: newCACache(), httpOptions: &httpOptionsMemo{}, options: &optionsMemo{}},
	}
}

// newForgetful is a Translator for one call: it stores nothing it could
// only use in a later call.
func newForgetful() *Translator {
	t := New()
	t.forget = true
	return t
}

// sharedParts are the cluster pieces that do not depend on any input.
type sharedParts struct {
	// failClosed is the TLS of ports whose policy is not accepted.
	failClosed clusterTLS
	// h2c is a plaintext port whose appProtocol is kubernetes.io/h2c.
	h2c clusterTLS
	eds *edsParts
}

// Translate is Translate (the function) reusing earlier results.
func (t *Translator) Translate(in Inputs, previous PreviousStatus, now time.Time, opts Options) Output {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.translate(in, previous, now, opts)
}

// begin starts a call; options other than last time's forget everything,
// since every verdict and status depends on them.
func (t *Translator) begin(opts Options) {
	if opts != t.opts {
		t.opts = opts
		t.memos = memos{cas: newCACache(), httpOptions: &httpOptionsMemo{}, options: &optionsMemo{}}
		t.verdicts = generations[types.NamespacedName, *verdictEntry]{}
		t.services = generations[types.NamespacedName, *serviceEntry]{}
		t.statuses = generations[types.NamespacedName, *statusEntry]{}
		t.world, t.whole = nil, nil
	}
}

// done keeps what this call used, and only that, for the next.
func (t *Translator) done() {
	t.memos.cas.done()
	t.memos.options.done()
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

// verdictEntry is a policy's verdict and what decided it.
type verdictEntry struct {
	policy  *gwv1.BackendTLSPolicy
	cas     []metav1.Object // each caCertificateRef's object, nil when missing
	verdict *policyVerdict
}

// judge is judgePolicy, reused while the policy and its CA objects stay.
func (t *Translator) judge(p *gwv1.BackendTLSPolicy, ix *objectIndex, opts Options) *policyVerdict {
	nn := nameOf(p.Namespace, p.Name)
	refs := p.Spec.Validation.CACertificateRefs
	if e, ok := t.verdicts.get(nn); ok && sameObject(e.policy, p) && len(e.cas) == len(refs) {
		same := true
		for i, ref := range refs {
			if !sameObject(e.cas[i], caObject(nn.Namespace, ref, ix)) {
				same = false
				break
			}
		}
		if same {
			return e.verdict
		}
	}
	v := judgePolicy(p, ix, opts, t.memos, t.caSecretRules)
	if t.forget {
		return v
	}
	e := &verdictEntry{policy: p, cas: make([]metav1.Object, len(refs)), verdict: v}
	for i, ref := range refs {
		e.cas[i] = caObject(nn.Namespace, ref, ix)
	}
	t.verdicts.put(nn, e)
	return e.verdict
}

// caObject is the object a caCertificateRef names, or nil.
func caObject(namespace string, ref gwv1.LocalObjectReference, ix *objectIndex) metav1.Object {
	key, ok := caRefOf(namespace, ref)
	if !ok {
		return nil
	}
	if key.kind == KindConfigMap {
		if cm, ok := ix.configMaps[key.nn]; ok {
			return cm
		}
	} else if s, ok := ix.secrets[key.nn]; ok {
		return s
	}
	return nil
}

// serviceEntry is a Service's translated ports and what decided them.
type serviceEntry struct {
	svc       *corev1.Service
	slices    []*discoveryv1.EndpointSlice
	governors []*policyVerdict // per port, in spec order
	ports     []portOutput
}

// addService adds a Service's translated TCP ports to the output.
func (t *Translator) addService(b *outputBuilder, svc *corev1.Service, nn types.NamespacedName, governors []*policyVerdict, ix *objectIndex) {
	ports := t.servicePorts(svc, nn, governors, ix)
	for i := range ports {
		b.add(&ports[i], nn)
	}
}

// servicePorts translates a Service's TCP ports, or reuses their last
// translation when the Service, its EndpointSlices and the verdicts
// governing its ports are the same. The result is read-only.
func (t *Translator) servicePorts(svc *corev1.Service, nn types.NamespacedName, governors []*policyVerdict, ix *objectIndex) []portOutput {
	slices := ix.slicesByService[nn]
	if e, ok := t.services.get(nn); ok && sameObject(e.svc, svc) && sameSlices(e.slices, slices) && samePointers(e.governors, governors) {
		return e.ports
	}
	var ports []portOutput
	for _, cp := range clusterPorts(svc, nn, governors) {
		ports = append(ports, translatePort(svc, nn, cp, t.shared, ix))
	}
	if !t.forget {
		t.services.put(nn, &serviceEntry{svc: svc, slices: slices, governors: append([]*policyVerdict(nil), governors...), ports: ports})
	}
	return ports
}

func sameSlices(a, b []*discoveryv1.EndpointSlice) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameObject(a[i], b[i]) {
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
	verdict *policyVerdict
	// per attachment: what was missing and which policy won
	notFound []string
	winners  []*policyVerdict
	status   gwv1.PolicyStatus
}

// status is mergeStatus of the policy's ancestor statuses. It is reused
// when the verdict and its attachments are the same and previous is the
// status computed last time: merging again would give it back unchanged.
func (t *Translator) status(v *policyVerdict, as []*attachment, previous gwv1.PolicyStatus, controller gwv1.GatewayController, now metav1.Time) gwv1.PolicyStatus {
	if e, ok := t.statuses.get(v.name); ok && e.verdict == v && sameAncestors(e.status.Ancestors, previous.Ancestors) && sameAttachments(e, as) {
		return e.status
	}
	if t.forget {
		return mergeStatus(previous, ancestorStatuses(v, as, controller), controller, v.policy.Generation, now)
	}
	e := &statusEntry{
		verdict:  v,
		notFound: make([]string, len(as)),
		winners:  make([]*policyVerdict, len(as)),
		status:   mergeStatus(previous, ancestorStatuses(v, as, controller), controller, v.policy.Generation, now),
	}
	for i, a := range as {
		e.notFound[i], e.winners[i] = a.outcome(), a.winner
	}
	t.statuses.put(v.name, e)
	return e.status
}

// sameAncestors: the same slice, not merely equal content.
func sameAncestors(a, b []gwv1.PolicyAncestorStatus) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func sameAttachments(e *statusEntry, as []*attachment) bool {
	if len(e.notFound) != len(as) {
		return false
	}
	for i, a := range as {
		if e.notFound[i] != a.outcome() || e.winners[i] != a.winner {
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
