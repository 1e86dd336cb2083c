package envoy

import (
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	previoushostsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// retryOnConnectionError are the conditions the spec asks a retry stanza
// to retry on: a refused or failed connection, a reset, a disconnect or a
// read timeout (reset, which also covers a try that outlived its per-try
// timeout, timeouts.backendRequest), and a stream refused by an HTTP/2
// backend.
var retryOnConnectionError = []string{"connect-failure", "refused-stream", "reset"}

// A retry goes to an endpoint the request has not tried yet, when there is
// one: round robin alone sends a retry back to the endpoint that just
// failed whenever other requests took the picks in between. After
// hostSelectionAttempts picks of tried endpoints (a Service with one, say)
// it takes the last one picked.
var (
	previousHosts = []*routev3.RetryPolicy_RetryHostPredicate{{
		Name:       "envoy.retry_host_predicates.previous_hosts",
		ConfigType: &routev3.RetryPolicy_RetryHostPredicate_TypedConfig{TypedConfig: packedPreviousHosts()},
	}}
	hostSelectionAttempts int64 = 3
)

func packedPreviousHosts() *anypb.Any {
	a, err := anypb.New(&previoushostsv3.PreviousHostsPredicate{})
	if err != nil {
		panic(err) // a fixed, empty message always packs
	}
	return a
}

// retryPolicy is a rule's retry stanza as Envoy's retry policy.
func retryPolicy(r *plan.Retry) *routev3.RetryPolicy {
	on := retryOnConnectionError
	if len(r.Codes) > 0 {
		on = append(append([]string(nil), on...), "retriable-status-codes")
	}
	p := &routev3.RetryPolicy{
		RetryOn: strings.Join(on, ","), RetriableStatusCodes: r.Codes,
		RetryHostPredicate: previousHosts, HostSelectionRetryMaxAttempts: hostSelectionAttempts,
	}
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
