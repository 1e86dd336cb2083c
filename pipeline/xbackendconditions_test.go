package pipeline

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// xbackendConditions marks every XBackend it is handed, and records the
// origins and previous statuses it saw.
type xbackendConditions struct {
	origins  map[string][]types.NamespacedName
	previous map[types.NamespacedName]gwxv1a1.BackendStatus
}

func (c *xbackendConditions) Apply(statuses map[types.NamespacedName]gwv1.PolicyStatus, _ map[string][]types.NamespacedName,
	_ translator.PreviousStatus, _ gwv1.GatewayController, _ time.Time) map[types.NamespacedName]gwv1.PolicyStatus {
	return statuses
}

func (c *xbackendConditions) ApplyXBackends(statuses map[types.NamespacedName]gwxv1a1.BackendStatus, origins map[string][]types.NamespacedName,
	previous map[types.NamespacedName]gwxv1a1.BackendStatus, _ gwv1.GatewayController, _ time.Time) map[types.NamespacedName]gwxv1a1.BackendStatus {
	c.origins, c.previous = origins, previous
	out := map[types.NamespacedName]gwxv1a1.BackendStatus{}
	for k, st := range statuses {
		st = *st.DeepCopy()
		st.Ancestors[0].Conditions = append(st.Ancestors[0].Conditions, metav1.Condition{Type: "tlsplane.io/HandshakesSucceeding", Status: metav1.ConditionFalse})
		out[k] = st
	}
	return out
}

// The data plane's conditions reach XBackends' statuses, from the
// translation's XBackend origins, with the last pass's statuses as previous.
func TestPipelineAppliesDataPlaneConditionsToXBackends(t *testing.T) {
	pay := types.NamespacedName{Namespace: "shop", Name: "pay"}
	rec := &gatewayRecorder{recorder: &recorder{}}
	translate := func(in translator.Inputs, prev translator.PreviousStatus, now time.Time, o translator.Options) translator.Output {
		out := rec.translate(in, prev, now, o)
		out.GatewayAPI = gatewayStatuses("Accepted")
		out.GatewayAPI.XBackends = map[types.NamespacedName]gwxv1a1.BackendStatus{pay: {Ancestors: []gwxv1a1.BackendAncestorStatus{
			{ControllerName: translator.DefaultControllerName, AncestorRef: gwv1.ParentReference{Name: "web"}}}}}
		out.XBackendOrigins = map[string][]types.NamespacedName{"XBackend/shop/pay/443": {pay}}
		return out
	}
	conds := &xbackendConditions{}
	p, err := New(Options{Source: newFakeSource(), Publisher: rec, Sink: rec, Translate: translate, Conditions: []Conditions{conds}})
	if err != nil {
		t.Fatal(err)
	}
	p.sync()
	p.sync()
	if len(rec.got) != 2 {
		t.Fatalf("Gateway API statuses reported %d times, want 2", len(rec.got))
	}
	got := rec.got[1].XBackends[pay].Ancestors[0].Conditions
	if len(got) != 1 || got[0].Type != "tlsplane.io/HandshakesSucceeding" {
		t.Fatalf("XBackend shop/pay reported with conditions %+v, want the data plane's", got)
	}
	if len(conds.origins["XBackend/shop/pay/443"]) != 1 {
		t.Errorf("ApplyXBackends saw origins %v, want the translation's XBackendOrigins", conds.origins)
	}
	if len(conds.previous[pay].Ancestors) != 1 || len(conds.previous[pay].Ancestors[0].Conditions) != 1 {
		t.Errorf("ApplyXBackends saw previous %+v, want the last pass's reported statuses", conds.previous)
	}
}
