package provisioner

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// gatewayCache stands in for the informers' Gateways and ListenerSets.
type gatewayCache struct {
	mu           sync.Mutex
	gateways     map[types.NamespacedName]*gwv1.Gateway
	listenerSets map[types.NamespacedName]*gwv1.ListenerSet
}

func (c *gatewayCache) ListenerSet(nn types.NamespacedName) (*gwv1.ListenerSet, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ls, ok := c.listenerSets[nn]
	return ls, ok
}

func (c *gatewayCache) Gateway(nn types.NamespacedName) (*gwv1.Gateway, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gw, ok := c.gateways[nn]
	return gw, ok
}

func (c *gatewayCache) set(gw *gwv1.Gateway) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gateways[types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}] = gw
}

// statusesWith reports gw as of our class, accepted or not.
func statusesWith(gw *gwv1.Gateway, accepted bool) translator.GatewayAPIStatuses {
	status := metav1.ConditionFalse
	if accepted {
		status = metav1.ConditionTrue
	}
	return translator.GatewayAPIStatuses{Gateways: map[types.NamespacedName]gwv1.GatewayStatus{
		{Namespace: gw.Namespace, Name: gw.Name}: {Conditions: []metav1.Condition{{Type: string(gwv1.GatewayConditionAccepted), Status: status}}},
	}}
}

// writes counts the client's writes (apply is a patch) by verb and resource.
func writes(client *fake.Clientset) map[string]int {
	out := map[string]int{}
	for _, a := range client.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out[a.GetVerb()+" "+a.GetResource().Resource]++
		}
	}
	return out
}

func totalWrites(client *fake.Clientset) int {
	n := 0
	for _, c := range writes(client) {
		n += c
	}
	return n
}

func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stillWrites fails when the writes change within a while.
func stillWrites(t *testing.T, client *fake.Clientset, n int, why string) {
	t.Helper()
	for range 25 {
		time.Sleep(20 * time.Millisecond)
		if got := totalWrites(client); got != n {
			t.Fatalf("%s: %d writes, want still %d: %v", why, got, n, writes(client))
		}
	}
}

// startProvisioner runs a Provisioner on client (not leading) over a
// cache holding gw, until ctx ends.
func startProvisioner(ctx context.Context, t *testing.T, client *fake.Clientset, gw *gwv1.Gateway) (*Provisioner, *gatewayCache) {
	t.Helper()
	cache := &gatewayCache{gateways: map[types.NamespacedName]*gwv1.Gateway{}, listenerSets: map[types.NamespacedName]*gwv1.ListenerSet{}}
	cache.set(gw)
	p, err := New(Options{Client: client, Cache: cache, Controller: controller, Config: testConfig})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	return p, cache
}

// A Gateway of ours, accepted, outside --provision-namespaces: nothing is
// written for it, not even tried (its Role is not there), and nothing
// retries.
func TestProvisionerWritesOnlyInItsNamespaces(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	gw := infraGateway()
	gw.Namespace = "kube-system"
	p, _ := startProvisioner(ctx, t, client, gw)
	go p.Lead(ctx)
	p.ReportGatewayAPI(statusesWith(gw, true))
	stillWrites(t, client, 0, "a Gateway in kube-system")
	for _, a := range client.Actions() {
		if a.GetNamespace() != "shop" {
			t.Errorf("%s %s in namespace %q: want nothing outside shop, the one provisioned namespace", a.GetVerb(), a.GetResource().Resource, a.GetNamespace())
		}
	}
}

func TestProvisionerWritesOnlyChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	gw := infraGateway()
	p, cache := startProvisioner(ctx, t, client, gw)

	t.Log("not leading: reports write nothing")
	p.ReportGatewayAPI(statusesWith(gw, true))
	stillWrites(t, client, 0, "before a term")

	leadCtx, endTerm := context.WithCancel(ctx)
	termDone := make(chan struct{})
	go func() { defer close(termDone); p.Lead(leadCtx) }()
	waitFor(t, "four objects applied", func() error {
		if w := writes(client); w["patch serviceaccounts"] != 1 || w["patch configmaps"] != 1 || w["patch deployments"] != 1 || w["patch services"] != 1 || len(w) != 4 {
			return fmt.Errorf("writes %v", w)
		}
		return nil
	})
	svc, err := client.CoreV1().Services("shop").Get(ctx, "tlsplane-edge", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Labels["team"] != "payments" || svc.Labels[gwv1.GatewayNameLabelKey] != "edge" || svc.OwnerReferences[0].UID != gw.UID {
		t.Errorf("Service labels %v owners %v", svc.Labels, svc.OwnerReferences)
	}

	t.Log("the same Gateway reported again, and our writes coming back: nothing written")
	p.ReportGatewayAPI(statusesWith(gw, true))
	stillWrites(t, client, 4, "unchanged Gateway")

	t.Log("spec.infrastructure.labels changed: all four applied again")
	changed := infraGateway()
	changed.Generation = 4
	changed.Spec.Infrastructure.Labels["team"] = "checkout"
	cache.set(changed)
	p.ReportGatewayAPI(statusesWith(changed, true))
	waitFor(t, "the new label applied", func() error {
		d, err := client.AppsV1().Deployments("shop").Get(ctx, "tlsplane-edge", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Spec.Template.Labels["team"] != "checkout" || d.Labels["team"] != "checkout" {
			return fmt.Errorf("Deployment labels %v, template %v", d.Labels, d.Spec.Template.Labels)
		}
		return nil
	})
	waitFor(t, "eight writes", func() error {
		if n := totalWrites(client); n != 8 {
			return fmt.Errorf("%d writes: %v", n, writes(client))
		}
		return nil
	})
	stillWrites(t, client, 8, "after the change")

	t.Log("an accepted ListenerSet adds port 8443: only the Service changes")
	ls := listenerSet("shop", "more", "edge", 8443)
	cache.mu.Lock()
	cache.listenerSets[types.NamespacedName{Namespace: "shop", Name: "more"}] = ls
	cache.mu.Unlock()
	withSet := statusesWith(changed, true)
	withSet.ListenerSets = map[types.NamespacedName]gwv1.ListenerSetStatus{{Namespace: "shop", Name: "more"}: {
		Conditions: []metav1.Condition{{Type: string(gwv1.ListenerSetConditionAccepted), Status: metav1.ConditionTrue}}}}
	p.ReportGatewayAPI(withSet)
	waitFor(t, "port 8443 on the Service", func() error {
		svc, err := client.CoreV1().Services("shop").Get(ctx, "tlsplane-edge", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, port := range svc.Spec.Ports {
			if port.Port == 8443 {
				return nil
			}
		}
		return fmt.Errorf("ports %v", svc.Spec.Ports)
	})
	stillWrites(t, client, 9, "a ListenerSet's port")
	if w := writes(client); w["patch services"] != 3 {
		t.Errorf("writes %v: want only the Service written again", w)
	}

	t.Log("someone deletes the Service: it is put back")
	if err := client.CoreV1().Services("shop").Delete(ctx, "tlsplane-edge", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Service back", func() error {
		_, err := client.CoreV1().Services("shop").Get(ctx, "tlsplane-edge", metav1.GetOptions{})
		return err
	})

	t.Log("ours but no longer accepted: kept as is")
	n := totalWrites(client)
	p.ReportGatewayAPI(statusesWith(changed, false))
	stillWrites(t, client, n, "not accepted")

	t.Log("no longer of our class: deleted")
	p.ReportGatewayAPI(translator.GatewayAPIStatuses{})
	waitFor(t, "objects deleted", func() error {
		for _, err := range []error{
			getErr(client.CoreV1().ServiceAccounts("shop").Get(ctx, "tlsplane-edge", metav1.GetOptions{})),
			getErr(client.CoreV1().ConfigMaps("shop").Get(ctx, "tlsplane-edge", metav1.GetOptions{})),
			getErr(client.AppsV1().Deployments("shop").Get(ctx, "tlsplane-edge", metav1.GetOptions{})),
			getErr(client.CoreV1().Services("shop").Get(ctx, "tlsplane-edge", metav1.GetOptions{})),
		} {
			if err == nil {
				return fmt.Errorf("still there")
			}
		}
		return nil
	})

	t.Log("the term ends: Lead returns, and writes stop")
	endTerm()
	select {
	case <-termDone:
	case <-time.After(5 * time.Second):
		t.Fatal("Lead did not return after its term ended")
	}
	n = totalWrites(client)
	cache.set(infraGateway())
	p.ReportGatewayAPI(statusesWith(gw, true))
	stillWrites(t, client, n, "after the term")
}

func getErr[T any](_ T, err error) error { return err }

// An object of the same name that tlsplane did not provision is left alone.
func TestProvisionerLeavesForeignObjects(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gw := infraGateway()
	client := fake.NewClientset()
	if _, err := client.CoreV1().ServiceAccounts("shop").Create(ctx, serviceAccount("shop", "tlsplane-edge"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, _ := startProvisioner(ctx, t, client, gw)
	go p.Lead(ctx)
	p.ReportGatewayAPI(statusesWith(gw, true))
	waitFor(t, "the other three applied", func() error {
		if w := writes(client); w["patch configmaps"] != 1 || w["patch deployments"] != 1 || w["patch services"] != 1 {
			return fmt.Errorf("writes %v", w)
		}
		return nil
	})
	if w := writes(client); w["patch serviceaccounts"] != 0 {
		t.Errorf("the foreign ServiceAccount was written: %v", w)
	}
	client.ClearActions()
	// The refusal is retried with backoff, never written.
	time.Sleep(300 * time.Millisecond)
	for _, a := range client.Actions() {
		if a.GetVerb() == "patch" {
			t.Errorf("wrote %v", a.(k8stesting.PatchAction).GetName())
		}
	}
}

func listenerSet(ns, name, gateway string, port gwv1.PortNumber) *gwv1.ListenerSet {
	return &gwv1.ListenerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "ls-uid", Generation: 1},
		Spec: gwv1.ListenerSetSpec{
			ParentRef: gwv1.ParentGatewayReference{Name: gwv1.ObjectName(gateway)},
			Listeners: []gwv1.ListenerEntry{{Name: "extra", Protocol: gwv1.HTTPSProtocolType, Port: port}},
		},
	}
}

func serviceAccount(ns, name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}
