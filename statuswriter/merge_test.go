package statuswriter

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const me gwv1.GatewayController = "tlsplane.io/controller"

func entry(controller gwv1.GatewayController, ancestor, reason string) gwv1.PolicyAncestorStatus {
	return gwv1.PolicyAncestorStatus{
		AncestorRef:    gwv1.ParentReference{Name: gwv1.ObjectName(ancestor)},
		ControllerName: controller,
		Conditions:     []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: reason}},
	}
}

func names(st gwv1.PolicyStatus) []string {
	var out []string
	for _, a := range st.Ancestors {
		out = append(out, string(a.ControllerName)+"/"+string(a.AncestorRef.Name)+"/"+a.Conditions[0].Reason)
	}
	return out
}

func TestMergeKeepsOtherControllersWhereTheyAre(t *testing.T) {
	other := entry("example.com/gw", "gw-a", "Accepted")
	tests := []struct {
		name          string
		live, desired []gwv1.PolicyAncestorStatus
		want          []string
		write         bool
	}{
		{"first write appends ours", []gwv1.PolicyAncestorStatus{other}, []gwv1.PolicyAncestorStatus{entry(me, "svc", "Accepted")},
			[]string{"example.com/gw/gw-a/Accepted", "tlsplane.io/controller/svc/Accepted"}, true},
		{"ours replaced in place", []gwv1.PolicyAncestorStatus{entry(me, "svc", "Accepted"), other}, []gwv1.PolicyAncestorStatus{entry(me, "svc", "NoValidCACertificate")},
			[]string{"tlsplane.io/controller/svc/NoValidCACertificate", "example.com/gw/gw-a/Accepted"}, true},
		{"other controller's stale copy in desired is ignored", []gwv1.PolicyAncestorStatus{entry("example.com/gw", "gw-a", "Changed"), entry(me, "svc", "Accepted")},
			[]gwv1.PolicyAncestorStatus{other, entry(me, "svc", "Accepted")},
			[]string{"example.com/gw/gw-a/Changed", "tlsplane.io/controller/svc/Accepted"}, false},
		{"ours removed", []gwv1.PolicyAncestorStatus{entry(me, "svc", "Accepted"), other}, nil,
			[]string{"example.com/gw/gw-a/Accepted"}, true},
		{"nothing of ours anywhere", []gwv1.PolicyAncestorStatus{other}, nil,
			[]string{"example.com/gw/gw-a/Accepted"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live, desired := gwv1.PolicyStatus{Ancestors: tt.live}, gwv1.PolicyStatus{Ancestors: tt.desired}
			if got := needsWrite(live, desired, me); got != tt.write {
				t.Errorf("needsWrite = %v, want %v", got, tt.write)
			}
			got := names(merge(live, desired, me))
			if len(got) != len(tt.want) {
				t.Fatalf("merge = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("merge = %v, want %v", got, tt.want)
				}
			}
		})
	}
}
