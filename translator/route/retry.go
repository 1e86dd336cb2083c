package route

import (
	"fmt"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// ruleRetry is a rule's retry stanza, nil when it has none. With retries a
// request makes several backend requests: backendRequest bounds each try
// and request the whole (nil keeps Envoy's default, "0s" disables it).
// Values the CRD refuses (a code outside 400–599, attempts below 1, a
// backoff that does not parse) are errors: the rule then answers 500.
func ruleRetry(r *gwv1.HTTPRouteRetry, t *gwv1.HTTPRouteTimeouts) (*plan.Retry, *time.Duration, error) {
	if r == nil {
		return nil, nil, nil
	}
	out := &plan.Retry{}
	for _, c := range r.Codes {
		if c < 400 || c > 599 {
			return nil, nil, fmt.Errorf("code %d: a retriable code is 400–599", c)
		}
		out.Codes = append(out.Codes, uint32(c))
	}
	if r.Attempts != nil {
		if *r.Attempts < 1 {
			return nil, nil, fmt.Errorf("attempts %d: at least 1", *r.Attempts)
		}
		out.Attempts = uint32(*r.Attempts)
	}
	var err error
	if out.Backoff, err = parseDuration("backoff", r.Backoff); err != nil {
		return nil, nil, err
	}
	if t == nil {
		return out, nil, nil
	}
	if out.PerTry, err = parseDuration("backendRequest", t.BackendRequest); err != nil {
		return nil, nil, err
	}
	request, err := parseDuration("request", t.Request)
	if err != nil {
		return nil, nil, err
	}
	return out, request, nil
}

func parseDuration(field string, d *gwv1.Duration) (*time.Duration, error) {
	if d == nil {
		return nil, nil
	}
	v, err := time.ParseDuration(string(*d))
	if err != nil {
		return nil, fmt.Errorf("%s %q: %v", field, *d, err)
	}
	return &v, nil
}
