// Package crlfetch fetches the certificate revocation lists that policies
// with tlsplane.io/crlDistributionPoints want (the translator's
// Output.CRLDistributionPoints), keeps the last good one of each, and
// refreshes it before its nextUpdate. It owns the only HTTP requests
// tlsplane makes on a tenant's behalf, so every request is bounded: only
// the schemes and hosts the operator allows (--crl-fetch-allow), at most 3
// redirects and only to allowed hosts, a size limit, a timeout; a URL no
// policy wants is never fetched. A list is kept only when signed by a CA
// certificate of a policy naming its URL. It hands the translator plain
// input.FetchedCRL objects and judges nothing else.
package crlfetch
