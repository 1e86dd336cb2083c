package kube

// admissionAllowlist holds the disagreements TestAdmissionCorpus accepts,
// each with its reason: "<channel> <case name>" for tlsplane against the
// API server, "source <channel> <case name>" for the API server against
// the case's source. Anything else the test finds fails it.
var admissionAllowlist = map[string]string{}
