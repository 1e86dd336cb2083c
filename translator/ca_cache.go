package translator

import "k8s.io/apimachinery/pkg/types"

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
	pem             []byte
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

// parse returns the normalised PEM of data, read from the object key at
// resourceVersion. A ConfigMap's string is compared and kept without a copy.
func parseCA[T string | []byte](c *caCache, key caKey, resourceVersion string, data T) ([]byte, error) {
	if c == nil {
		return caCertificatesPEM([]byte(data))
	}
	if e := c.next[key]; e != nil && e.resourceVersion == resourceVersion && e.data == string(data) {
		return e.pem, e.err
	}
	if e := c.last[key]; e != nil && e.resourceVersion == resourceVersion && e.data == string(data) {
		c.next[key] = e
		return e.pem, e.err
	}
	pem, err := caCertificatesPEM([]byte(data))
	c.next[key] = &caEntry{resourceVersion: resourceVersion, data: string(data), pem: pem, err: err}
	return pem, err
}

// done ends a translation: what it used is what the next one may reuse.
func (c *caCache) done() {
	if c == nil {
		return
	}
	c.last, c.next = c.next, make(map[caKey]*caEntry, len(c.next))
}
