// Command coredns is CoreDNS with only the plugins the e2e suites
// configure: errors, log, forward and whoami for the Gateway API
// conformance suite's base manifests (the node agent runs it as the suite's
// coredns Pod), and bind and hosts for e2e/harness's StartDNS, a server on
// loopback only whose A and AAAA records a test writes and changes to steer
// a real Envoy's DNS. The real
// server, built from its module; a module of its own so that CoreDNS's
// dependency versions never move kube-apiserver's.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/whoami"
)

// In the order of CoreDNS's plugin.cfg, which is the order they run in.
func init() { dnsserver.Directives = []string{"bind", "errors", "log", "hosts", "forward", "whoami"} }

func main() { coremain.Run() }
