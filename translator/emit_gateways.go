package translator

import (
	"fmt"
	"slices"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/envoy"
	"github.com/tlsplane/tlsplane/translator/fleet"
	"github.com/tlsplane/tlsplane/translator/gateway"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// gatewayOutput is one run of the Gateway rules, emitted: each fleet's
// resources, the statuses (Gateways' written after emission), and the
// route configurations served, for route patches.
type gatewayOutput struct {
	judged   *gateway.Result
	fleets   map[string]*FleetResources
	statuses GatewayAPIStatuses
	// tables are each Gateway's route configurations as last emitted.
	tables   map[types.NamespacedName][]*tableState
	warnings []string
	// ownClusters is, per fleet whose Gateway names a backend client
	// certificate, its own versions of the clusters its routes reach.
	ownClusters map[string]*fleet.Own
}

// tableState is one served route configuration, for route patches.
type tableState = fleet.Table

// translateGateways judges the Gateway API objects, emits each Gateway's
// plans, then writes the Gateway statuses with what Envoy would refuse.
func (e *emitter) translateGateways(in Inputs, ix *input.Index, cfg gateway.Config, stamp metav1.Time) gatewayOutput {
	res := gateway.Judge(in, ix, cfg, stamp)
	out := gatewayOutput{
		judged: res,
		fleets: map[string]*FleetResources{},
		statuses: GatewayAPIStatuses{
			GatewayClasses:  res.Classes,
			Gateways:        map[types.NamespacedName]gwv1.GatewayStatus{},
			ListenerSets:    map[types.NamespacedName]gwv1.ListenerSetStatus{},
			RouteStatusMaps: res.RouteStatusMaps,
		},
		tables: map[types.NamespacedName][]*tableState{},
	}
	for _, gs := range res.Gateways {
		refuseUnservableCertificate(gs, e.clientCertificateRules)
		fleet, tables, refused, warnings := emitFleet(gs, cfg.ListenerAddress, e.traffic.sessions, e.certificateLog)
		fleet.Reached = res.ReachedClusters(gs)
		out.fleets[gs.Fleet()] = fleet
		out.tables[gs.Name()] = tables
		out.warnings = append(out.warnings, warnings...)
		st := res.Status(gs, refused, stamp)
		out.statuses.Gateways[gs.Name()] = st
		for nn, ls := range res.ListenerSetStatuses(gs, st, refused, stamp) {
			out.statuses.ListenerSets[nn] = ls
		}
	}
	return out
}

// emitFleet builds a Gateway's listeners, route configurations and
// certificates. A listener Envoy would reject is left out, with its
// routes, so the rest is still served; refused says why, per socket, for
// the Gateway's status, and a warning names it. sessions are the
// clusters' session persistence, by name, every route table reads; log,
// when set, is every listener's certificate log.
func emitFleet(gs *gateway.Gateway, address string, sessions map[string]*plan.Session, log *plan.CertificateLog) (*FleetResources, []*tableState, map[gateway.Socket]string, []string) {
	fleet := &FleetResources{}
	var (
		tables   []*tableState
		refused  map[gateway.Socket]string
		warnings []string
	)
	secrets := map[string]bool{}
	clientCAs := map[string]bool{}
	for _, p := range gs.Ports(address) {
		p.Plan.CertificateLog = log
		l, err := envoy.Listener(p.Plan)
		routes := make([]*routev3.RouteConfiguration, 0, len(p.Tables))
		for _, tb := range p.Tables {
			tb.Plan.Sessions = sessions
			rc := envoy.RouteConfig(tb.Plan)
			if err == nil {
				err = rc.ValidateAll()
			}
			routes = append(routes, rc)
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("Gateway %s port %d: not served: %v", gs.Name(), p.Plan.Port, err))
			if refused == nil {
				refused = map[gateway.Socket]string{}
			}
			refused[p.Socket()] = err.Error()
			continue
		}
		for i, tb := range p.Tables {
			tables = append(tables, &tableState{Table: tb, RC: routes[i]})
		}
		fleet.Listeners = append(fleet.Listeners, l)
		fleet.Routes = append(fleet.Routes, routes...)
		for _, c := range p.Plan.Chains {
			for _, name := range c.CertSecrets {
				secrets[name] = true
			}
			if c.ClientValidation != nil {
				clientCAs[c.ClientValidation.CASecret] = true
			}
		}
		for _, c := range p.Plan.Streams {
			for _, name := range c.CertSecrets {
				secrets[name] = true
			}
		}
	}
	for _, name := range input.SortedNames(secrets) {
		chain, key := gs.Certificate(name)
		fleet.Secrets = append(fleet.Secrets, envoy.CertificateSecret(name, chain, key))
	}
	for name := range clientCAs {
		fleet.Secrets = append(fleet.Secrets, envoy.CASecret(gs.ClientCA(name)))
	}
	slices.SortFunc(fleet.Listeners, func(a, b *listenerv3.Listener) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(fleet.Routes, func(a, b *routev3.RouteConfiguration) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(fleet.Secrets, func(a, b *tlsv3.Secret) int { return strings.Compare(a.Name, b.Name) })
	return fleet, tables, refused, warnings
}

// refuseUnservableCertificate checks the Gateway's backend client
// certificate as Envoy would before its status is written: one Envoy
// would reject makes the backends its routes reach fail closed, and the
// Gateway's ResolvedRefs says why.
func refuseUnservableCertificate(gs *gateway.Gateway, rules func(*plan.ClientCertificate) error) {
	if cert, _ := gs.BackendClientCertificate(); cert != nil {
		if err := rules(cert); err != nil {
			gs.RefuseBackendClientCertificate(err.Error())
		}
	}
}
