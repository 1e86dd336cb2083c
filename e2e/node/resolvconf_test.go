package node

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodDNS: the resolv.conf of each dnsPolicy, as a kubelet writes it.
func TestPodDNS(t *testing.T) {
	host := dnsConf{nameservers: []string{"192.0.2.53"}, searches: []string{"corp.example"}, options: []string{"edns0"}}
	two := "2"
	extra := &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.1"}, Searches: []string{"x.example"},
		Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: &two}, {Name: "rotate"}}}
	for _, tc := range []struct {
		name       string
		policy     corev1.DNSPolicy
		config     *corev1.PodDNSConfig
		clusterDNS string
		want       string // "-": the node's file unchanged
		err        string
	}{
		{name: "default policy is ClusterFirst", clusterDNS: "10.1.0.1",
			want: "nameserver 10.1.0.1\nsearch shop.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n"},
		{name: "ClusterFirst with dnsConfig merged", policy: corev1.DNSClusterFirst, clusterDNS: "10.1.0.1", config: extra,
			want: "nameserver 10.1.0.1\nnameserver 192.0.2.1\nsearch shop.svc.cluster.local svc.cluster.local cluster.local x.example\noptions ndots:2 rotate\n"},
		{name: "ClusterFirst without a cluster resolver is Default", policy: corev1.DNSClusterFirst, want: "-"},
		{name: "Default is the node's", policy: corev1.DNSDefault, clusterDNS: "10.1.0.1", want: "-"},
		{name: "Default with dnsConfig", policy: corev1.DNSDefault, clusterDNS: "10.1.0.1", config: extra,
			want: "nameserver 192.0.2.53\nnameserver 192.0.2.1\nsearch corp.example x.example\noptions edns0 ndots:2 rotate\n"},
		{name: "None is dnsConfig only", policy: corev1.DNSNone, clusterDNS: "10.1.0.1", config: extra,
			want: "nameserver 192.0.2.1\nsearch x.example\noptions ndots:2 rotate\n"},
		{name: "None without dnsConfig", policy: corev1.DNSNone, err: "dnsPolicy None: spec.dnsConfig is required"},
		{name: "unknown policy", policy: "Sometimes", clusterDNS: "10.1.0.1", err: `dnsPolicy "Sometimes": want ClusterFirst, ClusterFirstWithHostNet, Default or None`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p"},
				Spec: corev1.PodSpec{DNSPolicy: tc.policy, DNSConfig: tc.config}}
			got, err := podDNS(pod, tc.clusterDNS, host)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			text := "-"
			if got != nil {
				text = got.String()
			}
			if text != tc.want {
				t.Errorf("resolv.conf\n%s\nwant\n%s", text, tc.want)
			}
		})
	}
}

func TestParseResolvConf(t *testing.T) {
	c := parseResolvConf("# comment\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch a.example b.example\n")
	if got := c.String(); got != "nameserver 127.0.0.53\nsearch a.example b.example\noptions edns0 trust-ad\n" {
		t.Errorf("parsed back as\n%s", got)
	}
}
