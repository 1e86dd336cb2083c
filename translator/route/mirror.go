package route

import (
	"fmt"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/referencegrant"
)

// A RequestMirror filter sends a copy of each request (or a share of them)
// to one more backend, whose answer nobody waits for. Its backendRef
// resolves like a rule's: one that does not resolve is dropped, the rule
// still serves its backends, and ResolvedRefs says why (the spec).

// ruleMirror judges rules[i].filters[k].requestMirror. problem names an
// unresolved backendRef (the mirror is dropped, m is nil); err a share the
// CRD refuses (the rule then answers 500).
func (rs *Route) ruleMirror(i, k int, f *gwv1.HTTPRequestMirrorFilter, ix *input.Index, grants referencegrant.Grants) (m *plan.Mirror, problem string, err error) {
	share, err := mirrorShare(f)
	if err != nil {
		return nil, "", err
	}
	cluster, reason, msg := rs.resolveBackend(f.BackendRef, ix, grants)
	if reason != "" {
		if rs.ResolvedReason == "" {
			rs.ResolvedReason = reason
		}
		return nil, fmt.Sprintf("rules[%d].filters[%d].requestMirror.backendRef: %s", i, k, msg), nil
	}
	return &plan.Mirror{Cluster: cluster, PerMillion: share}, "", nil
}

// mirrorShare is the share of requests mirrored, in millionths: percent,
// or fraction (numerator over a denominator of 100 by default), or all.
func mirrorShare(f *gwv1.HTTPRequestMirrorFilter) (uint32, error) {
	switch {
	case f.Percent != nil && f.Fraction != nil:
		return 0, fmt.Errorf("requestMirror: percent and fraction are exclusive")
	case f.Percent != nil:
		if *f.Percent < 0 || *f.Percent > 100 {
			return 0, fmt.Errorf("requestMirror.percent %d: 0–100", *f.Percent)
		}
		return uint32(*f.Percent) * (plan.AllMirrored / 100), nil
	case f.Fraction != nil:
		num, den := int64(f.Fraction.Numerator), int64(100)
		if f.Fraction.Denominator != nil {
			den = int64(*f.Fraction.Denominator)
		}
		if den < 1 || num < 0 || num > den {
			return 0, fmt.Errorf("requestMirror.fraction %d/%d: a numerator of 0 up to a denominator of at least 1", num, den)
		}
		// Rounded to the nearest millionth.
		return uint32((num*plan.AllMirrored + den/2) / den), nil
	}
	return plan.AllMirrored, nil
}
