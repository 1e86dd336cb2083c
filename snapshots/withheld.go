package snapshots

import (
	"slices"
	"strings"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsplane/tlsplane/translator"
)

// A cluster that presents a BackendTLSPolicy's client certificate
// (tlsplane.io/clientCertificateRef) reads its private key. A fleet without
// a Gateway, which --fleet-namespaces grants no namespace, is served every
// cluster but those: never such a cluster without its key, nor in
// plaintext. Which ones are withheld is logged when it changes, with the
// policies that made them, and shown by WithheldClusters.

// withheldShown caps the names a log line lists.
const withheldShown = 20

// logWithheld logs the clusters the keyless scope withholds, when they
// changed since last logged; p.mu is held.
func (p *Publisher) logWithheld(out translator.Output) {
	if p.keyless == nil {
		return
	}
	names := sortedNames(p.keyless.withheld)
	key := strings.Join(names, "\n")
	if key == p.withheld {
		return
	}
	p.withheld = key
	if len(names) == 0 {
		p.log.Info("no cluster withheld from fleets without a Gateway or a --fleet-namespaces grant")
		return
	}
	var policies []string
	for _, name := range names {
		for _, policy := range out.Origins[name] {
			policies = append(policies, policy.String())
		}
	}
	slices.Sort(policies)
	policies = slices.Compact(policies)
	shown := names
	if len(shown) > withheldShown {
		shown = shown[:withheldShown]
	}
	p.log.Warn("clusters withheld from fleets without a Gateway or a --fleet-namespaces grant: they present a policy client certificate, whose private key only a granted fleet is served",
		"count", len(names), "clusters", shown, "policies", policies)
}

// WithheldClusters are the clusters a fleet without a Gateway and without
// a --fleet-namespaces grant is not served, because they read a private
// key, sorted; nil when no such fleet is connected or none is withheld.
func (p *Publisher) WithheldClusters() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.keyless == nil {
		return nil
	}
	return sortedNames(p.keyless.withheld)
}

// withheldGauge counts WithheldClusters at each scrape: a fleet's stream
// opening or closing changes them between publishes.
func (p *Publisher) withheldGauge() prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tlsplane_snapshot_withheld_clusters",
		Help: "Clusters not served to the connected fleets without a Gateway and without a --fleet-namespaces grant, because they present a policy client certificate whose private key only a granted fleet is served; /debug/status lists them.",
	}, func() float64 { return float64(len(p.WithheldClusters())) })
}

// keyIndex names the whole's secrets that hold a private key, kept up to
// date with each publish's touched secrets: while there is none (no
// policy presents a client certificate), a fleet without a Gateway is
// served the whole itself, and no scope is kept for it.
type keyIndex struct {
	whole *servedSnapshot
	keys  map[string]bool
}

// anyKeys reports whether whole serves a private key; p.mu is held.
func (p *Publisher) anyKeys(whole *servedSnapshot, touched map[string][]string) bool {
	ix := &p.keyIndex
	switch {
	case ix.whole == whole:
	case touched != nil && ix.whole != nil && ix.whole == p.whole:
		for _, name := range touched[resource.SecretType] {
			r, ok := whole.byType[resource.SecretType][name]
			if key := ok && holdsKey(r); key != ix.keys[name] {
				if key {
					ix.keys[name] = true
				} else {
					delete(ix.keys, name)
				}
			}
		}
		ix.whole = whole
	default:
		ix.whole, ix.keys = whole, map[string]bool{}
		for name, r := range whole.byType[resource.SecretType] {
			if holdsKey(r) {
				ix.keys[name] = true
			}
		}
	}
	return len(ix.keys) > 0
}
