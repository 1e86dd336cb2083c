package envoy

import (
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// retryOnConnectionError are the conditions the spec asks a retry stanza
// to retry on: a refused or failed connection, a reset, a disconnect or a
// read timeout (reset), and a stream refused by an HTTP/2 backend.
var retryOnConnectionError = []string{"connect-failure", "refused-stream", "reset"}

// retryPolicy is a rule's retry stanza as Envoy's retry policy.
func retryPolicy(r *plan.Retry) *routev3.RetryPolicy {
	on := retryOnConnectionError
	if len(r.Codes) > 0 {
		on = append(append([]string(nil), on...), "retriable-status-codes")
	}
	p := &routev3.RetryPolicy{RetryOn: strings.Join(on, ","), RetriableStatusCodes: r.Codes}
	if r.Attempts > 0 {
		p.NumRetries = wrapperspb.UInt32(r.Attempts)
	}
	if r.Backoff != nil && *r.Backoff > 0 {
		p.RetryBackOff = &routev3.RetryPolicy_RetryBackOff{BaseInterval: durationpb.New(*r.Backoff)}
	}
	if r.PerTry != nil && *r.PerTry > 0 {
		p.PerTryTimeout = durationpb.New(*r.PerTry)
	}
	return p
}
