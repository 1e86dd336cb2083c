package backendtls

import (
	"fmt"
	"time"
)

// DefaultCAExpiryWarning is how long before a trusted CA certificate
// expires (or a revocation list is due) the policy's Accepted message
// starts to warn.
const DefaultCAExpiryWarning = 30 * 24 * time.Hour

// CAExpiryNote warns, in an accepted policy's Accepted message, that a CA
// it trusts has expired or expires within the window (cfg.CAExpiryWarning,
// DefaultCAExpiryWarning when zero, none when negative), and likewise of
// its revocation lists' nextUpdate. It names the date, not a count of
// days, so the message changes only when a threshold is crossed.
func CAExpiryNote(v *Verdict, now time.Time, cfg Config) string {
	window, ok := noteWindow(v, cfg)
	if !ok {
		return ""
	}
	return Expiry{Bundle: v.Trust.Bundle, CRL: v.CRL}.Note(now, window)
}

// NoteChanges is the first time after now that CAExpiryNote's answer for
// v changes (when a warning window opens, and at expiry); zero: never.
func NoteChanges(v *Verdict, now time.Time, cfg Config) time.Time {
	window, ok := noteWindow(v, cfg)
	if !ok {
		return time.Time{}
	}
	return Expiry{Bundle: v.Trust.Bundle, CRL: v.CRL}.Changes(now, window)
}

// Expiry is what an expiry note reads: the bundle trusted (a policy's or
// an XBackend's) and the revocation lists served with it (nil: none).
type Expiry struct {
	Bundle *Bundle
	CRL    *CRL
}

// Note warns that a CA of the bundle has expired or expires within
// window, and likewise of the lists' nextUpdate; "" when nothing does.
func (e Expiry) Note(now time.Time, window time.Duration) string {
	note := ""
	if b := e.Bundle; b != nil && !b.NotAfter.IsZero() {
		at := b.NotAfter.UTC().Format(time.RFC3339)
		switch {
		case !now.Before(b.NotAfter):
			note = fmt.Sprintf("; warning: a CA certificate in %s expired at %s: handshakes with certificates it issued fail", b.NotAfterRef, at)
		case b.NotAfter.Sub(now) <= window:
			note = fmt.Sprintf("; warning: a CA certificate in %s expires at %s, within %s", b.NotAfterRef, at, window)
		}
	}
	if c := e.CRL; c != nil && !c.NextUpdate.IsZero() {
		at := c.NextUpdate.UTC().Format(time.RFC3339)
		switch {
		case !now.Before(c.NextUpdate):
			note += fmt.Sprintf("; warning: a revocation list in %s expired at %s (nextUpdate): Envoy refuses every certificate of its CA until the list is renewed", c.Source, at)
		case c.NextUpdate.Sub(now) <= window:
			note += fmt.Sprintf("; warning: a revocation list in %s expires at %s (nextUpdate), within %s", c.Source, at, window)
		}
	}
	return note
}

// Changes is the first time after now that Note's answer changes; zero:
// never.
func (e Expiry) Changes(now time.Time, window time.Duration) time.Time {
	var first time.Time
	consider := func(expiry time.Time) {
		if expiry.IsZero() {
			return
		}
		for _, at := range []time.Time{expiry.Add(-window), expiry} {
			if at.After(now) && (first.IsZero() || at.Before(first)) {
				first = at
			}
		}
	}
	if e.Bundle != nil {
		consider(e.Bundle.NotAfter)
	}
	if e.CRL != nil {
		consider(e.CRL.NextUpdate)
	}
	return first
}

// ExpiryWindow is the warning window a CAExpiryWarning option asks for
// (DefaultCAExpiryWarning when zero); false when warnings are off.
func ExpiryWindow(warning time.Duration) (time.Duration, bool) {
	if warning == 0 {
		warning = DefaultCAExpiryWarning
	}
	return warning, warning >= 0
}

// noteWindow is the warning window of an accepted policy that trusts a
// bundle; false when there is nothing to warn of.
func noteWindow(v *Verdict, cfg Config) (time.Duration, bool) {
	window, on := ExpiryWindow(cfg.CAExpiryWarning)
	return window, on && v.Accepted() && v.Trust.Bundle != nil
}
