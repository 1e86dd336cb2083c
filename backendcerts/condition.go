package backendcerts

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// ConditionBackendCertificatesValid is the condition set on a policy's
// ancestor entries (an XBackend's parent entries) once an Envoy reported
// a certificate one of its backends presented.
const ConditionBackendCertificatesValid = "tlsplane.io/BackendCertificatesValid"

// Reasons of ConditionBackendCertificatesValid.
const (
	ReasonValid                 = "Valid"
	ReasonExpiring              = "Expiring"
	ReasonExpired               = "Expired"
	ReasonBelowPreferredVersion = "BelowPreferredVersion"
	// ReasonNoSightings: the condition was set, and every host it was
	// about went unseen for the retention.
	ReasonNoSightings = "NoSightings"
)

// maxMessage bounds the condition message; the API allows 32 KiB.
const maxMessage = 1024

// Apply returns statuses with ConditionBackendCertificatesValid on our
// entries of every policy governing a cluster some Envoy reported a
// backend certificate on within the retention, and Unknown NoSightings on
// those that had it and whose hosts all went unseen. statuses is the
// translator's read-only output: changed entries are deep copies in a new
// map. origins is the same translation's cluster → policies; previous
// keeps lastTransitionTime while the status holds.
func (inv *Inventory) Apply(statuses map[types.NamespacedName]gwv1.PolicyStatus, origins map[string][]types.NamespacedName,
	previous translator.PreviousStatus, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwv1.PolicyStatus {
	if controller == "" {
		controller = translator.DefaultControllerName
	}
	byPolicy, preferred := inv.observe(func(p types.NamespacedName) bool { _, ok := statuses[p]; return ok }, origins, now, false)
	inv.metrics.setExpiry(byPolicy)
	conds := inv.conditions(byPolicy, preferred, now, "policy", func(key types.NamespacedName) bool {
		_, exists := statuses[key]
		return exists && slices.ContainsFunc(previous[key].Ancestors, func(a gwv1.PolicyAncestorStatus) bool {
			return a.ControllerName == controller && hasCondition(a.Conditions)
		})
	}, maps.Keys(previous))
	return translator.WithAncestorCondition(statuses, conds, previous, controller, now)
}

// conditions is the condition of each object observed, and Unknown
// NoSightings for each of previous whose last status carried ours (had)
// and that nothing was observed for now. kind names the object in messages.
func (inv *Inventory) conditions(observed map[types.NamespacedName][]Entry, preferred map[string]string, now time.Time,
	kind string, had func(types.NamespacedName) bool, previous iter.Seq[types.NamespacedName]) map[types.NamespacedName]metav1.Condition {
	conds := make(map[types.NamespacedName]metav1.Condition, len(observed))
	for key, obs := range observed {
		conds[key] = inv.condition(obs, preferred, now, kind)
	}
	for key := range previous {
		if _, seen := observed[key]; !seen && had(key) {
			conds[key] = inv.noSightings(kind)
		}
	}
	return conds
}

// hasCondition reports whether conds holds ConditionBackendCertificatesValid.
func hasCondition(conds []metav1.Condition) bool {
	return slices.ContainsFunc(conds, func(c metav1.Condition) bool { return c.Type == ConditionBackendCertificatesValid })
}

// observe lists, per object of origins that has says to look at (a policy,
// or an XBackend), the entries of the clusters it governs, sorted by
// fleet, cluster and host, with the preferred version of those clusters.
func (inv *Inventory) observe(has func(types.NamespacedName) bool, origins map[string][]types.NamespacedName,
	now time.Time, xbackends bool) (map[types.NamespacedName][]Entry, map[string]string) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if xbackends {
		inv.backs = origins
	} else {
		inv.governs = origins
	}
	byOwner := map[types.NamespacedName][]Entry{}
	wanted := map[string]bool{}
	for _, e := range inv.view(now) {
		for _, p := range origins[e.Cluster] {
			if has(p) {
				byOwner[p] = append(byOwner[p], *e)
				wanted[e.Cluster] = true
			}
		}
	}
	for _, obs := range byOwner {
		sortEntries(obs)
	}
	return byOwner, inv.preferredVersions(wanted)
}

// condition is False when a backend's certificate expired (the most
// overdue named), else when one expires within the warning (the first to
// expire named), else when one negotiated below its cluster's preferred
// version; True otherwise. owner is "policy" or "XBackend".
func (inv *Inventory) condition(obs []Entry, preferred map[string]string, now time.Time, owner string) metav1.Condition {
	var expired, expiring, low []Entry
	for _, e := range obs {
		switch inv.expiry(e, now) {
		case certExpired:
			expired = append(expired, e)
		case certExpiring:
			expiring = append(expiring, e)
		}
		if below(e.Version, preferredOf(preferred, e.Cluster)) {
			low = append(low, e)
		}
	}
	byNotAfter := func(a, b Entry) int { return a.NotAfter.Compare(b.NotAfter) }
	c := metav1.Condition{Type: ConditionBackendCertificatesValid, Status: metav1.ConditionFalse}
	var msg string
	switch {
	case len(expired) > 0:
		slices.SortStableFunc(expired, byNotAfter)
		e := expired[0]
		c.Reason = ReasonExpired
		msg = fmt.Sprintf("%s, which expired on %s", presented(e), date(e.NotAfter)) + more(expired[1:], "with an expired certificate")
	case len(expiring) > 0:
		slices.SortStableFunc(expiring, byNotAfter)
		e := expiring[0]
		c.Reason = ReasonExpiring
		msg = fmt.Sprintf("%s, which expires on %s, within --backend-certificate-expiry-warning (%s)", presented(e), date(e.NotAfter), inv.warning) +
			more(expiring[1:], "with a certificate expiring within the warning")
	case len(low) > 0:
		e := low[0]
		c.Reason = ReasonBelowPreferredVersion
		msg = fmt.Sprintf("Envoys of fleet %q negotiated %s (cipher %s) with backend %s of cluster %s, below %s, the highest version the %s allows (option tlsplane.io/maximumVersion, or its profile's); the backend presented %q (serial %s, issuer %q)",
			e.Fleet, e.Version, orNone(e.Cipher), e.Host, e.Cluster, preferredOf(preferred, e.Cluster), owner, e.Subject, e.Serial, e.Issuer) +
			more(low[1:], "negotiating below the preferred version")
	default:
		first := slices.MinFunc(obs, byNotAfter)
		c.Status, c.Reason = metav1.ConditionTrue, ReasonValid
		// No count of sightings or time seen: they move with every request
		// sampled, and the status would be written as often.
		msg = fmt.Sprintf("Envoys of fleet %s saw %d backend(s) of cluster %s present certificates valid beyond --backend-certificate-expiry-warning (%s), at the %s's preferred TLS version; the first to expire is %q of backend %s (serial %s), on %s",
			quotedSet(obs, func(e Entry) string { return e.Fleet }), len(obs), strings.Join(set(obs, func(e Entry) string { return e.Cluster }), ", "),
			inv.warning, owner, first.Subject, first.Host, first.Serial, date(first.NotAfter))
	}
	c.Message = translator.CapMessage(msg, maxMessage)
	return c
}

func (inv *Inventory) noSightings(owner string) metav1.Condition {
	return metav1.Condition{Type: ConditionBackendCertificatesValid, Status: metav1.ConditionUnknown, Reason: ReasonNoSightings,
		Message: fmt.Sprintf("no Envoy reported a TLS connection to a backend of this %s within --backend-certificate-retention (%s): the certificates seen before are forgotten", owner, inv.retention)}
}

// presented names a host, its cluster and fleet, and its certificate.
func presented(e Entry) string {
	return fmt.Sprintf("Envoys of fleet %q saw backend %s of cluster %s present certificate %q (serial %s, issuer %q)",
		e.Fleet, e.Host, e.Cluster, e.Subject, e.Serial, e.Issuer)
}

// more names the other backends in the same case, if any.
func more(rest []Entry, what string) string {
	if len(rest) == 0 {
		return ""
	}
	parts := make([]string, 0, len(rest))
	for _, e := range rest {
		parts = append(parts, fmt.Sprintf("%s of cluster %s (fleet %q, %q, notAfter %s)", e.Host, e.Cluster, e.Fleet, e.Subject, date(e.NotAfter)))
	}
	return fmt.Sprintf("; and %d more backend(s) %s: %s", len(rest), what, strings.Join(parts, ", "))
}

func date(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func preferredOf(preferred map[string]string, cluster string) string {
	if v, ok := preferred[cluster]; ok {
		return v
	}
	return defaultPreferred
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// set is the distinct values of f over obs, sorted.
func set(obs []Entry, f func(Entry) string) []string {
	var out []string
	for _, e := range obs {
		out = append(out, f(e))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func quotedSet(obs []Entry, f func(Entry) string) string {
	vals := set(obs, f)
	for i, v := range vals {
		vals[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(vals, ", ")
}
