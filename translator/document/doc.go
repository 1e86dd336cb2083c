// Package document renders a translation as the document `tlsplane
// translate` prints and golden files hold: Envoy's JSON mapping of every
// resource, and the input objects with their computed status. It is a
// view of the translator's Output; nothing else imports it.
package document
