package translator

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// target is what a policy attaches to: a Service, or one of its ports by
// name (section "" is the whole Service).
type target struct {
	service types.NamespacedName
	section string
}

// attachment is one targetRef of one policy, and how it fared.
type attachment struct {
	verdict *policyVerdict
	ref     gwv1.LocalPolicyTargetReferenceWithSectionName
	target  target
	// notFound says what is missing when the target does not resolve.
	notFound string
	// invalid says why a resolved target cannot take the policy: a UDP
	// port (GEP-1897: Accepted False, reason Invalid).
	invalid string
	// note is a warning for an accepted attachment: the Service's UDP
	// ports, which the policy does not apply to.
	note string
	// unserved says why ports this attachment's policy governs get no
	// cluster (set after the ports are translated; see markUnserved).
	unserved string
	// caNote warns that a CA the accepted policy trusts expires soon or
	// expired; it depends on now, so the status cache keys on it.
	caNote string
	// winner is the policy that takes precedence on this target; nil when
	// this attachment's own policy does.
	winner *policyVerdict
}

// outcome is what the attachment's status says besides its winner, for
// the status cache: a Service can turn a port UDP, or lose the field its
// cluster needs, under an unchanged policy.
func (a *attachment) outcome() string {
	if a.invalid == "" && a.note == "" && a.unserved == "" && a.caNote == "" {
		return a.notFound
	}
	return a.notFound + "\x00" + a.invalid + "\x00" + a.note + "\x00" + a.unserved + "\x00" + a.caNote
}

// attach resolves every targetRef of every policy and applies the spec's
// precedence among policies selecting the same target and sectionName. It
// returns the attachments of each policy (indexed like verdicts), in
// targetRef order, and the winning policy of each target.
func attach(verdicts []*policyVerdict, ix *objectIndex) ([][]*attachment, map[target]*policyVerdict) {
	total := 0
	for _, v := range verdicts {
		total += len(v.policy.Spec.TargetRefs)
	}
	all, ptrs := make([]attachment, total), make([]*attachment, total)
	byPolicy := make([][]*attachment, len(verdicts))
	winners := make(map[target]*policyVerdict, len(verdicts))
	n := 0
	for i, v := range verdicts {
		refs := v.policy.Spec.TargetRefs
		byPolicy[i] = ptrs[n : n+len(refs) : n+len(refs)]
		for _, ref := range refs {
			a := &all[n]
			ptrs[n] = a
			n++
			if !a.resolve(v, ref, ix) {
				continue
			}
			compete(winners, a)
		}
	}
	for i := range all {
		all[i].setWinner(winners)
	}
	return byPolicy, winners
}

// resolve fills in what one targetRef of v selects; false when it
// governs nothing (a missing target, or a port that is not TCP).
func (a *attachment) resolve(v *policyVerdict, ref gwv1.LocalPolicyTargetReferenceWithSectionName, ix *objectIndex) bool {
	a.verdict, a.ref = v, ref
	a.target, a.notFound = resolveTarget(v.name.Namespace, ref, ix)
	if a.notFound != "" {
		return false
	}
	if a.invalid, a.note = notTCP(a.target, ix.services[a.target.service]); a.invalid != "" {
		return false // governs nothing: no cluster serves a UDP port
	}
	return true
}

// compete makes a's policy the target's winner if it precedes the one
// there. The first of equals stays: the order is total but for a policy
// naming the same target twice.
func compete(winners map[target]*policyVerdict, a *attachment) {
	if w, ok := winners[a.target]; !ok || precedes(a.verdict, w) {
		winners[a.target] = a.verdict
	}
}

// setWinner records which policy won a's target when it is not a's own.
func (a *attachment) setWinner(winners map[target]*policyVerdict) {
	a.winner = nil
	if a.notFound != "" || a.invalid != "" {
		return
	}
	if w := winners[a.target]; w != a.verdict {
		a.winner = w
	}
}

// precedes is the spec's order: older creationTimestamp first, then
// `{namespace}/{name}` alphabetically.
func precedes(a, b *policyVerdict) bool {
	ta, tb := a.policy.CreationTimestamp.Time, b.policy.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.name.String() < b.name.String()
}

// resolveTarget finds the Service (and port) a targetRef selects, or says
// what is missing.
func resolveTarget(namespace string, ref gwv1.LocalPolicyTargetReferenceWithSectionName, ix *objectIndex) (target, string) {
	t := target{service: nameOf(namespace, string(ref.Name))}
	if ref.SectionName != nil {
		t.section = string(*ref.SectionName)
	}
	if ref.Group != "" || ref.Kind != "Service" {
		return t, fmt.Sprintf("targetRef group %q kind %q is not supported, only core Services", ref.Group, ref.Kind)
	}
	svc, ok := ix.services[t.service]
	if !ok {
		return t, fmt.Sprintf("Service %s does not exist", t.service)
	}
	if t.section != "" && !hasPortNamed(svc, t.section) {
		return t, fmt.Sprintf("Service %s has no port named %q", t.service, t.section)
	}
	return t, ""
}

// notTCP says why a policy cannot apply to a port that is not TCP
// (invalid, when the target names it), or warns of the Service's ports
// that are not TCP (note, when the target is the whole Service). TLS to a
// backend runs over TCP; such ports get no cluster.
func notTCP(t target, svc *corev1.Service) (invalid, note string) {
	var others []string
	for _, p := range svc.Spec.Ports {
		proto := protocolOrTCP(p.Protocol)
		if proto == corev1.ProtocolTCP {
			continue
		}
		if t.section != "" && p.Name == t.section {
			return fmt.Sprintf("Service %s port %q is %s: TLS to a backend runs over TCP", t.service, p.Name, proto), ""
		}
		others = append(others, fmt.Sprintf("%q (%s)", p.Name, proto))
	}
	if t.section != "" || len(others) == 0 {
		return "", ""
	}
	return "", fmt.Sprintf("; it does not apply to the ports of Service %s that are not TCP: %s", t.service, strings.Join(others, ", "))
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
func governing(winners map[target]*policyVerdict, svc types.NamespacedName, port corev1.ServicePort) *policyVerdict {
	if port.Name != "" {
		if v, ok := winners[target{service: svc, section: port.Name}]; ok {
			return v
		}
	}
	return winners[target{service: svc}]
}

// markUnserved tells each attachment that governs a port without a cluster
// why it has none (in the Service's port order), for its Accepted
// condition: a port that gets no cluster is not served with the policy's
// TLS, whatever the policy says.
func markUnserved(byPolicy [][]*attachment, unserved map[types.NamespacedName][]*portOutput, ix *objectIndex) {
	for _, as := range byPolicy {
		for _, a := range as {
			a.markUnserved(unserved[a.target.service], ix)
		}
	}
}

// markUnserved sets why the ports a governs among ports (its Service's
// unserved ones) have no cluster.
func (a *attachment) markUnserved(ports []*portOutput, ix *objectIndex) {
	a.unserved = ""
	if len(ports) == 0 || a.notFound != "" || a.invalid != "" || a.winner != nil {
		return
	}
	var why []string
	for _, p := range ports {
		if p.policy == a.verdict && covers(a.target, ix.services[a.target.service], p.number) {
			why = append(why, p.unserved)
		}
	}
	a.unserved = strings.Join(why, "; ")
}

// covers reports whether a target selects the port of that number (a port
// sharing the number, which shares its cluster, counts).
func covers(t target, svc *corev1.Service, number int32) bool {
	if t.section == "" {
		return true
	}
	for _, p := range svc.Spec.Ports {
		if p.Name == t.section && p.Port == number {
			return true
		}
	}
	return false
}
