// Package capem owns CA bundle bytes: checking that a caCertificateRef's
// data is PEM certificates, normalising it, finding its earliest expiry,
// and the cache that parses each object's bundle once per resourceVersion.
// It knows nothing of policies and imports nothing of the translator.
package capem
