package xbackend

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/condition"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// MaxParents is the API's limit on status.parents.
const MaxParents = 32

// Conditions are Accepted and ResolvedRefs of the verdict.
func (v *Verdict) Conditions() []metav1.Condition {
	accepted := metav1.Condition{Type: "Accepted", Status: metav1.ConditionTrue, Reason: ReasonAccepted, Message: v.acceptedMessage()}
	if !v.Accepted() {
		accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, v.RejectReason, v.RejectMessage
	}
	resolved := metav1.Condition{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: ReasonResolvedRefs, Message: "All references are resolved"}
	if v.ResolvedReason != "" {
		resolved.Status, resolved.Reason, resolved.Message = metav1.ConditionFalse, v.ResolvedReason, v.ResolvedMessage
	}
	conds := []metav1.Condition{accepted, resolved}
	if f := v.FetchedCRLs.Freshness; f != nil {
		fresh := metav1.Condition{Type: backendtls.ConditionRevocationListsFresh, Status: metav1.ConditionFalse, Reason: f.Reason,
			Message: fmt.Sprintf("XBackend %s: metadata.annotations %s: %s", v.Name, tlsopts.CRLDistributionPointsKey, f.Message)}
		if f.Fresh {
			fresh.Status = metav1.ConditionTrue
		}
		conds = append(conds, fresh)
	}
	return conds
}

// acceptedMessage says what an accepted XBackend is sent: plaintext
// (never by surprise: the message says so), or TLS and its trust.
func (v *Verdict) acceptedMessage() string {
	where := fmt.Sprintf("%s:%d", v.Hostname, v.Port)
	switch {
	case v.TLS == nil && v.Backend.Spec.TLS == nil:
		return fmt.Sprintf("XBackend %s: sent to %s in plaintext (spec.tls absent)", v.Name, where)
	case v.TLS == nil:
		return fmt.Sprintf("XBackend %s: sent to %s in plaintext (spec.tls.mode None)", v.Name, where)
	case v.CA == nil:
		return fmt.Sprintf("XBackend %s: sent to %s over TLS (SNI %s) without verifying its certificate (tlsplane.io/insecureSkipVerify)", v.Name, where, v.TLS.SNI)
	}
	trust := "the system CA bundle"
	if v.CA.Sources != "" {
		trust = v.CA.Sources
	}
	msg := fmt.Sprintf("XBackend %s: sent to %s over TLS (SNI %s), verified against %s", v.Name, where, v.TLS.SNI, trust)
	if v.ClientCert != nil {
		msg += ", presenting the client certificate of " + v.ClientCert.SecretName
	}
	return msg
}

// Status is the XBackend's complete status: other controllers' parents
// as they were, then ours, one per Gateway whose accepted routes reach
// it (sorted, at most MaxParents), each with the verdict's conditions;
// a condition keeps its lastTransitionTime while its status holds.
// note (ExpiryNote) is added to an accepted XBackend's Accepted message.
func Status(v *Verdict, gateways []types.NamespacedName, prev gwxv1a1.BackendStatus, controller gwv1.GatewayController, now metav1.Time, note string) gwxv1a1.BackendStatus {
	var out gwxv1a1.BackendStatus
	before := map[string][]metav1.Condition{}
	for _, p := range prev.Ancestors {
		if p.ControllerName == controller {
			before[condition.AncestorKey(p.AncestorRef)] = p.Conditions
			continue
		}
		out.Ancestors = append(out.Ancestors, *p.DeepCopy())
	}
	conds := v.Conditions()
	if note != "" && conds[0].Status == metav1.ConditionTrue {
		conds[0].Message += note
	}
	for _, gw := range gateways {
		if len(out.Ancestors) >= MaxParents {
			break
		}
		group, kind, ns := gwv1.Group(gwv1.GroupName), gwv1.Kind("Gateway"), gwv1.Namespace(gw.Namespace)
		ref := gwv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: gwv1.ObjectName(gw.Name)}
		out.Ancestors = append(out.Ancestors, gwxv1a1.BackendAncestorStatus{
			ControllerName: controller,
			AncestorRef:    ref,
			Conditions:     condition.Stamp(before[condition.AncestorKey(ref)], conds, v.Backend.Generation, now),
		})
	}
	return out
}

// ExpiryNote warns, for the Accepted message, that a CA the XBackend
// trusts (or a revocation list served with it) has expired or expires
// within the warning window (backendtls.ExpiryWindow); "" when nothing
// does, or the XBackend is not accepted or trusts no bundle of ours.
func (v *Verdict) ExpiryNote(now time.Time, warning time.Duration) string {
	window, on := backendtls.ExpiryWindow(warning)
	if !on || !v.Accepted() || v.CA == nil {
		return ""
	}
	return backendtls.Expiry{Bundle: v.CA, CRL: v.CRL}.Note(now, window)
}

// ExpiryChanges is the first time after now that ExpiryNote's answer
// changes; zero: never.
func (v *Verdict) ExpiryChanges(now time.Time, warning time.Duration) time.Time {
	window, on := backendtls.ExpiryWindow(warning)
	if !on || !v.Accepted() || v.CA == nil {
		return time.Time{}
	}
	return backendtls.Expiry{Bundle: v.CA, CRL: v.CRL}.Changes(now, window)
}
