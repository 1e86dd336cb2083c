package pipeline

import (
	"fmt"
	"time"

	"github.com/tlsplane/tlsplane/translator"
)

// sync is one pass: translate the source's current view, publish it, and
// only then report statuses, so a status never claims more than is served.
func (p *Pipeline) sync() {
	in := p.opts.Source.Inputs()
	previous := previousStatus(in, p.computed)

	start := time.Now()
	out, err := p.translate(in, previous)
	p.metrics.translationDuration.Observe(time.Since(start).Seconds())
	if err != nil {
		p.metrics.translationErrors.Inc()
		p.log.Error("translation failed; the served configuration is unchanged", "error", err)
		return
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
	statuses := withRejections(out.Statuses, previous, p.rejections.list(), p.opts.Translator.ControllerName, p.opts.Now())
	if p.opts.Conditions != nil {
		statuses = p.opts.Conditions.Apply(statuses, out.Origins, previous, p.opts.Translator.ControllerName, p.opts.Now())
	}
	p.computed = statuses
	p.metrics.countPolicies(statuses, p.opts.Translator.ControllerName)
	p.metrics.setCANotAfter(out.CANotAfter)
	p.opts.Sink.Report(statuses)
	if g, ok := p.opts.Sink.(GatewayAPISink); ok {
		g.ReportGatewayAPI(out.GatewayAPI)
	}
}

// translate runs the translator, turning a panic into an error: one bad
// object must not take down the server of a whole fleet.
func (p *Pipeline) translate(in translator.Inputs, previous translator.PreviousStatus) (out translator.Output, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("translator panicked: %v", r)
		}
	}()
	return p.opts.Translate(in, previous, p.opts.Now(), p.opts.Translator), nil
}
