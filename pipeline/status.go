package pipeline

import (
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// StatusSink receives each translation's policy statuses, after the
// snapshot built from the same translation was published (so a status
// never claims more than Envoy is being served).
type StatusSink interface {
	// Report must not block for long: it is called on the pipeline's
	// goroutine. statuses is complete (every input policy) and read-only.
	Report(statuses map[types.NamespacedName]gwv1.PolicyStatus)
}

// GatewayAPISink is a StatusSink that also takes the GatewayClass, Gateway,
// ListenerSet and route statuses (every route kind). The pipeline calls
// it right after Report, with the same translation's statuses, when its
// Sink implements it.
type GatewayAPISink interface {
	StatusSink
	// ReportGatewayAPI must not block for long either; statuses is
	// complete (every object this controller owns) and read-only.
	ReportGatewayAPI(statuses translator.GatewayAPIStatuses)
}
