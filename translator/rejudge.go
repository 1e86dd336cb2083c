package translator

import (
	"reflect"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/input"
)

// rejudge judges again the changed policies and those whose CA objects
// changed; every Service they target, before and after, is translated
// again.
func (t *Translator) rejudge(u *update) {
	w := t.world
	for nn, p := range u.policies {
		u.judged[nn] = true
		for _, svc := range w.targets[nn] {
			u.services[svc] = true
		}
		if old := w.policies[nn]; old != nil {
			w.unindex(nn, old)
		}
		setOrDelete(w.policies, nn, p, p == nil)
		if p != nil {
			w.index(nn, p)
		}
	}
	for ref := range u.refs {
		for nn := range w.byRef[ref].All() {
			u.judged[nn] = true
		}
	}
	for url := range u.crls {
		for nn := range w.byCRL[url].All() {
			u.judged[nn] = true
		}
	}
	for nn := range u.judged {
		if old := w.verdicts[nn]; old != nil && len(old.verdict.FetchedCRLs.Wants) > 0 {
			w.indexCRLWants(nn, old.verdict, false)
			u.crlWants = true
		}
		p := w.policies[nn]
		if p == nil {
			delete(w.verdicts, nn)
			t.verdicts.Delete(nn)
			t.statuses.Delete(nn)
			continue
		}
		w.verdicts[nn] = t.judge(p, w.ix)
		if v := w.verdicts[nn].verdict; len(v.FetchedCRLs.Wants) > 0 {
			w.indexCRLWants(nn, v, true)
			u.crlWants = true
		}
		for _, svc := range w.targets[nn] {
			u.services[svc] = true
		}
	}
}

// reattach redoes the attachments of every policy naming a Service to
// translate again, and the winners on those Services.
func (t *Translator) reattach(u *update) {
	w := t.world
	for nn := range u.judged {
		u.attached[nn] = true
	}
	for svc := range u.services {
		for nn := range w.byService[svc].All() {
			u.attached[nn] = true
		}
	}
	order := input.SortedKeys(u.attached)
	for _, nn := range order {
		for _, a := range w.attachments[nn] {
			if u.services[a.Target.Service] {
				delete(w.winners, a.Target)
			}
		}
	}
	var fresh []*backendtls.Attachment
	for _, nn := range order {
		g := w.verdicts[nn]
		if g == nil {
			delete(w.attachments, nn)
			continue
		}
		v := g.verdict
		refs := v.Policy.Spec.TargetRefs
		as := make([]*backendtls.Attachment, len(refs))
		for i, ref := range refs {
			a := &backendtls.Attachment{}
			as[i] = a
			if a.Resolve(v, ref, w.ix) && u.services[a.Target.Service] {
				backendtls.Compete(w.winners, a)
			}
		}
		w.attachments[nn] = as
		fresh = append(fresh, as...)
	}
	for _, a := range fresh {
		a.SetWinner(w.winners)
	}
	for nn := range u.attached {
		u.statuses[nn] = true
	}
}

// retranslate translates the reached Services again: first every old port
// leaves the output's shared parts, then the new ones join, so a CA secret
// all of them move to is counted once.
func (t *Translator) retranslate(u *update) {
	w := t.world
	for svc := range u.services {
		old := w.ports[svc]
		w.count(svc, old, -1)
		w.produce(old, false)
		u.touch(old)
	}
	var governors []*backendtls.Verdict
	for svc := range u.services {
		s := w.ix.Services[svc]
		if s == nil {
			delete(w.ports, svc)
			delete(w.unserved, svc)
			t.services.Delete(svc)
			continue
		}
		governors = governors[:0]
		for _, port := range s.Spec.Ports {
			governors = append(governors, backendtls.Governing(w.winners, svc, port))
		}
		ports := t.servicePorts(s, svc, governors, w.ix, w.verdicts)
		w.ports[svc] = ports
		w.count(svc, ports, 1)
		w.produce(ports, true)
		u.touch(ports)
		var unserved []backendtls.UnservedPort
		for i := range ports {
			if ports[i].cluster == nil && ports[i].policy != nil {
				unserved = append(unserved, ports[i].unservedPort())
			}
		}
		setOrDelete(w.unserved, svc, unserved, len(unserved) == 0)
	}
}

// retranslateGateways runs the Gateway rules again; the policies on the
// Services their routes reached, before or after, get their statuses
// redone (their Gateway ancestors may have changed).
func (t *Translator) retranslateGateways(u *update, stamp metav1.Time) {
	w := t.world
	old := w.gateways
	w.gateways = t.translateGateways(w.gateway.inputs(), w.ix, t.gatewayConfig, stamp)
	w.gateways.ownClusters = old.ownClusters // what it made is reused where the bases are the same
	// Only the policies on a Service port whose reaching Gateways changed
	// get new Gateway ancestors: a route edit re-runs the Gateway rules
	// for every route, but need not redo 10,000 policy statuses.
	for _, reach := range []map[input.ServicePort][]types.NamespacedName{old.judged.Reach, w.gateways.judged.Reach} {
		for backend := range reach {
			if slices.Equal(old.judged.Reach[backend], w.gateways.judged.Reach[backend]) {
				continue
			}
			for nn := range w.byService[backend.Service].All() {
				u.statuses[nn] = true
			}
		}
	}
	for _, warning := range old.warnings {
		if w.warnings[warning]--; w.warnings[warning] == 0 {
			delete(w.warnings, warning)
		}
	}
	for _, warning := range w.gateways.warnings {
		w.warnings[warning]++
	}
	u.warnings = u.warnings || len(old.warnings)+len(w.gateways.warnings) > 0
	u.fleetsDirty = true
}

// notesDue adds the policies whose CA expiry warning changed since the
// last call (the clock moved past a window's start or an expiry).
func (w *world) notesDue(u *update, now time.Time) {
	if w.firstDue.IsZero() || now.Before(w.firstDue) {
		return
	}
	w.firstDue = time.Time{}
	for nn, due := range w.noteDue {
		if !now.Before(due) {
			u.statuses[nn] = true
		} else if w.firstDue.IsZero() || due.Before(w.firstDue) {
			w.firstDue = due
		}
	}
}

// restatus computes the status of every policy the update reached.
func (t *Translator) restatus(u *update, computed PreviousStatus, now time.Time, stamp metav1.Time) {
	w := t.world
	for _, nn := range input.SortedKeys(u.statuses) {
		g := w.verdicts[nn]
		if g == nil {
			delete(w.noteDue, nn)
			continue
		}
		v := g.verdict
		as := w.attachments[nn]
		for _, a := range as {
			a.CANote = ""
			a.MarkUnserved(w.unserved[a.Target.Service], w.ix)
		}
		prev := v.Policy.Status
		if st, ok := computed[nn]; ok && len(prev.Ancestors) == 0 {
			prev = st
		}
		u.setStatus(w, nn, t.policyStatus(v, as, prev, w.gateways.judged.Reach, w.ix, now, stamp))
		w.scheduleNote(v, now, t.policyConfig)
	}
}

// setStatus records a policy's new status when it differs from the last.
func (u *update) setStatus(w *world, nn types.NamespacedName, st gwv1.PolicyStatus) {
	if old, ok := w.out.Statuses[nn]; ok && reflect.DeepEqual(old, st) {
		return
	}
	if u.newStatuses == nil {
		u.newStatuses = map[types.NamespacedName]gwv1.PolicyStatus{}
	}
	u.newStatuses[nn] = st
}
