// Package statuswriter writes the translator's BackendTLSPolicy statuses to
// the API server (the status subresource). It owns only this controller's
// ancestor entries, keeping every other controller's as they are on the live
// object; it writes only what differs, retries conflicts, rate-limits per
// policy, and, with leader election, writes only while it holds the Lease.
//
// It computes no status: that is the translator's job.
package statuswriter
