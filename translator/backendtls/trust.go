package backendtls

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/capem"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// caCertificateKey is the key, in a ConfigMap or Secret, that holds the PEM
// bundle (the spec's core support).
const caCertificateKey = "ca.crt"

// Bundle is the trust a policy's clusters validate against: the CA
// bundle to serve, and what messages and the expiry warning say of it.
type Bundle struct {
	plan.CABundle
	// Sources names the valid refs, for messages: "ConfigMap shop/pay-ca".
	Sources string
	// NotAfter is the earliest expiry among the certificates, and
	// NotAfterRef the ref holding it ("ConfigMap shop/ca"); zero for the
	// system bundle, which lives on the Envoy hosts.
	NotAfter    time.Time
	NotAfterRef string
}

// RefProblem is one invalid caCertificateRef, with the spec's reason.
type RefProblem struct {
	Reason  gwv1.PolicyConditionReason
	Message string
}

// Trust is the outcome of resolving a policy's spec.validation trust
// fields.
type Trust struct {
	Bundle   *Bundle      // nil when no valid CA
	Problems []RefProblem // invalid refs, in ref order
	invalid  string       // a spec error that makes the policy Invalid
}

// Invalid is the spec error that makes the validation block invalid; ""
// for none.
func (t Trust) Invalid() string { return t.invalid }

// ProblemMessages are the invalid refs' messages, in ref order.
func (t Trust) ProblemMessages() []string {
	msgs := make([]string, 0, len(t.Problems))
	for _, pr := range t.Problems {
		msgs = append(msgs, pr.Message)
	}
	return msgs
}

// ResolveTrust turns spec.validation (a BackendTLSPolicy's, or an
// XBackend's spec.tls.validation: one type) into a CA bundle, collecting
// why each ref is unusable. The secret is named after every ref (valid or
// not), so a ref becoming valid or invalid changes only the secret, never
// the cluster.
func ResolveTrust(namespace string, v gwv1.BackendTLSPolicyValidation, ix *input.Index, systemPath string, cas *capem.Cache) Trust {
	hasWellKnown := v.WellKnownCACertificates != nil && *v.WellKnownCACertificates != ""
	switch {
	case hasWellKnown && len(v.CACertificateRefs) > 0:
		return Trust{invalid: "validation: caCertificateRefs and wellKnownCACertificates are mutually exclusive"}
	case hasWellKnown && *v.WellKnownCACertificates != gwv1.WellKnownCACertificatesSystem:
		return Trust{invalid: fmt.Sprintf("validation.wellKnownCACertificates: %q is not supported, only %q", *v.WellKnownCACertificates, gwv1.WellKnownCACertificatesSystem)}
	case hasWellKnown:
		return Trust{Bundle: &Bundle{CABundle: plan.CABundle{SecretName: plan.SystemCASecretName, SystemPath: systemPath}}}
	case len(v.CACertificateRefs) == 0:
		return Trust{invalid: "validation: one of caCertificateRefs or wellKnownCACertificates is required"}
	}

	type resolved struct {
		key, pem string
		notAfter time.Time
		ref      string
	}
	var (
		t       Trust
		valid   []resolved
		keys    = make(map[string]bool, len(v.CACertificateRefs))
		sources []string
	)
	for i, ref := range v.CACertificateRefs {
		key := caRefKey(namespace, ref)
		keys[key] = true
		pem, notAfter, problem := resolveCARef(namespace, ref, ix, cas)
		if problem != nil {
			problem.Message = fmt.Sprintf("caCertificateRefs[%d]: %s", i, problem.Message)
			t.Problems = append(t.Problems, *problem)
			continue
		}
		source := fmt.Sprintf("%s %s", ref.Kind, input.NameOf(namespace, string(ref.Name)))
		valid = append(valid, resolved{key: key, pem: pem, notAfter: notAfter, ref: source})
		if !slices.Contains(sources, source) {
			sources = append(sources, source)
		}
	}
	if len(valid) == 0 {
		return t
	}
	// Sorted by key, like the name, so equal ref sets give one secret.
	sort.SliceStable(valid, func(i, j int) bool { return valid[i].key < valid[j].key })
	pem := valid[0].pem // one ref: the same string, without a copy
	if len(valid) > 1 {
		var content strings.Builder
		seen := make(map[string]bool, len(valid))
		for _, r := range valid {
			if !seen[r.key] {
				seen[r.key] = true
				content.WriteString(r.pem)
			}
		}
		pem = content.String()
	}
	t.Bundle = &Bundle{CABundle: plan.CABundle{SecretName: caSecretName(keys), PEM: pem}, Sources: strings.Join(sources, ", ")}
	for _, r := range valid {
		if !r.notAfter.IsZero() && (t.Bundle.NotAfter.IsZero() || r.notAfter.Before(t.Bundle.NotAfter)) {
			t.Bundle.NotAfter, t.Bundle.NotAfterRef = r.notAfter, r.ref
		}
	}
	return t
}

// resolveCARef returns the normalised PEM of one ref, or why it is invalid.
// cas may be nil (no cache).
func resolveCARef(namespace string, ref gwv1.LocalObjectReference, ix *input.Index, cas *capem.Cache) (string, time.Time, *RefProblem) {
	nn := input.NameOf(namespace, string(ref.Name))
	var (
		exists, found bool
		parse         func() (string, time.Time, error)
	)
	switch {
	case ref.Group == "" && ref.Kind == "ConfigMap":
		if cm, ok := ix.ConfigMaps[nn]; ok {
			exists = true
			key := capem.Key{UID: cm.UID, Kind: "ConfigMap", Name: nn}
			if s, ok := cm.Data[caCertificateKey]; ok {
				found = true
				parse = func() (string, time.Time, error) { return capem.Parse(cas, key, cm.ResourceVersion, s) }
			} else if b, ok := cm.BinaryData[caCertificateKey]; ok {
				found = true
				parse = func() (string, time.Time, error) { return capem.Parse(cas, key, cm.ResourceVersion, b) }
			}
		}
	case ref.Group == "" && ref.Kind == "Secret":
		if s, ok := ix.Secrets[nn]; ok {
			exists = true
			var b []byte
			b, found = s.Data[caCertificateKey]
			key := capem.Key{UID: s.UID, Kind: "Secret", Name: nn}
			parse = func() (string, time.Time, error) { return capem.Parse(cas, key, s.ResourceVersion, b) }
		}
	default:
		return "", time.Time{}, &RefProblem{
			Reason:  gwv1.BackendTLSPolicyReasonInvalidKind,
			Message: fmt.Sprintf("group %q kind %q is not supported, only core ConfigMap and Secret", ref.Group, ref.Kind),
		}
	}
	invalid := func(format string, a ...any) *RefProblem {
		return &RefProblem{
			Reason:  gwv1.BackendTLSPolicyReasonInvalidCACertificateRef,
			Message: fmt.Sprintf("%s %s", ref.Kind, nn) + " " + fmt.Sprintf(format, a...),
		}
	}
	switch {
	case !exists:
		return "", time.Time{}, invalid("does not exist")
	case !found:
		return "", time.Time{}, invalid("has no key %q", caCertificateKey)
	}
	pem, notAfter, err := parse()
	if err != nil {
		return "", time.Time{}, invalid("key %q %v", caCertificateKey, err)
	}
	return pem, notAfter, nil
}

// caRefKey names one ref's source (plan.CARef).
func caRefKey(namespace string, ref gwv1.LocalObjectReference) string {
	return plan.CARef(input.NameOf(namespace, "").Namespace, string(ref.Group), string(ref.Kind), string(ref.Name))
}

// caSecretName is the bundle's SDS secret, named after every ref.
func caSecretName(keys map[string]bool) string {
	refs := make([]string, 0, len(keys))
	for k := range keys {
		refs = append(refs, k)
	}
	return plan.CASecretName(refs)
}
