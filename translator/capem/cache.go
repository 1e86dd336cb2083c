package capem

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Key identifies the object a CA bundle was read from: its UID, or its
// kind and namespace/name when it has none (directory source).
type Key struct {
	UID  types.UID
	Kind string
	Name types.NamespacedName
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

// Cache remembers Normalise's results across translations. The
// entries used by a translation are the only ones kept for the next, so an
// object deleted or changed is forgotten after one run.
type Cache struct {
	last, next map[Key]*caEntry
	// The same entries by the bytes they were parsed from: one bundle in
	// many objects (each namespace's kube-root-ca.crt, a CA a tool copies
	// into every namespace) is parsed once, not once an object.
	lastData, nextData map[string]*caEntry
}

func NewCache() *Cache {
	return &Cache{last: map[Key]*caEntry{}, next: map[Key]*caEntry{},
		lastData: map[string]*caEntry{}, nextData: map[string]*caEntry{}}
}

// Parse returns the normalised PEM of data, read from the object key at
// resourceVersion, and its earliest notAfter; c may be nil (no cache). The
// result is data itself when data is already canonical, so the common case
// copies nothing.
func Parse[T string | []byte](c *Cache, key Key, resourceVersion string, data T) (string, time.Time, error) {
	if c == nil {
		return normalisedPEM(data)
	}
	if e := c.next[key]; e != nil && e.resourceVersion == resourceVersion && e.data == string(data) {
		return e.pem, e.notAfter, e.err
	}
	if e := c.last[key]; e != nil && e.resourceVersion == resourceVersion && e.data == string(data) {
		c.next[key] = e
		c.nextData[e.data] = e
		return e.pem, e.notAfter, e.err
	}
	e := byData(c, data)
	if e != nil {
		// Another object's parse of the same bytes: its results hold
		// for this one, whose own version is what a later hit compares.
		e = &caEntry{resourceVersion: resourceVersion, data: e.data, pem: e.pem, notAfter: e.notAfter, err: e.err}
	} else {
		e = &caEntry{resourceVersion: resourceVersion, data: string(data)}
		e.pem, e.notAfter, e.err = normalisedPEM(e.data)
	}
	c.next[key] = e
	c.nextData[e.data] = e
	return e.pem, e.notAfter, e.err
}

// normalisedPEM is Normalise as a string.
func normalisedPEM[T string | []byte](data T) (string, time.Time, error) {
	pem, notAfter, err := Normalise([]byte(data))
	if err != nil {
		return "", notAfter, err
	}
	if s, ok := any(data).(string); ok && s == string(pem) {
		return s, notAfter, nil
	}
	return string(pem), notAfter, nil
}

// Done ends a translation: what it used is what the next one may reuse.
func (c *Cache) Done() {
	if c == nil {
		return
	}
	c.last, c.next = c.next, make(map[Key]*caEntry, len(c.next))
	c.lastData, c.nextData = c.nextData, make(map[string]*caEntry, len(c.nextData))
}

// byData is an entry parsed from data in this translation or the last.
func byData[T string | []byte](c *Cache, data T) *caEntry {
	if e := c.nextData[string(data)]; e != nil {
		return e
	}
	if e := c.lastData[string(data)]; e != nil {
		c.nextData[e.data] = e
		return e
	}
	return nil
}
