package pipeline

import (
	"slices"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// markingConditions adds its own condition type to every policy and
// XBackend, and records the clusters it was shown and the condition types
// it found already there.
type markingConditions struct {
	kind              string
	clusters          []*clusterv3.Cluster
	found, foundXBack []string
}

func (m *markingConditions) SeeClusters(c []*clusterv3.Cluster) { m.clusters = c }

func (m *markingConditions) Apply(statuses map[types.NamespacedName]gwv1.PolicyStatus, _ map[string][]types.NamespacedName,
	_ translator.PreviousStatus, _ gwv1.GatewayController, _ time.Time) map[types.NamespacedName]gwv1.PolicyStatus {
	out := map[types.NamespacedName]gwv1.PolicyStatus{}
	for k, st := range statuses {
		st = *st.DeepCopy()
		m.found = types_(st.Ancestors[0].Conditions)
		st.Ancestors[0].Conditions = append(st.Ancestors[0].Conditions, metav1.Condition{Type: m.kind, Status: metav1.ConditionTrue})
		out[k] = st
	}
	return out
}

func (m *markingConditions) ApplyXBackends(statuses map[types.NamespacedName]gwxv1a1.BackendStatus, _ map[string][]types.NamespacedName,
	_ map[types.NamespacedName]gwxv1a1.BackendStatus, _ gwv1.GatewayController, _ time.Time) map[types.NamespacedName]gwxv1a1.BackendStatus {
	out := map[types.NamespacedName]gwxv1a1.BackendStatus{}
	for k, st := range statuses {
		st = *st.DeepCopy()
		m.foundXBack = types_(st.Ancestors[0].Conditions)
		st.Ancestors[0].Conditions = append(st.Ancestors[0].Conditions, metav1.Condition{Type: m.kind, Status: metav1.ConditionTrue})
		out[k] = st
	}
	return out
}

func types_(conds []metav1.Condition) []string {
	var out []string
	for _, c := range conds {
		out = append(out, c.Type)
	}
	return out
}

// Several data-plane conditions (handshakes, backend certificates) all
// reach the statuses, each handed what the one before returned, and a
// ClusterConditions sees the translation's clusters before it applies.
func TestPipelineAppliesEveryDataPlaneCondition(t *testing.T) {
	pay := types.NamespacedName{Namespace: "shop", Name: "pay"}
	cluster := &clusterv3.Cluster{Name: "shop/pay/443"}
	rec := &gatewayRecorder{recorder: &recorder{}}
	translate := func(in translator.Inputs, prev translator.PreviousStatus, now time.Time, o translator.Options) translator.Output {
		out := rec.translate(in, prev, now, o)
		out.Statuses = map[types.NamespacedName]gwv1.PolicyStatus{pay: acceptedStatus(now)}
		out.Clusters = []*clusterv3.Cluster{cluster}
		out.GatewayAPI = gatewayStatuses("Accepted")
		out.GatewayAPI.XBackends = map[types.NamespacedName]gwxv1a1.BackendStatus{pay: {Ancestors: []gwxv1a1.BackendAncestorStatus{
			{ControllerName: translator.DefaultControllerName, AncestorRef: gwv1.ParentReference{Name: "web"}}}}}
		return out
	}
	first, second := &markingConditions{kind: "tlsplane.io/First"}, &markingConditions{kind: "tlsplane.io/Second"}
	p, err := New(Options{Source: newFakeSource(), Publisher: rec, Sink: rec, Translate: translate, Conditions: []Conditions{first, second}})
	if err != nil {
		t.Fatal(err)
	}
	p.sync()
	var got []string
	for _, st := range p.computed {
		got = types_(st.Ancestors[0].Conditions)
	}
	if !slices.Equal(got, []string{"Accepted", "tlsplane.io/First", "tlsplane.io/Second"}) {
		t.Fatalf("policy conditions %v, want the translator's then each data-plane condition in order", got)
	}
	if !slices.Equal(second.found, []string{"Accepted", "tlsplane.io/First"}) {
		t.Errorf("the second condition was handed %v, want the first's output", second.found)
	}
	if xs := types_(p.gatewayAPI.XBackends[pay].Ancestors[0].Conditions); !slices.Equal(xs, []string{"tlsplane.io/First", "tlsplane.io/Second"}) {
		t.Errorf("XBackend conditions %v, want both", xs)
	}
	if len(first.clusters) != 1 || first.clusters[0] != cluster || len(second.clusters) != 1 {
		t.Errorf("ClusterConditions saw clusters %v and %v, want the translation's", first.clusters, second.clusters)
	}
}
