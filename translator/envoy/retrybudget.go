package envoy

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// retryBudget is a cluster's circuit breakers with an XBackendTrafficPolicy's
// retry budget on the default priority (the only one routes use); the
// budget replaces max_retries there, every other threshold keeps Envoy's
// default.
func retryBudget(b *plan.RetryBudget) *clusterv3.CircuitBreakers {
	budget := &clusterv3.CircuitBreakers_Thresholds_RetryBudget{BudgetPercent: &typev3.Percent{Value: float64(b.Percent)}}
	if b.MinConcurrency > 0 {
		budget.MinRetryConcurrency = wrapperspb.UInt32(b.MinConcurrency)
	}
	return &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{{
		Priority:    corev3.RoutingPriority_DEFAULT,
		RetryBudget: budget,
	}}}
}
