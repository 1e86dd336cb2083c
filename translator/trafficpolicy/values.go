package trafficpolicy

import (
	"fmt"
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// The API's defaults (kubebuilder), applied here since a directory of
// manifests gets no API server to apply them.
const (
	defaultBudgetPercent  = 20
	defaultBudgetInterval = "10s"
	defaultMinRetryCount  = 10
	defaultMinRetryPeriod = "1s"
)

// Our names for a session whose sessionName is unset (the spec leaves
// them to the implementation).
const (
	DefaultSessionCookie = "tlsplane-session"
	DefaultSessionHeader = "x-tlsplane-session"
)

// maxSessionName is the API's limit on sessionName.
const maxSessionName = 128

// retryBudget is the policy's retryConstraint with the API's defaults,
// and a note saying what Envoy does not do of it; problem is why it is
// refused ("" when it is not).
func retryBudget(rc *gwxv1a1.RetryConstraint) (b *plan.RetryBudget, note, problem string) {
	if rc == nil {
		return nil, "", ""
	}
	percent, interval := defaultBudgetPercent, defaultBudgetInterval
	if rc.Budget != nil {
		if rc.Budget.Percent != nil {
			percent = *rc.Budget.Percent
		}
		if rc.Budget.Interval != nil {
			interval = string(*rc.Budget.Interval)
		}
	}
	if percent < 0 || percent > 100 {
		return nil, "", fmt.Sprintf("spec.retryConstraint.budget.percent: %d is outside 0..100", percent)
	}
	if d, err := time.ParseDuration(interval); err != nil || d < time.Second || d > time.Hour {
		return nil, "", fmt.Sprintf("spec.retryConstraint.budget.interval: %q is not a duration from 1s to 1h", interval)
	}
	b = &plan.RetryBudget{Percent: uint32(percent)}
	minRate := "no minimum beyond Envoy's 3 concurrent retries"
	rate := rc.MinRetryRate
	if rate == nil {
		count, period := defaultMinRetryCount, gwv1.Duration(defaultMinRetryPeriod)
		rate = &gwxv1a1.RequestRate{Count: &count, Interval: &period}
	}
	if rate.Count != nil {
		if *rate.Count < 1 || *rate.Count > 1_000_000 {
			return nil, "", fmt.Sprintf("spec.retryConstraint.minRetryRate.count: %d is outside 1..1000000", *rate.Count)
		}
		b.MinConcurrency = uint32(*rate.Count)
		minRate = fmt.Sprintf("at least %d concurrent retries", *rate.Count)
	}
	rateInterval := ""
	if rate.Interval != nil {
		rateInterval = string(*rate.Interval)
		if d, err := time.ParseDuration(rateInterval); err != nil || d <= 0 || d > time.Hour {
			return nil, "", fmt.Sprintf("spec.retryConstraint.minRetryRate.interval: %q is not a duration above 0s up to 1h", rateInterval)
		}
	}
	note = fmt.Sprintf("retry budget: retries in flight at most %d%% of active requests, %s", percent, minRate)
	ignored := []string{"budget.interval " + interval}
	if rateInterval != "" {
		ignored = append(ignored, "minRetryRate.interval "+rateInterval)
	}
	// Envoy's budget is over the requests active now, not over a window.
	note += fmt.Sprintf(" (spec.retryConstraint %s: Envoy's budget counts active requests, over no interval)", strings.Join(ignored, ", "))
	return b, note, ""
}

// session is the policy's sessionPersistence with the API's defaults;
// problem names a field Envoy's stateful session cannot honour, or a
// value the API server would refuse.
func session(sp *gwv1.SessionPersistence) (s *plan.Session, note, problem string) {
	if sp == nil {
		return nil, "", ""
	}
	kind := gwv1.CookieBasedSessionPersistence
	if sp.Type != nil {
		kind = *sp.Type
	}
	lifetime := gwv1.SessionCookieLifetimeType
	if sp.CookieConfig != nil && sp.CookieConfig.LifetimeType != nil {
		lifetime = *sp.CookieConfig.LifetimeType
	}
	var ttl time.Duration
	if sp.AbsoluteTimeout != nil {
		d, err := time.ParseDuration(string(*sp.AbsoluteTimeout))
		if err != nil || d <= 0 {
			return nil, "", fmt.Sprintf("spec.sessionPersistence.absoluteTimeout: %q is not a positive duration", *sp.AbsoluteTimeout)
		}
		ttl = d
	}
	switch kind {
	case gwv1.CookieBasedSessionPersistence:
		s = &plan.Session{Kind: plan.SessionCookie, Name: DefaultSessionCookie, Path: "/"}
		switch lifetime {
		case gwv1.PermanentCookieLifetimeType:
			if sp.AbsoluteTimeout == nil {
				return nil, "", "spec.sessionPersistence.cookieConfig.lifetimeType: Permanent needs spec.sessionPersistence.absoluteTimeout"
			}
			s.TTL = ttl
		case gwv1.SessionCookieLifetimeType:
			if sp.AbsoluteTimeout != nil {
				// Envoy's cookie lifetime is its Max-Age: it cannot keep a
				// session cookie and end it after a time.
				return nil, "", fmt.Sprintf("spec.sessionPersistence.absoluteTimeout: %s with cookieConfig.lifetimeType Session is not supported: Envoy expires a session cookie only as a permanent one (set lifetimeType: Permanent)", *sp.AbsoluteTimeout)
			}
		default:
			return nil, "", fmt.Sprintf("spec.sessionPersistence.cookieConfig.lifetimeType: %q is neither Permanent nor Session", lifetime)
		}
	case gwv1.HeaderBasedSessionPersistence:
		if sp.CookieConfig != nil {
			return nil, "", "spec.sessionPersistence.cookieConfig: only for type Cookie, not Header"
		}
		if sp.AbsoluteTimeout != nil {
			return nil, "", fmt.Sprintf("spec.sessionPersistence.absoluteTimeout: %s is not supported with type Header: Envoy's header session has no lifetime", *sp.AbsoluteTimeout)
		}
		s = &plan.Session{Kind: plan.SessionHeader, Name: DefaultSessionHeader}
	default:
		return nil, "", fmt.Sprintf("spec.sessionPersistence.type: %q is neither Cookie nor Header", kind)
	}
	if sp.SessionName != nil {
		name := *sp.SessionName
		if len(name) > maxSessionName {
			return nil, "", fmt.Sprintf("spec.sessionPersistence.sessionName: %d bytes, more than %d", len(name), maxSessionName)
		}
		if !isToken(name) {
			return nil, "", fmt.Sprintf("spec.sessionPersistence.sessionName: %q is not a valid %s name", name, strings.ToLower(string(kind)))
		}
		s.Name = name
		if s.Kind == plan.SessionHeader {
			s.Name = strings.ToLower(name) // HTTP/2 header names are lower case
		}
	}
	note = fmt.Sprintf("session persistence: %s %q", strings.ToLower(string(kind)), s.Name)
	if s.TTL > 0 {
		note += fmt.Sprintf(" with Max-Age %s", s.TTL)
	}
	return s, note, ""
}

// isToken: s is an RFC 9110 token, what a cookie and a header name must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
