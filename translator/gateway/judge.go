package gateway

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/gatewaytls"
	"github.com/tlsplane/tlsplane/translator/infrastructure"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/route"
)

// Config is what the Gateway API rules read of the control plane's
// options.
type Config struct {
	// ControllerName is the GatewayClasses' controllerName we own, and
	// the controllerName of the route parents we write.
	ControllerName gwv1.GatewayController
	// ListenerAddress is the IP every Envoy listener binds.
	ListenerAddress string
	// Channel is the Gateway API release channel of the cluster's CRDs:
	// it decides which features our GatewayClasses claim.
	Channel Channel
	// Provisioning, set when tlsplane provisions Gateways, adds to each
	// Gateway's status whether it is provisioned and which
	// spec.infrastructure keys are dropped.
	Provisioning *infrastructure.Policy
}

// Result is one run of the Gateway API rules: each Gateway of ours as
// judged (its listeners and the routes attached to them), the statuses of
// classes and routes, and which Gateways reach each Service port. Gateway
// statuses are not in it: they depend on what the emitter refuses
// (Status). PatchRoutes changes it in place for a change to HTTPRoutes
// and GRPCRoutes alone.
type Result struct {
	Classes map[string]gwv1.GatewayClassStatus
	// The statuses of the routes of every kind, a map each.
	input.RouteStatusMaps
	// Gateways are the Gateways of our accepted classes, sorted by
	// namespace/name.
	Gateways []*Gateway
	// Reach lists, per Service port, the Gateways whose accepted routes
	// send traffic to it (sorted): the ancestors of its policies.
	Reach map[input.ServicePort][]types.NamespacedName

	cfg Config
	// memo is what the rules judged, kept so that a route change can be
	// applied to it (PatchRoutes); nil when there is nothing to patch.
	memo *memo
}

// Judge applies the GatewayClass, Gateway, ListenerSet and route rules to
// the classes whose controllerName is ours: package route judges each
// route, and Judge attaches it to the listeners of ours it names.
func Judge(in input.Inputs, ix *input.Index, cfg Config, now metav1.Time) *Result {
	res := &Result{
		Classes:         map[string]gwv1.GatewayClassStatus{},
		RouteStatusMaps: input.NewRouteStatusMaps(),
		Reach:           map[input.ServicePort][]types.NamespacedName{},
		cfg:             cfg,
	}
	if len(in.GatewayClasses) == 0 {
		return res
	}
	g := newGatewayIndex(in, ix)
	accepted := map[string]bool{}
	for _, name := range input.SortedNames(g.classes) {
		c := g.classes[name]
		if c.Spec.ControllerName != cfg.ControllerName {
			continue
		}
		st, ok := gatewayClassStatus(c, cfg.Channel, now)
		res.Classes[name] = st
		accepted[name] = ok
	}
	gateways := map[types.NamespacedName]*Gateway{}
	certs := gatewaytls.Certificates{}
	for _, gw := range g.gateways {
		if !accepted[string(gw.Spec.GatewayClassName)] {
			continue
		}
		frontend := gatewaytls.JudgeFrontend(gw, ix, g.grants)
		gs := &Gateway{gw: gw, nn: input.NameOf(gw.Namespace, gw.Name), listeners: judgeListeners(gw, ix, g, certs, frontend), certs: certs,
			backend: gatewaytls.JudgeBackendCertificate(gw, ix, g.grants), frontend: frontend}
		gs.sets = judgeListenerSets(gs, ix, g, certs)
		gateways[gs.nn] = gs
		res.Gateways = append(res.Gateways, gs)
	}
	if len(res.Gateways) == 0 {
		return res
	}
	m := &memo{g: g, gateways: gateways, routes: map[route.Key]routeEntry{},
		reach:    map[input.ServicePort]map[types.NamespacedName]int{},
		clusters: map[types.NamespacedName]map[string]int{},
		xreach:   map[types.NamespacedName]map[types.NamespacedName]int{}}
	judged := make([]*route.Route, 0, len(g.routes)+len(g.grpcRoutes))
	for _, r := range g.routes {
		judged = append(judged, route.JudgeHTTPRoute(r, ix, g.grants))
	}
	for _, r := range g.grpcRoutes {
		judged = append(judged, route.JudgeGRPCRoute(r, ix, g.grants))
	}
	for _, r := range g.streams {
		judged = append(judged, route.JudgeStream(r, ix, g.grants))
	}
	var entries []routeEntry
	for _, rs := range judged {
		if parents := attachRoute(rs, gateways, g); len(parents) > 0 {
			entries = append(entries, routeEntry{rs: rs, parents: parents})
		}
	}
	if len(g.grpcRoutes) > 0 {
		rejectConflicts(entries)
	}
	for _, e := range entries {
		res.setStatus(e.rs, route.Status(e.rs, e.parents, cfg.ControllerName, now))
		m.routes[e.rs.Key()] = e
		m.countReach(e, 1, nil)
		m.countClusters(e, 1, nil)
	}
	for b := range m.reach {
		res.Reach[b] = m.reachOf(b)
	}
	res.memo = m
	return res
}

// Gateway is one Gateway of ours as judged.
type Gateway struct {
	gw *gwv1.Gateway
	nn types.NamespacedName
	// listeners are the Gateway's own; sets its ListenerSets, in
	// precedence order (allListeners merges them).
	listeners []*listenerState
	sets      []*listenerSet
	// certs are the listener certificates of this run, by SDS name.
	certs gatewaytls.Certificates
	// backend is spec.tls.backend's client certificate; nil without one.
	backend *gatewaytls.BackendCertificate
	// frontend is spec.tls.frontend's client certificate validations; nil
	// without any.
	frontend *gatewaytls.Frontend
}

// Name is the Gateway's namespace/name.
func (gs *Gateway) Name() types.NamespacedName { return gs.nn }

// Fleet is the fleet that serves the Gateway.
func (gs *Gateway) Fleet() string { return plan.GatewayFleet(gs.nn.Namespace, gs.nn.Name) }

// BackendClientCertificate is the certificate the Gateway presents to
// the TLS backends its routes reach. configured is false when the Gateway
// names none; cert is nil when it names one that cannot be used, and then
// those backends must fail closed rather than be reached without it.
func (gs *Gateway) BackendClientCertificate() (cert *plan.ClientCertificate, configured bool) {
	if gs.backend == nil {
		return nil, false
	}
	return gs.backend.Cert, true
}

// RefuseBackendClientCertificate marks the Gateway's certificate as one
// Envoy would reject (why): the TLS backends its routes reach fail closed,
// and its ResolvedRefs names the field, the Secret and why.
func (gs *Gateway) RefuseBackendClientCertificate(why string) {
	ref := gs.gw.Spec.TLS.Backend.ClientCertificateRef
	nn := input.NameOf(gs.gw.Namespace, string(ref.Name))
	if ref.Namespace != nil {
		nn.Namespace = string(*ref.Namespace)
	}
	gs.backend = &gatewaytls.BackendCertificate{Reason: gwv1.GatewayReasonInvalidClientCertificateRef,
		Message: fmt.Sprintf("%s: Secret %s: Envoy would reject it: %s", gatewaytls.BackendCertificateField, nn, why)}
}

// setStatus records a route's status under its kind.
func (r *Result) setStatus(rs *route.Route, st gwv1.RouteStatus) {
	if rk, ok := input.RouteKindOf(rs.Kind); ok {
		rk.Statuses(&r.RouteStatusMaps).Set(rs.Name, st)
	}
}
