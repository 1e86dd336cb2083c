package translator

import (
	"maps"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/trafficpolicy"
	"github.com/tlsplane/tlsplane/translator/xbackend"
)

// xbackendConfig is what judging an XBackend reads of the options.
func (m *memory) xbackendConfig() xbackend.Config {
	return xbackend.Config{SystemCABundlePath: m.policyConfig.SystemCABundlePath, AllowInsecureSkipVerify: m.policyConfig.AllowInsecureSkipVerify,
		CRLFetch: m.policyConfig.CRLFetch, Hostnames: m.opts.XBackendHostnames}
}

// translateXBackends judges and emits every XBackend of ix, with the
// retry budgets of t.traffic (judged first), then records each verdict in
// ix, where routes read it.
func (t *Translator) translateXBackends(ix *input.Index) *xbackendOutput {
	out := &xbackendOutput{}
	if len(ix.XBackends) == 0 {
		return out // the common case costs no map
	}
	out.verdicts, out.clusters, out.secrets = map[types.NamespacedName]*xbackend.Verdict{}, map[string]*clusterv3.Cluster{}, map[string]*tlsv3.Secret{}
	out.origins, out.namespaces, out.caNotAfter = map[string][]types.NamespacedName{}, map[string]string{}, map[string]time.Time{}
	for _, nn := range input.SortedKeys(ix.XBackends) {
		x := ix.XBackends[nn]
		v := xbackend.Judge(x.Object, ix, t.xbackendConfig(), t.memos.judging)
		t.emitXBackend(v, t.traffic.retryBudgetOf(trafficpolicy.XBackendTarget(nn)), out)
		out.verdicts[nn] = v
		ix.XBackends[nn] = input.XBackend{Object: x.Object, Refused: v.RejectReason, Why: v.RejectMessage}
	}
	return out
}

// rejudgeXBackends judges and emits every XBackend again when a change
// may reach them; resources equal to the last are kept (same pointer, not
// named as changed), and the Gateway rules run again only when a verdict
// routes read changed (a rotated CA changes a secret, never a route).
func (t *Translator) rejudgeXBackends(u *update) {
	w := t.world
	if !u.xbackends {
		return
	}
	before := maps.Clone(w.ix.XBackends)
	old := w.xbackends
	fresh := t.translateXBackends(w.ix)
	keepEqual(fresh.clusters, old.clusters, u.clusters)
	keepEqual(fresh.secrets, old.secrets, u.secrets)
	w.xbackends = fresh
	if len(before) != len(w.ix.XBackends) {
		u.gateways = true
		return
	}
	for nn, x := range w.ix.XBackends {
		if b, ok := before[nn]; !ok || b != x {
			u.gateways = true
			return
		}
	}
}

// keepEqual keeps in fresh the old resource of each name whose new one is
// equal, and notes in touched every name added, changed or removed.
func keepEqual[T proto.Message](fresh, old map[string]T, touched map[string]bool) {
	for name, r := range fresh {
		if prev, ok := old[name]; ok && proto.Equal(prev, r) {
			fresh[name] = prev
			continue
		}
		touched[name] = true
	}
	for name := range old {
		if _, ok := fresh[name]; !ok {
			touched[name] = true
		}
	}
}

// xbackendStatuses are the XBackends' statuses after an update: redone
// when they or the Gateway rules' results changed, else the last.
func (t *Translator) xbackendStatuses(u *update, stamp metav1.Time, now time.Time) map[types.NamespacedName]gwxv1a1.BackendStatus {
	w := t.world
	noteDue := !w.xbackends.noteDue.IsZero() && !now.Before(w.xbackends.noteDue) // a CA expiry warning changes
	if !u.xbackends && !u.fleetsDirty && !noteDue {
		return w.out.GatewayAPI.XBackends
	}
	st := w.xbackends.statuses(w.gateways.judged, t.gatewayConfig.ControllerName, stamp, now, t.policyConfig.CAExpiryWarning)
	// Kept from the last where equal: a status not rewritten keeps its
	// stamps, and a caller comparing maps sees no change.
	for nn, s := range st {
		if prev, ok := w.out.GatewayAPI.XBackends[nn]; ok && sameXBackendStatus(prev, s) {
			st[nn] = prev
		}
	}
	return st
}
