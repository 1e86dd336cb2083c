package translator

import (
	"slices"

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
	"github.com/tlsplane/tlsplane/translator/gateway"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/memo"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
	"github.com/tlsplane/tlsplane/translator/trafficpolicy"
	"github.com/tlsplane/tlsplane/translator/upstream"
)

// memory is what a Translator reuses across calls (see Translator), and
// the options it was made for: other options start it afresh.
type memory struct {
	emitter
	opts Options // of the last call
	// What the judging packages read of opts.
	policyConfig  backendtls.Config
	gatewayConfig gateway.Config

	// forget: nothing is kept between calls (Translate, the function).
	forget bool
	memos  memos

	// serviceOrder and policyOrder are the last call's sorted names.
	serviceOrder, policyOrder []types.NamespacedName
	secretOrder               []string

	verdicts memo.Generations[types.NamespacedName, *verdictEntry]
	services memo.Generations[types.NamespacedName, *serviceEntry]
	statuses memo.Generations[types.NamespacedName, *statusEntry]
}

// memos are what judging may reuse across calls.
type memos struct {
	judging backendtls.Memos
}

func newMemory() memory {
	return memory{
		emitter: emitter{parts: envoy.NewParts(), caSecretRules: (*tlsv3.Secret).ValidateAll, httpOptions: &envoy.HTTPOptionsMemo{},
			clientCertificateRules: presentable},
		memos: newMemos(),
	}
}

func newMemos() memos {
	return memos{judging: backendtls.Memos{CAs: capem.NewCache(), Options: &tlsopts.Memo{}}}
}

// reset forgets everything when opts are not last time's, since every
// verdict and status depends on them; true when it did.
func (m *memory) reset(opts Options) bool {
	if opts == m.opts {
		return false
	}
	m.opts = opts
	m.policyConfig, m.gatewayConfig = configs(opts)
	m.certificateLog = opts.BackendCertificates.certificateLog()
	m.memos, m.httpOptions = newMemos(), &envoy.HTTPOptionsMemo{}
	m.verdicts = memo.Generations[types.NamespacedName, *verdictEntry]{}
	m.services = memo.Generations[types.NamespacedName, *serviceEntry]{}
	m.statuses = memo.Generations[types.NamespacedName, *statusEntry]{}
	return true
}

// done keeps what this call used, and only that, for the next.
func (m *memory) done() {
	m.memos.judging.CAs.Done()
	m.memos.judging.Options.Done()
	m.verdicts.Done()
	m.services.Done()
	m.statuses.Done()
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
			CRLFetch:                opts.CRLFetch,
			CAExpiryWarning:         opts.CAExpiryWarning,
			ControllerName:          opts.ControllerName,
		}, gateway.Config{
			ControllerName:  opts.ControllerName,
			ListenerAddress: address,
			Channel:         opts.GatewayAPIChannel,
			Provisioning:    opts.Provisioning,
		}
}

// uniquePolicies is uniquePolicies remembering the last order.
func (m *memory) uniquePolicies(in []*gwv1.BackendTLSPolicy) []*gwv1.BackendTLSPolicy {
	byName := make(map[types.NamespacedName]*gwv1.BackendTLSPolicy, len(in))
	for _, p := range in {
		byName[input.NameOf(p.Namespace, p.Name)] = p
	}
	m.policyOrder = input.SameKeysSorted(byName, m.policyOrder)
	out := make([]*gwv1.BackendTLSPolicy, 0, len(byName))
	for _, nn := range m.policyOrder {
		out = append(out, byName[nn])
	}
	return out
}

// verdictEntry is a policy's verdict, as emitted, and what decided it.
type verdictEntry struct {
	policy *gwv1.BackendTLSPolicy
	// refs are the objects the policy reads (backendtls.AppendRefs, a
	// function of the policy alone), objects each one as judged (nil when
	// missing).
	refs    []backendtls.Ref
	objects []metav1.Object
	// fetched are the fetched lists of the verdict's distribution points,
	// as judged (nil when missing).
	fetched []*input.FetchedCRL
	gov     *governor
}

// judge is backendtls.Judge then emitPolicy, reused while the policy and
// the objects it reads stay.
func (m *memory) judge(p *gwv1.BackendTLSPolicy, ix *input.Index) *governor {
	nn := input.NameOf(p.Namespace, p.Name)
	if e, ok := m.verdicts.Get(nn); ok && input.SameObject(e.policy, p) {
		// The same policy names the same objects: only theirs can differ.
		same := true
		for i, ref := range e.refs {
			if !input.SameObject(e.objects[i], ref.Object(ix)) {
				same = false
				break
			}
		}
		for i, want := range e.gov.verdict.FetchedCRLs.Wants {
			same = same && e.fetched[i] == ix.FetchedCRLs[want.URL]
		}
		if same {
			return e.gov
		}
	}
	g := m.emitPolicy(backendtls.Judge(p, ix, m.policyConfig, m.memos.judging))
	if m.forget {
		return g
	}
	refs := backendtls.AppendRefs(nil, p)
	e := &verdictEntry{policy: p, refs: refs, objects: make([]metav1.Object, len(refs)), gov: g}
	for i, ref := range refs {
		e.objects[i] = ref.Object(ix)
	}
	if wants := g.verdict.FetchedCRLs.Wants; len(wants) > 0 {
		e.fetched = make([]*input.FetchedCRL, len(wants))
		for i, want := range wants {
			e.fetched[i] = ix.FetchedCRLs[want.URL]
		}
	}
	m.verdicts.Put(nn, e)
	return e.gov
}

// serviceEntry is a Service's translated ports and what decided them.
type serviceEntry struct {
	svc       *corev1.Service
	slices    []*discoveryv1.EndpointSlice
	governors []*backendtls.Verdict // per port, in spec order
	variants  []int32               // its ports GRPCRoutes (then stream routes) name
	budget    *plan.RetryBudget     // its XBackendTrafficPolicy's
	ports     []portOutput
}

// servicePorts translates a Service's TCP ports, or reuses their last
// translation when the Service, its EndpointSlices and the verdicts
// governing its ports are the same. The result is read-only. emitted holds
// the governor of every current verdict, by policy; nil: the verdict memo
// holds them (a remembering Translator's whole translation).
// the governor of every current verdict, by policy.
func (m *memory) servicePorts(svc *corev1.Service, nn types.NamespacedName, governors []*backendtls.Verdict, ix *input.Index, emitted map[types.NamespacedName]*governor) []portOutput {
	slices := ix.SlicesByService[nn]
	variants := ix.VariantPorts(svc, nn)
	budget := m.traffic.retryBudgetOf(trafficpolicy.ServiceTarget(nn))
	if e, ok := m.services.Get(nn); ok && input.SameObject(e.svc, svc) && sameSlices(e.slices, slices) && samePointers(e.governors, governors) && equalPorts(e.variants, variants) &&
		sameBudget(e.budget, budget) {
		return e.ports
	}
	var ports []portOutput
	for _, cp := range upstream.Ports(svc, nn, governors, ix.GRPCBackends, ix.StreamBackends, ix.DatagramBackends) {
		var g *governor
		if cp.Governor != nil {
			g = m.governorOf(cp.Governor, emitted)
		}
		ports = append(ports, m.translatePort(svc, nn, cp, g, slices, budget))
	}
	if !m.forget {
		m.services.Put(nn, &serviceEntry{svc: svc, slices: slices, governors: append([]*backendtls.Verdict(nil), governors...), variants: variants, budget: budget, ports: ports})
	}
	return ports
}

// governorOf is v's governor, from emitted or else the verdict memo
// (which this call filled for every policy it judged).
func (m *memory) governorOf(v *backendtls.Verdict, emitted map[types.NamespacedName]*governor) *governor {
	if emitted != nil {
		return emitted[v.Name]
	}
	e, _ := m.verdicts.Peek(v.Name)
	return e.gov
}

// statusEntry is a policy's computed status and what decided it.
type statusEntry struct {
	verdict *backendtls.Verdict
	// per attachment: what was missing and which policy won
	outcomes []string
	winners  []*backendtls.Verdict
	status   gwv1.PolicyStatus
}

// policyStatus is one policy's complete status, from its attachments.
func (m *memory) policyStatus(v *backendtls.Verdict, as []*backendtls.Attachment, prev gwv1.PolicyStatus, reach map[input.ServicePort][]types.NamespacedName,
	ix *input.Index, now time.Time, stamp metav1.Time) gwv1.PolicyStatus {
	if note := backendtls.CAExpiryNote(v, now, m.policyConfig); note != "" {
		for _, a := range as {
			a.CANote = note
		}
	}
	controller := m.policyConfig.ControllerName
	if reached := backendtls.ReachingGateways(as, reach, ix); reached != nil {
		// Gateway ancestors depend on routes, which the memo does not
		// track: computed afresh.
		return backendtls.MergeStatus(prev, backendtls.GatewayAncestorStatuses(v, as, reached, controller), controller, v.Policy.Generation, stamp)
	}
	return m.status(v, as, prev, controller, stamp)
}

// status is MergeStatus of the policy's ancestor statuses. It is reused
// when the verdict and its attachments are the same and previous is the
// status computed last time: merging again would give it back unchanged.
func (m *memory) status(v *backendtls.Verdict, as []*backendtls.Attachment, previous gwv1.PolicyStatus, controller gwv1.GatewayController, now metav1.Time) gwv1.PolicyStatus {
	if e, ok := m.statuses.Get(v.Name); ok && e.verdict == v && sameAncestors(e.status.Ancestors, previous.Ancestors) && sameAttachments(e, as) {
		return e.status
	}
	if m.forget {
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
	m.statuses.Put(v.Name, e)
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

func equalPorts(a, b []int32) bool { return slices.Equal(a, b) }

// presentable: Envoy would accept presenting the certificate.
func presentable(c *plan.ClientCertificate) error {
	_, err := envoy.ClientCertificateSecret(c)
	return err
}
