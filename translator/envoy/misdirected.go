package envoy

import (
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// misdirectedVirtualHostName names the virtual host answering 421: '~'
// is no hostname character and sorts after all of them, so the virtual
// host stays last among those sorted by hostname (route patches look
// them up by name) and never takes a hostname's name.
const misdirectedVirtualHostName = "~misdirected"

// misdirectedVirtualHost answers 421 Misdirected Request for the other
// HTTPS listeners' hostnames on a chain's route configuration.
//
// Each HTTPS listener is a filter chain chosen by SNI with a route
// configuration of its own, so a request that a client sent on a
// connection made for another name (HTTP/2 connection reuse) lands here.
// Envoy picks a virtual host by the most specific domain (exact, then the
// longest `*.` suffix, then `*`), the order the Gateway API ranks a port's
// listener hostnames in: a request whose :authority another listener
// covers more specifically than this chain's virtual hosts do meets this
// virtual host, and one no listener covers meets none (404). Comparing
// SNI with :authority instead would refuse what the spec allows: they may
// differ when one listener covers both (a wildcard, or the catch-all
// chosen for an unknown SNI).
func misdirectedVirtualHost(domains []string) *routev3.VirtualHost {
	return &routev3.VirtualHost{
		Name:    misdirectedVirtualHostName,
		Domains: domains,
		Routes: []*routev3.Route{{
			Name:   "misdirected",
			Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
			Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 421}},
		}},
	}
}
