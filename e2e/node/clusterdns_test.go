package node

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestClusterDNS: a Service's name, fully qualified, resolves to its
// cluster IP over UDP and over TCP; a headless Service, an unknown one and
// a name outside the cluster do not exist. Needs root (port 53 on a
// bridge).
func TestClusterDNS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (a bridge, port 53)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2)")
	}
	n, err := NewNetwork()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	c := fake.NewClientset(
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "echo-v2"}, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.12"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "headless"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}},
	)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := StartClusterDNS(ctx, t, c, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, network := range []string{"udp", "tcp"} {
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dialer net.Dialer
			return dialer.DialContext(ctx, network, net.JoinHostPort(d.Address, "53"))
		}}
		for _, tc := range []struct {
			name string
			want []string // nil: no such host
		}{
			{"echo-v2.shop.svc.cluster.local.", []string{"10.0.0.12"}},
			{"ECHO-V2.Shop.svc.cluster.local.", []string{"10.0.0.12"}},
			{"headless.shop.svc.cluster.local.", nil},
			{"echo-v3.shop.svc.cluster.local.", nil},
			{"echo-v2.shop.cluster.local.", nil},
			{"example.com.", nil},
		} {
			lookupCtx, done := context.WithTimeout(ctx, 5*time.Second)
			got, err := r.LookupHost(lookupCtx, tc.name)
			done()
			var dnsErr *net.DNSError
			switch {
			case tc.want == nil && !(errors.As(err, &dnsErr) && dnsErr.IsNotFound):
				t.Errorf("%s %s: %v, %v; want no such host", network, tc.name, got, err)
			case tc.want != nil && (err != nil || !slices.Equal(got, tc.want)):
				t.Errorf("%s %s: %v, %v; want %v", network, tc.name, got, err, tc.want)
			}
		}
	}
}

// TestPodResolvesServiceByName: a process started in a Host whose
// resolv.conf is a ClusterFirst Pod's of namespace shop finds Service
// echo-v2 by its short name and by <name>.<namespace> (the search list),
// through the system resolver, while the node's own resolv.conf is left
// as it was.
func TestPodResolvesServiceByName(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces, port 53)")
	}
	for _, bin := range []string{"ip", "getent"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skip("needs " + bin)
		}
	}
	n, err := NewNetwork()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	c := fake.NewClientset(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "echo-v2"}, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.12"}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := StartClusterDNS(ctx, t, c, n)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(hostResolvConf)
	h, err := n.AddHost("dns")
	if err != nil {
		t.Fatal(err)
	}
	conf, err := podDNS(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p"}}, d.Address, nodeDNS())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.SetResolvConf(conf.String()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"echo-v2", "echo-v2.shop", "echo-v2.shop.svc.cluster.local"} {
		out, err := h.Command("getent", "ahostsv4", name).CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "10.0.0.12 ") {
			t.Errorf("getent ahostsv4 %s in the Pod's namespace: %v\n%s", name, err, out)
		}
	}
	if out, err := h.Command("getent", "ahostsv4", "echo-v3").CombinedOutput(); err == nil {
		t.Errorf("echo-v3 resolved: %s", out)
	}
	if after, _ := os.ReadFile(hostResolvConf); string(after) != string(before) {
		t.Errorf("the node's resolv.conf changed:\n%s", after)
	}
	n.Remove(h)
	if _, err := os.Stat(netnsEtc + "/" + h.Netns); !os.IsNotExist(err) {
		t.Errorf("/etc/netns/%s left after the host's removal: %v", h.Netns, err)
	}
}
