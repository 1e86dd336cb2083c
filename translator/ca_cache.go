package translator

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// caKey identifies the object a CA bundle was read from: its UID, or its
// kind and namespace/name when it has none (directory source).
type caKey struct {
	uid  types.UID
	kind string
	name types.NamespacedName
}

// caEntry is one parsed bundle. The bytes it was parsed from decide a hit,
// not the resourceVersion alone: a relist may bring an equal version with
// other bytes in tests, and comparing a few KiB costs nothing next to
// parsing X.509.
type caEntry struct {
	resourceVersion string
	data            string
	pem             string
	notAfter        time.Time // the earliest certificate's
	err             error
}

// caCache remembers caCertificatesPEM's results across translations. The
// entries used by a translation are the only ones kept for the next, so an
// object deleted or changed is forgotten after one run.
type caCache struct {
	last, next map[caKey]*caEntry
}

func newCACache() *caCache {
	return &caCache{last: map[caKey]*caEntry{}, next: map[caKey]*caEntry{}}
}

// parseCA returns the normalised PEM of data, read from the object key at
// resourceVersion, and its earliest notAfter; c may be nil (no cache). The
// result is data itself when data is already canonical, so the common case
// copies nothing.
func parseCA[T string | []byte](c *caCache, key caKey, resourceVersion string, data T) (string, time.Time, error) {
	if c == nil {
		return normalisedPEM(data)
	}
	if e := c.next[key]; e != nil && e.resourceVersion == resourceVersion && e.data == string(data) {
		return e.pem, e.notAfter, e.err
	}
	if e := c.last[key]; e != nil && e.resourceVersion == resourceVersion && e.data == string(data) {
		c.next[key] = e
		return e.pem, e.notAfter, e.err
	}
	e := &caEntry{resourceVersion: resourceVersion, data: string(data)}
	e.pem, e.notAfter, e.err = normalisedPEM(e.data)
	c.next[key] = e
	return e.pem, e.notAfter, e.err
}

// normalisedPEM is caCertificatesPEM as a string.
func normalisedPEM[T string | []byte](data T) (string, time.Time, error) {
	pem, notAfter, err := caCertificatesPEM([]byte(data))
	if err != nil {
		return "", notAfter, err
	}
	if s, ok := any(data).(string); ok && s == string(pem) {
		return s, notAfter, nil
	}
	return string(pem), notAfter, nil
}

// done ends a translation: what it used is what the next one may reuse.
func (c *caCache) done() {
	if c == nil {
		return
	}
	c.last, c.next = c.next, make(map[caKey]*caEntry, len(c.next))
}
