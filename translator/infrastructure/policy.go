package infrastructure

import (
	"fmt"
	"slices"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// AllNamespaces in Policy.Namespaces provisions Gateways in every
// namespace: an explicit choice, since it needs write access to
// Deployments and ServiceAccounts cluster-wide.
const AllNamespaces = "*"

// Policy is what the operator lets the provisioner do. The zero value
// provisions nowhere.
type Policy struct {
	// Namespaces are where Gateways are provisioned (--provision-namespaces);
	// AllNamespaces for every one.
	Namespaces []string
	// AllowedLabelKeys and AllowedAnnotationKeys are patterns a key must
	// match to be copied (--provision-allowed-label-keys,
	// --provision-allowed-annotation-keys); "*" allows every key.
	AllowedLabelKeys, AllowedAnnotationKeys []string
	// DeniedKeys are patterns of keys never copied, allowed or not
	// (--provision-denied-keys); DefaultDeniedKeys by default.
	DeniedKeys []string
}

// Provisions reports whether Gateways in namespace ns are provisioned.
func (p *Policy) Provisions(ns string) bool {
	return slices.Contains(p.Namespaces, AllNamespaces) || slices.Contains(p.Namespaces, ns)
}

// Metadata is the judgement of one Gateway's spec.infrastructure: what is
// copied, and the keys dropped (sorted), each with why.
type Metadata struct {
	Labels, Annotations               map[string]string
	DroppedLabels, DroppedAnnotations []Dropped
}

// Dropped is one key not copied, and the flag that dropped it.
type Dropped struct {
	Key, Flag string
}

func (d Dropped) String() string { return d.Key + " (" + d.Flag + ")" }

// Judge sorts gw's spec.infrastructure keys into copied and dropped.
func (p *Policy) Judge(gw *gwv1.Gateway) Metadata {
	m := Metadata{Labels: map[string]string{}, Annotations: map[string]string{}}
	inf := gw.Spec.Infrastructure
	if inf == nil {
		return m
	}
	for k, v := range inf.Labels {
		if d, ok := p.drop(string(k), p.AllowedLabelKeys, "--provision-allowed-label-keys"); ok {
			m.DroppedLabels = append(m.DroppedLabels, d)
		} else {
			m.Labels[string(k)] = string(v)
		}
	}
	for k, v := range inf.Annotations {
		if d, ok := p.drop(string(k), p.AllowedAnnotationKeys, "--provision-allowed-annotation-keys"); ok {
			m.DroppedAnnotations = append(m.DroppedAnnotations, d)
		} else {
			m.Annotations[string(k)] = string(v)
		}
	}
	byKey := func(a, b Dropped) int { return strings.Compare(a.Key, b.Key) }
	slices.SortFunc(m.DroppedLabels, byKey)
	slices.SortFunc(m.DroppedAnnotations, byKey)
	return m
}

// drop says whether key is dropped, and by which flag.
func (p *Policy) drop(key string, allowed []string, allowFlag string) (Dropped, bool) {
	switch {
	case matchAny(p.DeniedKeys, key):
		return Dropped{key, "--provision-denied-keys"}, true
	case !matchAny(allowed, key):
		return Dropped{key, "not in " + allowFlag}, true
	}
	return Dropped{}, false
}

// Summary names the dropped keys (never their values) for a status
// message; "" when none is.
func (m Metadata) Summary() string {
	var parts []string
	if len(m.DroppedLabels) > 0 {
		parts = append(parts, "labels "+joinDropped(m.DroppedLabels))
	}
	if len(m.DroppedAnnotations) > 0 {
		parts = append(parts, "annotations "+joinDropped(m.DroppedAnnotations))
	}
	return strings.Join(parts, "; ")
}

func joinDropped(ds []Dropped) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return strings.Join(s, ", ")
}

// NamespaceMessage says why a Gateway in ns is or is not provisioned.
func (p *Policy) NamespaceMessage(ns string) string {
	if p.Provisions(ns) {
		return fmt.Sprintf("namespace %s is one of --provision-namespaces: tlsplane provisions this Gateway's Envoy here", ns)
	}
	return fmt.Sprintf("namespace %s is not one of --provision-namespaces (%s): tlsplane creates nothing for this Gateway; run its Envoy fleet yourself", ns, strings.Join(p.Namespaces, ", "))
}
