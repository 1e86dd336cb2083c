package envoy

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// mirrorPolicies are a rule's RequestMirror filters as Envoy's request
// mirror policies; a share below all is a runtime fraction with no runtime
// key, so its default is the share.
func mirrorPolicies(mirrors []plan.Mirror) []*routev3.RouteAction_RequestMirrorPolicy {
	var out []*routev3.RouteAction_RequestMirrorPolicy
	for _, m := range mirrors {
		p := &routev3.RouteAction_RequestMirrorPolicy{Cluster: m.Cluster}
		if m.PerMillion < plan.AllMirrored {
			p.RuntimeFraction = &corev3.RuntimeFractionalPercent{DefaultValue: fractionalPercent(m.PerMillion)}
		}
		out = append(out, p)
	}
	return out
}

// fractionalPercent is the share in hundredths when it is whole percents
// (as the spec's percent always is), else in millionths.
func fractionalPercent(perMillion uint32) *typev3.FractionalPercent {
	if perMillion%(plan.AllMirrored/100) == 0 {
		return &typev3.FractionalPercent{Numerator: perMillion / (plan.AllMirrored / 100), Denominator: typev3.FractionalPercent_HUNDRED}
	}
	return &typev3.FractionalPercent{Numerator: perMillion, Denominator: typev3.FractionalPercent_MILLION}
}
