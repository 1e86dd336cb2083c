package node

import (
	"maps"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestInfrastructureMetadataCarriesTheGatewaysLabelsAndAnnotations(t *testing.T) {
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: gwv1.GatewaySpec{Infrastructure: &gwv1.GatewayInfrastructure{
		Labels:      map[gwv1.LabelKey]gwv1.LabelValue{"team": "shop", GatewayNameLabel: "spoofed"},
		Annotations: map[gwv1.AnnotationKey]gwv1.AnnotationValue{"example.io/owner": "ops"},
	}}}
	labels, annotations := infrastructureMetadata(gw)
	if want := map[string]string{"team": "shop", GatewayNameLabel: "edge"}; !maps.Equal(labels, want) {
		t.Errorf("labels = %v, want %v (the gateway-name label is the Gateway's own)", labels, want)
	}
	if want := map[string]string{"example.io/owner": "ops"}; !maps.Equal(annotations, want) {
		t.Errorf("annotations = %v, want %v", annotations, want)
	}
	labels, annotations = infrastructureMetadata(&gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "bare"}})
	if len(labels) != 1 || labels[GatewayNameLabel] != "bare" || annotations != nil {
		t.Errorf("without spec.infrastructure: labels %v, annotations %v", labels, annotations)
	}
}

func TestAssignableIsTheStaticRangeNoHostHolds(t *testing.T) {
	n := &Network{bridge: "tpcbrtest", prefix: "10.217"}
	n.hosts = []*Host{{Netns: "tpcbrtest-gw", IP: "10.217.250.11", IPs: []string{"10.217.250.11"}}}
	for addr, why := range map[string]string{
		n.StaticAddress(10): "",
		"10.217.250.254":    "",
		"10.217.250.11":     "held by tpcbrtest-gw",
		"10.217.250.0":      "static range",
		"10.217.250.255":    "static range",
		"10.217.0.5":        "static range", // the pool's
		"192.0.2.10":        "static range",
		"2001:db8::1":       "static range",
		"fake address":      "not an IP",
	} {
		err := n.Assignable(addr)
		switch {
		case why == "" && err != nil:
			t.Errorf("Assignable(%q) = %v, want nil", addr, err)
		case why != "" && (err == nil || !strings.Contains(err.Error(), why)):
			t.Errorf("Assignable(%q) = %v, want an error saying %q", addr, err, why)
		}
	}
}
