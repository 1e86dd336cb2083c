package backendtls

import (
	"fmt"
	"time"
)

// DefaultCAExpiryWarning is how long before a trusted CA certificate
// expires the policy's Accepted message starts to warn.
const DefaultCAExpiryWarning = 30 * 24 * time.Hour

// CAExpiryNote warns, in an accepted policy's Accepted message, that a CA
// it trusts has expired or expires within the window (cfg.CAExpiryWarning,
// DefaultCAExpiryWarning when zero, none when negative). It names the date,
// not a count of days, so the message changes only when a threshold is
// crossed.
func CAExpiryNote(v *Verdict, now time.Time, cfg Config) string {
	window := cfg.CAExpiryWarning
	if window == 0 {
		window = DefaultCAExpiryWarning
	}
	b := v.Trust.Bundle
	if window < 0 || !v.Accepted() || b == nil || b.NotAfter.IsZero() {
		return ""
	}
	at := b.NotAfter.UTC().Format(time.RFC3339)
	switch {
	case !now.Before(b.NotAfter):
		return fmt.Sprintf("; warning: a CA certificate in %s expired at %s: handshakes with certificates it issued fail", b.NotAfterRef, at)
	case b.NotAfter.Sub(now) <= window:
		return fmt.Sprintf("; warning: a CA certificate in %s expires at %s, within %s", b.NotAfterRef, at, window)
	}
	return ""
}

// NoteChanges is the first time after now that CAExpiryNote's answer for
// v changes (when the warning window opens, and at expiry); zero: never.
func NoteChanges(v *Verdict, now time.Time, cfg Config) time.Time {
	window := cfg.CAExpiryWarning
	if window == 0 {
		window = DefaultCAExpiryWarning
	}
	b := v.Trust.Bundle
	if window < 0 || !v.Accepted() || b == nil || b.NotAfter.IsZero() {
		return time.Time{}
	}
	for _, at := range []time.Time{b.NotAfter.Add(-window), b.NotAfter} {
		if at.After(now) {
			return at
		}
	}
	return time.Time{}
}
