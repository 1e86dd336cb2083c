package backendtls

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/input"
)

// target is what a policy attaches to: a Service, or one of its ports by
// name (section "" is the whole Service).
type Target struct {
	Service types.NamespacedName
	Section string
}

// attachment is one targetRef of one policy, and how it fared.
type Attachment struct {
	verdict *Verdict
	ref     gwv1.LocalPolicyTargetReferenceWithSectionName
	Target  Target
	// notFound says what is missing when the target does not resolve.
	notFound string
	// invalid says why a resolved target cannot take the policy: a UDP
	// port (GEP-1897: Accepted False, reason Invalid).
	invalid string
	// note is a warning for an accepted attachment: the Service's UDP
	// ports, which the policy does not apply to.
	note string
	// unserved says why ports this attachment's policy governs get no
	// cluster (set after the ports are translated; see MarkUnserved).
	unserved string
	// CANote warns that a CA the accepted policy trusts expires soon or
	// expired; it depends on now, so the status cache keys on it.
	CANote string
	// Winner is the policy that takes precedence on this target; nil when
	// this attachment's own policy does.
	Winner *Verdict
}

// outcome is what the attachment's status says besides its winner, for
// the status cache: a Service can turn a port UDP, or lose the field its
// cluster needs, under an unchanged policy.
func (a *Attachment) Outcome() string {
	if a.invalid == "" && a.note == "" && a.unserved == "" && a.CANote == "" {
		return a.notFound
	}
	return a.notFound + "\x00" + a.invalid + "\x00" + a.note + "\x00" + a.unserved + "\x00" + a.CANote
}

// attach resolves every targetRef of every policy and applies the spec's
// precedence among policies selecting the same target and sectionName. It
// returns the attachments of each policy (indexed like verdicts), in
// targetRef order, and the winning policy of each target.
func Attach(verdicts []*Verdict, ix *input.Index) ([][]*Attachment, map[Target]*Verdict) {
	total := 0
	for _, v := range verdicts {
		total += len(v.Policy.Spec.TargetRefs)
	}
	all, ptrs := make([]Attachment, total), make([]*Attachment, total)
	byPolicy := make([][]*Attachment, len(verdicts))
	winners := make(map[Target]*Verdict, len(verdicts))
	n := 0
	for i, v := range verdicts {
		refs := v.Policy.Spec.TargetRefs
		byPolicy[i] = ptrs[n : n+len(refs) : n+len(refs)]
		for _, ref := range refs {
			a := &all[n]
			ptrs[n] = a
			n++
			if !a.Resolve(v, ref, ix) {
				continue
			}
			Compete(winners, a)
		}
	}
	for i := range all {
		all[i].SetWinner(winners)
	}
	return byPolicy, winners
}

// Resolve fills in what one targetRef of v selects; false when it
// governs nothing (a missing target, or a port that is not TCP).
func (a *Attachment) Resolve(v *Verdict, ref gwv1.LocalPolicyTargetReferenceWithSectionName, ix *input.Index) bool {
	a.verdict, a.ref = v, ref
	a.Target, a.notFound = resolveTarget(v.Name.Namespace, ref, ix)
	if a.notFound != "" {
		return false
	}
	if a.invalid, a.note = notTCP(a.Target, ix.Services[a.Target.Service]); a.invalid != "" {
		return false // governs nothing: no cluster serves a UDP port
	}
	return true
}

// compete makes a's policy the target's winner if it precedes the one
// there. The first of equals stays: the order is total but for a policy
// naming the same target twice.
func Compete(winners map[Target]*Verdict, a *Attachment) {
	if w, ok := winners[a.Target]; !ok || precedes(a.verdict, w) {
		winners[a.Target] = a.verdict
	}
}

// SetWinner records which policy won a's target when it is not a's own.
func (a *Attachment) SetWinner(winners map[Target]*Verdict) {
	a.Winner = nil
	if a.notFound != "" || a.invalid != "" {
		return
	}
	if w := winners[a.Target]; w != a.verdict {
		a.Winner = w
	}
}

// precedes is the spec's order: older creationTimestamp first, then
// `{namespace}/{name}` alphabetically.
func precedes(a, b *Verdict) bool {
	ta, tb := a.Policy.CreationTimestamp.Time, b.Policy.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.Name.String() < b.Name.String()
}

// resolveTarget finds the Service (and port) a targetRef selects, or says
// what is missing.
func resolveTarget(namespace string, ref gwv1.LocalPolicyTargetReferenceWithSectionName, ix *input.Index) (Target, string) {
	t := Target{Service: input.NameOf(namespace, string(ref.Name))}
	if ref.SectionName != nil {
		t.Section = string(*ref.SectionName)
	}
	if ref.Group == gwxv1a1.GroupName && string(ref.Kind) == string(input.KindXBackend) {
		// GEP-4894: an XBackend carries its own TLS.
		return t, fmt.Sprintf("targetRef XBackend %s: a BackendTLSPolicy may not target an XBackend (GEP-4894); set the XBackend's spec.tls instead", t.Service)
	}
	if ref.Group != "" || ref.Kind != "Service" {
		return t, fmt.Sprintf("targetRef group %q kind %q is not supported, only core Services", ref.Group, ref.Kind)
	}
	svc, ok := ix.Services[t.Service]
	if !ok {
		return t, fmt.Sprintf("Service %s does not exist", t.Service)
	}
	if t.Section != "" && !hasPortNamed(svc, t.Section) {
		return t, fmt.Sprintf("Service %s has no port named %q", t.Service, t.Section)
	}
	return t, ""
}

// notTCP says why a policy cannot apply to a port that is not TCP
// (invalid, when the target names it), or warns of the Service's ports
// that are not TCP (note, when the target is the whole Service). TLS to a
// backend runs over TCP; such ports get no cluster.
func notTCP(t Target, svc *corev1.Service) (invalid, note string) {
	var others []string
	for _, p := range svc.Spec.Ports {
		proto := input.ProtocolOrTCP(p.Protocol)
		if proto == corev1.ProtocolTCP {
			continue
		}
		if t.Section != "" && p.Name == t.Section {
			return fmt.Sprintf("Service %s port %q is %s: TLS to a backend runs over TCP", t.Service, p.Name, proto), ""
		}
		others = append(others, fmt.Sprintf("%q (%s)", p.Name, proto))
	}
	if t.Section != "" || len(others) == 0 {
		return "", ""
	}
	return "", fmt.Sprintf("; it does not apply to the ports of Service %s that are not TCP: %s", t.Service, strings.Join(others, ", "))
}

func hasPortNamed(svc *corev1.Service, name string) bool {
	for _, p := range svc.Spec.Ports {
		if p.Name == name {
			return true
		}
	}
	return false
}

// governing is the policy that decides a Service port's TLS: the winner on
// the port's name, else the winner on the whole Service, else none.
func Governing(winners map[Target]*Verdict, svc types.NamespacedName, port corev1.ServicePort) *Verdict {
	if port.Name != "" {
		if v, ok := winners[Target{Service: svc, Section: port.Name}]; ok {
			return v
		}
	}
	return winners[Target{Service: svc}]
}

// MarkUnserved tells each attachment that governs a port without a cluster
// why it has none (in the Service's port order), for its Accepted
// condition: a port that gets no cluster is not served with the policy's
// TLS, whatever the policy says.
func MarkUnserved(byPolicy [][]*Attachment, unserved map[types.NamespacedName][]UnservedPort, ix *input.Index) {
	for _, as := range byPolicy {
		for _, a := range as {
			a.MarkUnserved(unserved[a.Target.Service], ix)
		}
	}
}

// UnservedPort is a governed Service port that gets no cluster, and why.
type UnservedPort struct {
	Governor *Verdict
	Number   int32
	Why      string
}

// MarkUnserved sets why the ports a governs among ports (its Service's
// unserved ones) have no cluster.
func (a *Attachment) MarkUnserved(ports []UnservedPort, ix *input.Index) {
	a.unserved = ""
	if len(ports) == 0 || a.notFound != "" || a.invalid != "" || a.Winner != nil {
		return
	}
	var why []string
	for _, p := range ports {
		if p.Governor == a.verdict && covers(a.Target, ix.Services[a.Target.Service], p.Number) {
			why = append(why, p.Why)
		}
	}
	a.unserved = strings.Join(why, "; ")
}

// covers reports whether a target selects the port of that number (a port
// sharing the number, which shares its cluster, counts).
func covers(t Target, svc *corev1.Service, number int32) bool {
	if t.Section == "" {
		return true
	}
	for _, p := range svc.Spec.Ports {
		if p.Name == t.Section && p.Port == number {
			return true
		}
	}
	return false
}
