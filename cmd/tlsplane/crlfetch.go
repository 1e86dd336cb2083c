package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsplane/tlsplane/crlfetch"
	"github.com/tlsplane/tlsplane/pipeline"
)

// crlFetchFlags are the flags of fetching revocation lists from CRL
// distribution points (option tlsplane.io/crlDistributionPoints).
type crlFetchFlags struct {
	allow    string
	allowed  crlfetch.Allowed
	maxBytes int64
	timeout  time.Duration
	refresh  time.Duration
}

var crlFetchGroup = flagGroup{"Revocation lists from CRL distribution points", []string{"crl-fetch-allow", "crl-fetch-max-bytes", "crl-fetch-timeout", "crl-refresh-interval"}}

func registerCRLFetchFlags(fs *flag.FlagSet) *crlFetchFlags {
	f := &crlFetchFlags{}
	fs.StringVar(&f.allow, "crl-fetch-allow", "", "the schemes and hosts revocation lists may be fetched from, for policies with the option tlsplane.io/crlDistributionPoints: `http://host[:port],https://host[:port]...`; empty (the default) turns fetching off, and such policies are Invalid. No other host is ever asked, redirects included")
	fs.Int64Var(&f.maxBytes, "crl-fetch-max-bytes", crlfetch.DefaultMaxBytes, "the largest revocation list fetched, in bytes")
	fs.DurationVar(&f.timeout, "crl-fetch-timeout", crlfetch.DefaultTimeout, "how long one fetch of a revocation list may take, redirects included")
	fs.DurationVar(&f.refresh, "crl-refresh-interval", crlfetch.DefaultRefreshInterval, "the longest a fetched revocation list is kept before it is fetched again (it is fetched sooner, a tenth of its validity before its nextUpdate)")
	return f
}

func (f *crlFetchFlags) check() error {
	allowed, err := crlfetch.ParseAllowed(f.allow)
	if err != nil {
		return err
	}
	f.allowed = allowed
	switch {
	case f.maxBytes < 1:
		return fmt.Errorf("--crl-fetch-max-bytes %d: want at least 1", f.maxBytes)
	case f.timeout < 100*time.Millisecond:
		return fmt.Errorf("--crl-fetch-timeout %s: want at least 100ms", f.timeout)
	case f.refresh < time.Second:
		return fmt.Errorf("--crl-refresh-interval %s: want at least 1s", f.refresh)
	}
	return nil
}

// fetcher is nil when fetching is off.
func (f *crlFetchFlags) fetcher(reg prometheus.Registerer) *crlfetch.Fetcher {
	if len(f.allowed) == 0 {
		return nil
	}
	return crlfetch.New(crlfetch.Config{Allowed: f.allowed, MaxBytes: f.maxBytes, Timeout: f.timeout, RefreshInterval: f.refresh}, reg)
}

// crlFetcherOf is f as the pipeline's option: a nil *Fetcher must be a
// nil interface.
func crlFetcherOf(f *crlfetch.Fetcher) pipeline.CRLFetcher {
	if f == nil {
		return nil
	}
	return f
}
