package translator

import (
	"fmt"
	"time"
)

// DefaultCAExpiryWarning is how long before a trusted CA certificate
// expires the policy's Accepted message starts to warn.
const DefaultCAExpiryWarning = 30 * 24 * time.Hour

// caExpiryNote warns, in an accepted policy's Accepted message, that a CA
// it trusts has expired or expires within the window (opts.CAExpiryWarning,
// DefaultCAExpiryWarning when zero, none when negative). It names the date,
// not a count of days, so the message changes only when a threshold is
// crossed.
func caExpiryNote(v *policyVerdict, now time.Time, opts Options) string {
	window := opts.CAExpiryWarning
	if window == 0 {
		window = DefaultCAExpiryWarning
	}
	b := v.trust.bundle
	if window < 0 || !v.accepted() || b == nil || b.notAfter.IsZero() {
		return ""
	}
	at := b.notAfter.UTC().Format(time.RFC3339)
	switch {
	case !now.Before(b.notAfter):
		return fmt.Sprintf("; warning: a CA certificate in %s expired at %s: handshakes with certificates it issued fail", b.notAfterRef, at)
	case b.notAfter.Sub(now) <= window:
		return fmt.Sprintf("; warning: a CA certificate in %s expires at %s, within %s", b.notAfterRef, at, window)
	}
	return ""
}
