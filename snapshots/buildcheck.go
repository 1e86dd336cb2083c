package snapshots

import (
	"fmt"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlsplane/tlsplane/translator"
)

// A cluster whose TLS parameters one of a fleet's connected Envoy builds
// cannot accept (envoycaps.go) is not served to that fleet: the fleet
// keeps the version it was served, when its builds accept that one, or
// does not get the cluster. Envoy would NACK the whole CDS update, again
// at every publish, and stop taking every other change. Each such cluster
// is a refusal (ReasonEnvoyBuildRefuses) naming the fleet, the build, the
// value and the option, with the policies and XBackends that made the
// cluster; the pipeline sets it on their status. A fleet whose builds are
// not known yet (no Envoy connected, or one that does not say) is served
// everything: Envoy decides, and a NACK says what it refused.
//
// The fleet's routes keep naming a withheld cluster: Envoy answers them
// 503 (no cluster), as for any cluster not served, and the consistency
// check covers what the fleet is served (its load assignments and
// secrets go with the clusters).

// ReasonEnvoyBuildRefuses is a FleetRefusal's reason when a fleet's Envoy
// build cannot take a cluster's TLS parameters.
const ReasonEnvoyBuildRefuses = translator.ReasonEnvoyBuildRefuses

// SetFleetBuilds records the Envoy builds connected in fleet (any order;
// none: the fleet's builds are unknown) and serves the fleet again when
// they change what it can take. The xDS server calls it before a new
// node's stream reads the fleet's feed, so that node is never sent what
// its build refuses.
func (p *Publisher) SetFleetBuilds(fleet string, builds []EnvoyBuild) {
	builds = slices.Clone(builds)
	slices.SortFunc(builds, compareBuilds)
	builds = slices.Compact(builds)
	p.mu.Lock()
	if slices.Equal(p.builds[fleet], builds) {
		p.mu.Unlock()
		return
	}
	if len(builds) == 0 {
		delete(p.builds, fleet)
	} else {
		p.builds[fleet] = builds
	}
	before := p.buildRefusals[fleet]
	st := p.fleets[fleet]
	if st == nil {
		delete(p.buildRefusals, fleet) // its last stream closed
	}
	if st != nil && st.snapshot != nil && p.last != nil && !p.isRefused(fleet) {
		snap, _, err := p.snapshotFor(*p.last, fleet, p.whole, nil)
		switch {
		case err != nil:
			p.log.Error("fleet snapshot rejected", "fleet", fleet, "error", err)
		case !sameVersions(st.snapshot, snap):
			p.set(fleet, snap, nil)
		}
	}
	changed := !slices.EqualFunc(before, p.buildRefusals[fleet], sameRefusal)
	p.mu.Unlock()
	if changed && p.opts.OnRefusalsChanged != nil {
		p.opts.OnRefusalsChanged()
	}
}

// FleetBuilds are the Envoy builds connected in fleet, sorted; nil when
// none is known.
func (p *Publisher) FleetBuilds(fleet string) []EnvoyBuild {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.builds[fleet])
}

// withholdForBuilds is base without the clusters fleet's builds refuse
// (their previous version kept when accepted), or nil when it has none;
// it sets the fleet's build refusals. p.mu is held.
func (p *Publisher) withholdForBuilds(out translator.Output, fleet string, whole, base *servedSnapshot, touched map[string][]string) (*servedSnapshot, error) {
	builds := p.builds[fleet]
	if len(builds) == 0 || whole == nil {
		p.noteBuildRefusals(fleet, nil)
		return nil, nil
	}
	tuned := p.tunedClusters(whole, touched)
	baseClusters := base.GetResources(resource.ClusterType)
	refused := map[string]string{}
	for _, name := range sortedNames(tuned) {
		r, ok := baseClusters[name]
		if !ok {
			continue
		}
		dg, err := p.digests.of(r)
		if err != nil {
			return nil, err
		}
		if why := buildsRefusal(builds, dg.tls); why != "" {
			refused[name] = why
		}
	}
	if len(refused) == 0 {
		p.noteBuildRefusals(fleet, nil)
		return nil, nil
	}
	var prev *servedSnapshot
	if st := p.fleets[fleet]; st != nil {
		prev = st.snapshot
	}
	// A Gateway fleet's own version of a cluster (its client certificate)
	// replaces the base's: keeping the base's previous version would let
	// the refused own version in, so such a cluster is only left out.
	var own map[string]bool
	if res := out.Fleets[fleet]; res != nil && len(res.Clusters) > 0 {
		own = make(map[string]bool, len(res.Clusters))
		for _, c := range res.Clusters {
			own[c.GetName()] = true
		}
	}
	snap, err := p.withoutRefused(base, prev, refused, own, builds)
	if err != nil {
		return nil, err
	}
	refusals := make([]translator.FleetRefusal, 0, len(refused))
	for _, name := range sortedNames(refused) {
		refusals = append(refusals, translator.FleetRefusal{
			Fleet: fleet, Reason: ReasonEnvoyBuildRefuses, Objects: originsOf(out, name),
			Message: fmt.Sprintf("fleet %s: %s; cluster %s is not served to the fleet", fleet, refused[name], name),
		})
	}
	p.noteBuildRefusals(fleet, refusals)
	return snap, nil
}

// noteBuildRefusals makes refusals fleet's build refusals, logged when
// they change; p.mu is held.
func (p *Publisher) noteBuildRefusals(fleet string, refusals []translator.FleetRefusal) {
	if slices.EqualFunc(p.buildRefusals[fleet], refusals, sameRefusal) {
		return
	}
	if len(refusals) == 0 {
		delete(p.buildRefusals, fleet)
		p.log.Info("no cluster withheld from the fleet for its Envoy builds", "fleet", fleet)
		return
	}
	p.buildRefusals[fleet] = refusals
	for _, r := range refusals {
		p.log.Warn("cluster withheld from a fleet: its Envoy build cannot take the cluster's TLS parameters", "fleet", fleet, "error", r.Message)
	}
}

// buildsRefusal is the first of builds (sorted) that refuses t, said as
// "Envoy 1.40.0 BoringSSL-FIPS does not accept …"; "" when all accept it.
func buildsRefusal(builds []EnvoyBuild, t *clusterTLS) string {
	for _, b := range builds {
		if why := b.refusal(t); why != "" {
			return b.String() + " does not accept " + why
		}
	}
	return ""
}

// withoutRefused is base without the refused clusters, each replaced by
// the version prev served when builds accept it (but those named in own),
// with the load
// assignments and secrets the kept clusters read (base's where it has
// them, else prev's): consistent, as any snapshot. p.mu is held.
func (p *Publisher) withoutRefused(base, prev *servedSnapshot, refused map[string]string, own map[string]bool, builds []EnvoyBuild) (*servedSnapshot, error) {
	var res fleetResources
	// What the kept clusters read, and from which snapshot.
	assignments, secrets := map[string]*servedSnapshot{}, map[string]*servedSnapshot{}
	keep := func(from *servedSnapshot, c *clusterv3.Cluster) error {
		dg, err := p.digests.of(c)
		if err != nil {
			return err
		}
		res.clusters = append(res.clusters, c)
		if isEDS(c) && assignments[edsName(c)] == nil {
			assignments[edsName(c)] = from
		}
		for _, s := range dg.secrets {
			if secrets[s] == nil {
				secrets[s] = from
			}
		}
		return nil
	}
	clusters := base.GetResources(resource.ClusterType)
	for _, name := range sortedNames(clusters) {
		c := clusters[name].(*clusterv3.Cluster)
		if _, no := refused[name]; !no {
			if err := keep(base, c); err != nil {
				return nil, err
			}
			continue
		}
		if prev == nil || own[name] {
			continue
		}
		old, ok := prev.GetResources(resource.ClusterType)[name]
		if !ok {
			continue
		}
		dg, err := p.digests.of(old)
		if err != nil {
			return nil, err
		}
		if buildsRefusal(builds, dg.tls) == "" && !readsKey(prev, dg) {
			if err := keep(prev, old.(*clusterv3.Cluster)); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(res.clusters, func(a, b *clusterv3.Cluster) int { return strings.Compare(a.GetName(), b.GetName()) })
	for _, name := range sortedNames(assignments) {
		from := base
		if _, ok := base.GetResources(resource.EndpointType)[name]; !ok {
			from = assignments[name]
		}
		if r, ok := from.GetResources(resource.EndpointType)[name]; ok {
			res.endpoints = append(res.endpoints, r.(*endpointv3.ClusterLoadAssignment))
		}
	}
	for _, name := range sortedNames(secrets) {
		from := base
		if _, ok := base.GetResources(resource.SecretType)[name]; !ok {
			from = secrets[name]
		}
		if r, ok := from.GetResources(resource.SecretType)[name]; ok {
			res.secrets = append(res.secrets, r.(*tlsv3.Secret))
		}
	}
	return newSnapshot(p.digests, res)
}

// readsKey: the cluster reads a secret of from that holds a private key
// (a client certificate): a previous version is kept only with trust
// material, which no other rule of the fleet's scope governs.
func readsKey(from *servedSnapshot, dg *digest) bool {
	for _, name := range dg.secrets {
		if r, ok := from.GetResources(resource.SecretType)[name]; ok && holdsKey(r) {
			return true
		}
	}
	return false
}

// originsOf are the policies and XBackends that made cluster, as the
// objects of its refusal.
func originsOf(out translator.Output, cluster string) []translator.ObjectRef {
	var refs []translator.ObjectRef
	for _, nn := range out.Origins[cluster] {
		refs = append(refs, translator.ObjectRef{Kind: translator.KindBackendTLSPolicy, Name: nn})
	}
	for _, nn := range out.XBackendOrigins[cluster] {
		refs = append(refs, translator.ObjectRef{Kind: translator.KindXBackend, Name: nn})
	}
	return refs
}

// sameRefusal: a and b say the same.
func sameRefusal(a, b translator.FleetRefusal) bool {
	return a.Fleet == b.Fleet && a.Namespace == b.Namespace && a.Reason == b.Reason && a.Message == b.Message &&
		slices.Equal(a.Objects, b.Objects)
}

// buildRefusalsList is every fleet's build refusals, by fleet; p.mu is
// held.
func (p *Publisher) buildRefusalsList() []translator.FleetRefusal {
	var out []translator.FleetRefusal
	for _, fleet := range sortedNames(p.buildRefusals) {
		out = append(out, p.buildRefusals[fleet]...)
	}
	return out
}

// tunedIndex names the whole's clusters whose TLS parameters a build may
// refuse (a profile, a list of curves, ciphers or signature algorithms, a
// version below TLS 1.2), kept up to date with each publish's touched
// clusters: a fleet's check costs what is tuned, not every cluster.
type tunedIndex struct {
	whole *servedSnapshot
	names map[string]bool
}

// tunedClusters is the index for whole; p.mu is held.
func (p *Publisher) tunedClusters(whole *servedSnapshot, touched map[string][]string) map[string]bool {
	ix := &p.tuned
	switch {
	case ix.whole == whole:
	case touched != nil && ix.whole != nil && ix.whole == p.whole:
		for _, name := range touched[resource.ClusterType] {
			delete(ix.names, name)
			if r, ok := whole.byType[resource.ClusterType][name]; ok {
				if dg, err := p.digests.of(r); err == nil && dg.tls != nil {
					ix.names[name] = true
				}
			}
		}
		ix.whole = whole
	default:
		ix.whole, ix.names = whole, map[string]bool{}
		for name, r := range whole.byType[resource.ClusterType] {
			if dg, err := p.digests.of(r); err == nil && dg.tls != nil {
				ix.names[name] = true
			}
		}
	}
	return ix.names
}
