package pipeline

import (
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// FanOut reports to several sinks in order, so Kubernetes mode can write
// statuses to the API server and still log and show them like dir mode.
type FanOut []StatusSink

var _ GatewayAPISink = FanOut(nil)

// Report calls every sink with the same read-only statuses.
func (f FanOut) Report(statuses map[types.NamespacedName]gwv1.PolicyStatus) {
	for _, s := range f {
		s.Report(statuses)
	}
}

// ReportGatewayAPI calls every sink that takes Gateway API statuses.
func (f FanOut) ReportGatewayAPI(statuses translator.GatewayAPIStatuses) {
	for _, s := range f {
		if g, ok := s.(GatewayAPISink); ok {
			g.ReportGatewayAPI(statuses)
		}
	}
}
