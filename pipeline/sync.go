package pipeline

import (
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// sync is one pass that reports its statuses at once (the first one).
func (p *Pipeline) sync() {
	p.pass()
	if p.unreported {
		p.report()
	}
}

// pass translates the source's changes, publishes them, and keeps the
// statuses for report: only after publishing, so a status never claims
// more than is served, and only when the changes pause (the Run loop's
// statusDue), so a burst half applied never shows on a status.
func (p *Pipeline) pass() {
	start := time.Now()
	out, previous, whole, err := p.translateChanges()
	p.metrics.translationDuration.Observe(time.Since(start).Seconds())
	if err != nil {
		p.metrics.translationErrors.Inc()
		p.log.Error("translation failed; the served configuration is unchanged", "error", err)
		return
	}

	if p.opts.CRLFetcher != nil {
		p.opts.CRLFetcher.Want(out.CRLDistributionPoints)
	}
	changed, err := p.opts.Publisher.Publish(out)
	if err != nil {
		p.metrics.publishErrors.Inc()
		p.log.Error("publish failed; the previous snapshot stays served", "error", err)
		return
	}
	if changed {
		p.log.Debug("published", "clusters", len(out.Clusters), "endpoints", len(out.Endpoints),
			"secrets", len(out.Secrets), "policies", len(out.Statuses), "gatewayFleets", len(out.Fleets))
	} else {
		p.log.Debug("translation equals what is served; nothing published")
	}
	var refusals []translator.FleetRefusal
	if rp, ok := p.opts.Publisher.(RefusingPublisher); ok {
		refusals = rp.Refusals()
	}
	statuses := withRejections(out.Statuses, previous, p.rejections.list(), refusals, p.opts.Translator.ControllerName, p.opts.Now())
	for _, c := range p.opts.Conditions {
		if cc, ok := c.(ClusterConditions); ok {
			cc.SeeClusters(out.Clusters)
		}
		statuses = c.Apply(statuses, out.Origins, previous, p.opts.Translator.ControllerName, p.opts.Now())
	}
	// An Update that changed no status hands back the same map: the
	// gauges over every policy and CA need no walk then.
	if !sameMap(statuses, p.computed) {
		p.metrics.countPolicies(statuses, p.opts.Translator.ControllerName)
	}
	if !sameMap(out.CANotAfter, p.caNotAfter) {
		p.metrics.setCANotAfter(out.CANotAfter)
	}
	gatewayAPI := out.GatewayAPI
	for _, c := range p.opts.Conditions {
		if xc, ok := c.(XBackendConditions); ok && len(gatewayAPI.XBackends) > 0 {
			// An XBackend's clusters carry its own TLS: their handshakes,
			// and the certificates its backends present, are its.
			gatewayAPI.XBackends = xc.ApplyXBackends(gatewayAPI.XBackends, out.XBackendOrigins, p.gatewayAPI.XBackends,
				p.opts.Translator.ControllerName, p.opts.Now())
		}
	}
	if len(refusals) > 0 {
		// A refused fleet's Gateway says why, and names the other objects;
		// an XBackend whose cluster a fleet's Envoy build refuses says so.
		gatewayAPI = translator.RefuseGateways(gatewayAPI, refusals, metav1.NewTime(p.opts.Now().UTC().Truncate(time.Second)))
		gatewayAPI.XBackends = withBuildRefusals(gatewayAPI.XBackends, p.gatewayAPI.XBackends, refusals,
			p.opts.Translator.ControllerName, p.opts.Now())
	}
	p.computed, p.caNotAfter, p.gatewayAPI = statuses, out.CANotAfter, gatewayAPI
	if !p.unreported {
		p.unreported, p.unreportedSince = true, time.Now()
	}
	if whole && p.translator != nil {
		// Off the path of the next edit, which would otherwise build it.
		p.translator.Prepare()
	}
}

// report hands the last pass's statuses to the sink.
func (p *Pipeline) report() {
	p.unreported = false
	p.opts.Sink.Report(p.computed)
	if g, ok := p.opts.Sink.(GatewayAPISink); ok {
		g.ReportGatewayAPI(p.gatewayAPI)
	}
}

// translateChanges translates what changed when the source says what did
// and the pipeline's own Translator remembers the last pass; else the
// source's whole view. previous is what the statuses started from; whole
// says the source's whole view was translated.
func (p *Pipeline) translateChanges() (out translator.Output, previous translator.PreviousStatus, whole bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			// One bad object must not take down the server of a whole
			// fleet; what the translator half-updated is dropped.
			err = fmt.Errorf("translator panicked: %v", r)
			if p.translator != nil {
				p.translator.Forget()
			}
		}
	}()
	if cs, ok := p.opts.Source.(ChangeSource); ok && p.translator != nil {
		changes := cs.Changes()
		resync := p.whole || changes.Resync
		p.whole = false
		if !resync {
			if out, ok := p.translator.Update(changes.Objects, p.computed, p.opts.Now(), p.opts.Translator); ok {
				return out, p.computed, false, nil
			}
		}
	}
	in := p.opts.Source.Inputs()
	previous = previousStatus(in, p.computed)
	return p.opts.Translate(in, previous, p.opts.Now(), p.opts.Translator), previous, true, nil
}

// sameMap reports whether a and b are one map (not merely equal ones).
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return a != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
