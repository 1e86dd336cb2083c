// Command coredns is CoreDNS with only the plugins the Gateway API
// conformance suite's base manifests configure (errors, log, forward,
// whoami): the real server, built from its module, for the node agent to
// run as the suite's coredns Pod. A module of its own so that CoreDNS's
// dependency versions never move kube-apiserver's.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/whoami"
)

// In the order of CoreDNS's plugin.cfg, which is the order they run in.
func init() { dnsserver.Directives = []string{"errors", "log", "forward", "whoami"} }

func main() { coremain.Run() }
