package input

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KindFetchedCRL is a revocation list tlsplane fetched from a CA's CRL
// distribution point (option tlsplane.io/crlDistributionPoints).
const KindFetchedCRL Kind = "FetchedCRL"

// FetchedCRL is what the fetcher knows of one distribution point: the last
// good list and the last attempt's error. Its Name is the URL (it has no
// namespace), so that sources and changes key it as any object. Like every
// input it is never mutated: a new fetch makes a new one.
type FetchedCRL struct {
	metav1.ObjectMeta
	// DER is the last good list, whose signature the fetcher verified
	// against a CA naming the URL; nil when none was ever fetched.
	DER []byte
	// FetchedAt is when DER was first fetched (fetching the same list again
	// makes no new input); ThisUpdate and NextUpdate are
	// the list's own (NextUpdate zero: the list names none).
	FetchedAt, ThisUpdate, NextUpdate time.Time
	// RefreshAt is when the fetcher fetches the list again.
	RefreshAt time.Time
	// Expired: NextUpdate passed without a newer list (the fetcher's
	// clock; the translator reads none).
	Expired bool
	// Error is the last attempt's failure ("" when it succeeded), since
	// ErrorSince.
	Error      string
	ErrorSince time.Time
}

// URL is the distribution point.
func (c *FetchedCRL) URL() string { return c.Name }
