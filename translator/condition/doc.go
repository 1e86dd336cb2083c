// Package condition owns the mechanics every status shares: messages
// capped to the API server's limit, observedGeneration and
// lastTransitionTime kept while a condition's status holds, and the key of
// a parent or ancestor reference. It knows no kind's rules and imports
// nothing of the translator.
package condition
