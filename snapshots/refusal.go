package snapshots

import (
	"fmt"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/tlsplane/tlsplane/translator"
)

// A fault stays with its objects: a check failing for one fleet refuses
// that fleet (it keeps its snapshot, or has none), and a shared base that
// one namespace's clusters make inconsistent is served without them. The
// refusals are data (Refusals), which the pipeline writes on the objects'
// statuses and /debug/status shows; never a refusal of the translation.

// Refusals are the fleets (and namespaces of the shared base) the last
// publish refused, sorted by fleet then namespace, then the clusters
// withheld from fleets whose Envoy builds refuse them
// (ReasonEnvoyBuildRefuses, buildcheck.go), by fleet; read-only.
func (p *Publisher) Refusals() []translator.FleetRefusal {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buildRefusals) == 0 {
		return p.refusals
	}
	return append(slices.Clone(p.refusals), p.buildRefusalsList()...)
}

// setRefusals keeps refusals for Refusals and the gauge; p.mu is held.
func (p *Publisher) setRefusals(refusals []translator.FleetRefusal) {
	slices.SortStableFunc(refusals, func(a, b translator.FleetRefusal) int {
		if a.Fleet != b.Fleet {
			if a.Fleet < b.Fleet {
				return -1
			}
			return 1
		}
		switch {
		case a.Namespace < b.Namespace:
			return -1
		case a.Namespace > b.Namespace:
			return 1
		}
		return 0
	})
	// Logged once, when it starts or changes: a tenant broken for hours
	// must not fill the log at every publish.
	known := make(map[string]bool, len(p.refusals))
	for _, r := range p.refusals {
		known[r.Fleet+"\x00"+r.Namespace+"\x00"+r.Message] = true
	}
	for _, r := range refusals {
		if !known[r.Fleet+"\x00"+r.Namespace+"\x00"+r.Message] {
			p.log.Error("fleet refused; it keeps its previous snapshot", "fleet", r.Fleet, "namespace", r.Namespace,
				"reason", r.Reason, "error", r.Message)
		}
	}
	p.refusals = refusals
	p.metrics.refused.Set(float64(len(refusals)))
}

// isRefused: the last publish refused fleet; p.mu is held.
func (p *Publisher) isRefused(fleet string) bool {
	for _, r := range p.refusals {
		if r.Fleet == fleet {
			return true
		}
	}
	return false
}

// refusal is fleet refused by a publisher check: its Gateway (when it
// is a Gateway fleet) is the object at fault.
func (p *Publisher) refusal(out translator.Output, fleet string, err error) translator.FleetRefusal {
	r := translator.FleetRefusal{Fleet: fleet, Reason: translator.ReasonFleetNotServable, Message: err.Error()}
	if gw, ok := translator.GatewayOfFleet(fleet); ok && out.Fleets[fleet] != nil {
		r.Objects = []translator.ObjectRef{{Kind: translator.KindGateway, Name: gw}}
	}
	return r
}

// containedWhole is wholeSnapshot, or, when the whole translation's
// shared resources are inconsistent, those of every namespace whose
// clusters are consistent on their own: one namespace's clusters cannot
// keep the others' from being served. p.mu is held.
// A fleet refused later keeps its own snapshot, so nothing undoes the
// whole (wholeSnapshot's undo is for a publish that sets nothing).
func (p *Publisher) containedWhole(out translator.Output) (whole *servedSnapshot, touched map[string][]string, refusals []translator.FleetRefusal, err error) {
	whole, touched, _, err = p.wholeSnapshot(out)
	if err == nil {
		return whole, touched, nil, nil
	}
	first := err
	if p.patch != nil {
		// A patch failed: build the whole anew before leaving anything out.
		p.patch = nil
		if whole, touched, _, err = p.wholeSnapshot(out); err == nil {
			return whole, touched, nil, nil
		}
	}
	p.patch = nil
	byNamespace := map[string][]int{}
	for i, c := range out.Clusters {
		ns := out.ClusterNamespaces[c.GetName()]
		byNamespace[ns] = append(byNamespace[ns], i)
	}
	keep := map[int]bool{}
	var refusedNS []string
	for _, ns := range sortedNames(byNamespace) {
		res, err := clustersWithTheirs(p.digests, out, byNamespace[ns])
		if err == nil {
			_, err = newSnapshot(p.digests, res)
		}
		if err != nil {
			refusedNS = append(refusedNS, ns)
			refusals = append(refusals, translator.FleetRefusal{Namespace: ns, Reason: translator.ReasonFleetNotServable,
				Message: fmt.Sprintf("namespace %q: its clusters keep their previous configuration: %v", ns, err)})
			continue
		}
		for _, i := range byNamespace[ns] {
			keep[i] = true
		}
	}
	if len(refusals) == 0 {
		// What failed is read by no cluster: it is left out, and said.
		refusals = append(refusals, translator.FleetRefusal{Reason: translator.ReasonFleetNotServable,
			Message: fmt.Sprintf("left out of every fleet: %v", first)})
	}
	var kept []int
	for i := range out.Clusters {
		if keep[i] {
			kept = append(kept, i)
		}
	}
	res, err := clustersWithTheirs(p.digests, out, kept)
	if err != nil {
		return nil, nil, nil, err
	}
	if previous := p.previousOf(refusedNS); previous != nil {
		// A refused namespace keeps what it was served, if that still
		// fits with the rest.
		merged := mergeResources(res, *previous)
		if whole, err = newSnapshot(p.digests, merged); err == nil {
			return whole, nil, refusals, nil
		}
	}
	if whole, err = newSnapshot(p.digests, res); err != nil {
		return nil, nil, nil, err
	}
	return whole, nil, refusals, nil
}

// previousOf is what the last published translation served of the
// clusters of namespaces (from the last output served whole), nil when
// nothing; p.mu is held.
func (p *Publisher) previousOf(namespaces []string) *fleetResources {
	last := p.consistent
	if last == nil || len(namespaces) == 0 {
		return nil
	}
	var indexes []int
	for i, c := range last.Clusters {
		if slices.Contains(namespaces, last.ClusterNamespaces[c.GetName()]) {
			indexes = append(indexes, i)
		}
	}
	res, err := clustersWithTheirs(p.digests, *last, indexes)
	if err != nil || len(res.clusters) == 0 {
		return nil
	}
	return &res
}

// mergeResources is a and b by name, sorted; a's resource wins a name
// both have.
func mergeResources(a, b fleetResources) fleetResources {
	return fleetResources{
		clusters:  mergeByName(a.clusters, b.clusters, (*clusterv3.Cluster).GetName),
		endpoints: mergeByName(a.endpoints, b.endpoints, (*endpointv3.ClusterLoadAssignment).GetClusterName),
		secrets:   mergeByName(a.secrets, b.secrets, (*tlsv3.Secret).GetName),
	}
}

func mergeByName[T any](a, b []T, name func(T) string) []T {
	out := slices.Clone(a)
	have := make(map[string]bool, len(a))
	for _, r := range a {
		have[name(r)] = true
	}
	for _, r := range b {
		if !have[name(r)] {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(x, y T) int { return strings.Compare(name(x), name(y)) })
	return out
}

// clustersWithTheirs is out.Clusters[indexes] (ascending), with the load
// assignments and secrets they read, in out's order.
func clustersWithTheirs(d *digests, out translator.Output, indexes []int) (fleetResources, error) {
	clusters := make([]*clusterv3.Cluster, len(indexes))
	for i, index := range indexes {
		clusters[i] = out.Clusters[index]
	}
	return withWhatTheyRead(d, out, clusters)
}
