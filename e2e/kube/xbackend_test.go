package kube

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The experimental external backends (GEP-4894) in Kubernetes mode: the
// API server has their CRDs (apiserver.Start installs them), tlsplane
// reads them with deploy/'s ServiceAccount, and without them serves the
// rest.

// crdNotInstalled is the warning tlsplane logs once per missing CRD.
const crdNotInstalled = "CustomResourceDefinition not installed"

// xBackendTo is an XBackend of ns for hostname:443; caRef, when set, is
// its ServerOnly CA ConfigMap, else it is plaintext (no tls).
func xBackendTo(ns, name, hostname, caRef string) *gwxv1a1.XBackend {
	x := &gwxv1a1.XBackend{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gwxv1a1.BackendSpec{
			Type:             gwxv1a1.BackendTypeExternalHostname,
			Port:             gwxv1a1.BackendPort{Port: 443},
			ExternalHostname: &gwxv1a1.ExternalHostnameBackend{Hostname: gwv1.PreciseHostname(hostname)},
		},
	}
	if caRef != "" {
		x.Spec.TLS = &gwxv1a1.BackendTLS{Mode: gwxv1a1.BackendTLSModeServerOnly, Validation: gwv1.BackendTLSPolicyValidation{
			Hostname:          gwv1.PreciseHostname(hostname),
			CACertificateRefs: []gwv1.LocalObjectReference{{Kind: "ConfigMap", Name: gwv1.ObjectName(caRef)}},
		}}
	}
	return x
}

// retryBudgetFor is an XBackendTrafficPolicy of ns on XBackend target.
func retryBudgetFor(ns, name, target string) *gwxv1a1.XBackendTrafficPolicy {
	percent := 25
	return &gwxv1a1.XBackendTrafficPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gwxv1a1.BackendTrafficPolicySpec{
			TargetRefs:      []gwxv1a1.LocalPolicyTargetReference{{Group: gwxv1a1.GroupName, Kind: "XBackend", Name: gwv1.ObjectName(target)}},
			RetryConstraint: &gwxv1a1.RetryConstraint{Budget: &gwxv1a1.BudgetDetails{Percent: &percent}},
		},
	}
}

// xBackendCRDsServed reports whether discovery lists both X-kinds.
func xBackendCRDsServed(c clients) (bool, error) {
	list, err := c.kube.Discovery().ServerResourcesForGroupVersion(gwxv1a1.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n := 0
	for _, r := range list.APIResources {
		if r.Name == "xbackends" || r.Name == "xbackendtrafficpolicies" {
			n++
		}
	}
	return n == 2, nil
}

// TestXBackendsReadFromTheAPIServer: with the experimental CRDs, tlsplane
// (deploy/'s ServiceAccount, so its RBAC too) watches XBackends and
// XBackendTrafficPolicies without a watch error and names neither CRD
// missing; an XBackend and a policy created after its first sync are
// events it translates, and the CA ConfigMap the XBackend names is one it
// reads: its edit is translated, an unreferenced ConfigMap's is not.
func TestXBackendsReadFromTheAPIServer(t *testing.T) {
	c := adminClients(t)
	ctx := context.Background()
	if ok, err := xBackendCRDsServed(c); err != nil || !ok {
		t.Fatalf("XBackend CRDs served = %v (%v); apiserver.Start installs them", ok, err)
	}
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("xbackends"), "--namespaces", ns)...)
	if log := cp.Log(); strings.Contains(log, "xbackends.gateway.networking.x-k8s.io") || strings.Contains(log, "xbackendtrafficpolicies.gateway.networking.x-k8s.io") {
		t.Errorf("tlsplane names an X-kind's CRD though it is installed:\n%s", tail(log, 3000))
	}

	authority := harness.NewAuthority(t, "xbackend CA")
	createCAConfigMap(t, c, ns, "pay-ca", string(authority.PEM))
	createCAConfigMap(t, c, ns, "unrelated", string(authority.PEM))
	translated := func(kind string) float64 {
		return atof(t, cp.metricSum(t, "tlsplane_kube_events_total", `kind="`+kind+`"`, `outcome="translated"`))
	}
	if _, err := c.gateway.ExperimentalV1alpha1().XBackends(ns).Create(ctx, xBackendTo(ns, "pay", "api.pay.example", "pay-ca"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create XBackend %s/pay: %v", ns, err)
	}
	if _, err := c.gateway.ExperimentalV1alpha1().XBackendTrafficPolicies(ns).Create(ctx, retryBudgetFor(ns, "budget", "pay"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create XBackendTrafficPolicy %s/budget: %v", ns, err)
	}
	eventually(t, statusWait, "tlsplane translated the XBackend's and the XBackendTrafficPolicy's creation", func() error {
		if x, p := translated("XBackend"), translated("XBackendTrafficPolicy"); x < 1 || p < 1 {
			return fmt.Errorf("translated events: XBackend %v, XBackendTrafficPolicy %v", x, p)
		}
		return nil
	})

	// The CA the XBackend names is read: its edit is translated; the
	// unreferenced ConfigMap's edit is ignored.
	before := translated("ConfigMap")
	setCA(t, c, ns, "unrelated", string(harness.NewAuthority(t, "other CA").PEM))
	setCA(t, c, ns, "pay-ca", string(harness.NewAuthority(t, "rotated CA").PEM))
	eventually(t, statusWait, "the XBackend's CA ConfigMap edit translated", func() error {
		if got := translated("ConfigMap"); got != before+1 {
			return fmt.Errorf("translated ConfigMap events %v, want %v (the referenced one only)", got, before+1)
		}
		return nil
	})
	time.Sleep(500 * time.Millisecond) // the unreferenced edit, had it counted, has arrived
	if got := translated("ConfigMap"); got != before+1 {
		t.Errorf("translated ConfigMap events %v, want %v: the unreferenced ConfigMap's edit was translated", got, before+1)
	}

	for _, kind := range []string{"XBackend", "XBackendTrafficPolicy"} {
		if n := cp.metricSum(t, "tlsplane_kube_watch_errors_total", `kind="`+kind+`"`); n != "0" {
			t.Errorf("%s watch errors = %s, want 0 (RBAC or CRD missing?)\n%s", kind, n, tail(cp.Log(), 3000))
		}
	}
	if body, err := cp.get("/debug/status"); err != nil || !strings.Contains(string(body), `"xBackends"`) || !strings.Contains(string(body), `"xBackendTrafficPolicies"`) {
		t.Errorf("/debug/status lacks the X-kinds' lists: %v\n%s", err, tail(string(body), 2000))
	}
}

// crdResource is the CustomResourceDefinitions' resource.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// withoutXBackendCRDs deletes the X-kinds' CRDs from the shared API
// server until the test ends, then installs them again (no other test
// runs meanwhile: the package's tests are sequential).
func withoutXBackendCRDs(t *testing.T, c clients) {
	t.Helper()
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(api.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := apiserver.InstallXBackendCRDs(context.Background(), api.Config); err != nil {
			t.Errorf("install the XBackend CRDs again: %v", err)
		}
	})
	for name := range apiserver.XBackendCRDs {
		if err := dyn.Resource(crdResource).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete CustomResourceDefinition %s: %v", name, err)
		}
	}
	eventually(t, 60*time.Second, "the XBackend CRDs gone from discovery", func() error {
		for name := range apiserver.XBackendCRDs {
			if _, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("CustomResourceDefinition %s: %v", name, err)
			}
		}
		list, err := c.kube.Discovery().ServerResourcesForGroupVersion(gwxv1a1.GroupVersion.String())
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, r := range list.APIResources {
			if r.Name == "xbackends" || r.Name == "xbackendtrafficpolicies" {
				return fmt.Errorf("discovery still lists %s", r.Name)
			}
		}
		return nil
	})
}

// TestXBackendCRDsAbsent: without the X-kinds' CRDs, tlsplane names each
// missing CRD once, starts no informer for them (no watch error, no
// retry), and serves the rest: a BackendTLSPolicy is Accepted and its
// cluster served.
func TestXBackendCRDsAbsent(t *testing.T) {
	c := adminClients(t)
	withoutXBackendCRDs(t, c)
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("xbackends-absent"), "--namespaces", ns)...)

	createService(t, c, ns, "pay")
	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthority(t, "absent CRDs CA").PEM))
	createPolicy(t, c, policy(ns, "pay", "pay", "", "ca", "pay.example.com"))
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	cluster := clusterName(ns, "pay", 443)
	eventually(t, statusWait, "cluster "+cluster+" served", func() error {
		for _, name := range cp.snapshot(t).clusters {
			if name == cluster {
				return nil
			}
		}
		return fmt.Errorf("not in the snapshot")
	})

	log := cp.Log()
	for _, crd := range []string{"xbackends.gateway.networking.x-k8s.io", "xbackendtrafficpolicies.gateway.networking.x-k8s.io"} {
		n := 0
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, crdNotInstalled) && strings.Contains(line, "crd="+crd) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d warnings naming CRD %s missing, want 1:\n%s", n, crd, tail(log, 3000))
		}
	}
	for _, kind := range []string{"XBackend", "XBackendTrafficPolicy"} {
		if n := cp.metricSum(t, "tlsplane_kube_watch_errors_total", `kind="`+kind+`"`); n != "0" {
			t.Errorf("%s watch errors = %s without its CRD, want 0: an informer was started", kind, n)
		}
	}
}

// TestXBackendStatusWrittenBack: an XBackend referenced by an HTTPRoute
// of an accepted Gateway gets our parent entry for that Gateway (Accepted
// and ResolvedRefs True), beside another controller's entry, which stays;
// its XBackendTrafficPolicy gets our ancestor entry; `tlsplane status
// xbackend` shows it; and when the route goes, our entry goes and the
// other controller's stays. (It needs the translator's judging of
// XBackends, branch f/xbackend.)
func TestXBackendStatusWrittenBack(t *testing.T) {
	c := adminClients(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("xbackend-status"), "--namespaces", ns)...)

	class := "tlsplane-" + ns[strings.LastIndex(ns, "-")+1:]
	if _, err := c.gateway.GatewayV1().GatewayClasses().Create(ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec:       gwv1.GatewayClassSpec{ControllerName: controller},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create GatewayClass %s: %v", class, err)
	}
	t.Cleanup(func() { _ = c.gateway.GatewayV1().GatewayClasses().Delete(ctx, class, metav1.DeleteOptions{}) })
	if _, err := c.gateway.GatewayV1().Gateways(ns).Create(ctx, httpGateway(ns, "web", class, "192.0.2.20", 8080), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Gateway: %v", err)
	}

	// The XBackend, plaintext, with another controller's entry already.
	const other = gwv1.GatewayController("example.com/other")
	x, err := c.gateway.ExperimentalV1alpha1().XBackends(ns).Create(ctx, xBackendTo(ns, "pay", "api.pay.example", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create XBackend: %v", err)
	}
	x.Status.Ancestors = []gwxv1a1.BackendAncestorStatus{{ControllerName: other, AncestorRef: gwv1.ParentReference{Name: "theirs"},
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: metav1.Now()}}}}
	if _, err := c.gateway.ExperimentalV1alpha1().XBackends(ns).UpdateStatus(ctx, x, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("another controller's status on the XBackend: %v", err)
	}
	if _, err := c.gateway.ExperimentalV1alpha1().XBackendTrafficPolicies(ns).Create(ctx, retryBudgetFor(ns, "budget", "pay"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create XBackendTrafficPolicy: %v", err)
	}
	group, kind, port := gwv1.Group(gwxv1a1.GroupName), gwv1.Kind("XBackend"), gwv1.PortNumber(443)
	route := &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pay"},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "web"}}},
			Hostnames:       []gwv1.Hostname{"pay.example.com"},
			Rules: []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{
				BackendObjectReference: gwv1.BackendObjectReference{Group: &group, Kind: &kind, Name: "pay", Port: &port},
			}}}}},
		},
	}
	if _, err := c.gateway.GatewayV1().HTTPRoutes(ns).Create(ctx, route, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create HTTPRoute: %v", err)
	}
	expectRouteParent(t, c, ns, "pay", cond{metav1.ConditionTrue, "Accepted"}, cond{metav1.ConditionTrue, "ResolvedRefs"})

	// entries is the XBackend's parents as controller/Gateway name.
	entries := func() (*gwxv1a1.XBackend, []string, error) {
		x, err := c.gateway.ExperimentalV1alpha1().XBackends(ns).Get(ctx, "pay", metav1.GetOptions{})
		if err != nil {
			return nil, nil, err
		}
		var out []string
		for _, p := range x.Status.Ancestors {
			out = append(out, string(p.ControllerName)+"/"+string(p.AncestorRef.Name))
		}
		return x, out, nil
	}
	eventually(t, statusWait, "XBackend "+ns+"/pay: our parent Gateway web, Accepted and ResolvedRefs True, beside the other controller's", func() error {
		x, got, err := entries()
		if err != nil {
			return err
		}
		if strings.Join(got, ",") != string(other)+"/theirs,"+string(controller)+"/web" {
			return fmt.Errorf("parents %v", got)
		}
		ours := x.Status.Ancestors[1]
		if ours.AncestorRef.Kind != nil && *ours.AncestorRef.Kind != "Gateway" {
			return fmt.Errorf("our parent is a %s, want a Gateway", *ours.AncestorRef.Kind)
		}
		return expectConditions(ours.Conditions, map[string]cond{
			"Accepted": {metav1.ConditionTrue, "Accepted"}, "ResolvedRefs": {metav1.ConditionTrue, "ResolvedRefs"},
		}, x.Generation)
	})
	eventually(t, statusWait, "XBackendTrafficPolicy "+ns+"/budget: our ancestor Gateway web, Accepted", func() error {
		p, err := c.gateway.ExperimentalV1alpha1().XBackendTrafficPolicies(ns).Get(ctx, "budget", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, a := range p.Status.Ancestors {
			if a.ControllerName == controller && a.AncestorRef.Name == "web" {
				if got := findCondition(a.Conditions, "Accepted"); got == nil || got.Status != metav1.ConditionTrue {
					return fmt.Errorf("Accepted = %+v", got)
				}
				return nil
			}
		}
		return fmt.Errorf("ancestors %+v", p.Status.Ancestors)
	})
	if out := runStatusCommand(t, cp, "xbackend", ns+"/pay"); !strings.Contains(out, "XBackend "+ns+"/pay") || !strings.Contains(out, "Gateway "+ns+"/web") {
		t.Errorf("tlsplane status xbackend %s/pay:\n%s", ns, out)
	}

	// No route reaches it any more: our entry goes, theirs stays.
	if err := c.gateway.GatewayV1().HTTPRoutes(ns).Delete(ctx, "pay", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, statusWait, "our parent removed from XBackend "+ns+"/pay once no route reaches it", func() error {
		_, got, err := entries()
		if err != nil {
			return err
		}
		if strings.Join(got, ",") != string(other)+"/theirs" {
			return fmt.Errorf("parents %v", got)
		}
		return nil
	})
}

// TestXBackendTrafficPolicyStatusWrittenBack: an XBackendTrafficPolicy on
// a Service an HTTPRoute of an accepted Gateway reaches gets our ancestor
// entry for that Gateway, Accepted, beside another controller's entry,
// which stays; `tlsplane status xbackendtrafficpolicy` shows it.
func TestXBackendTrafficPolicyStatusWrittenBack(t *testing.T) {
	c := adminClients(t)
	ctx := context.Background()
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("xbackendtrafficpolicy-status"), "--namespaces", ns)...)

	class := "tlsplane-" + ns[strings.LastIndex(ns, "-")+1:]
	if _, err := c.gateway.GatewayV1().GatewayClasses().Create(ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec:       gwv1.GatewayClassSpec{ControllerName: controller},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create GatewayClass %s: %v", class, err)
	}
	t.Cleanup(func() { _ = c.gateway.GatewayV1().GatewayClasses().Delete(ctx, class, metav1.DeleteOptions{}) })
	if _, err := c.gateway.GatewayV1().Gateways(ns).Create(ctx, httpGateway(ns, "web", class, "192.0.2.21", 8080), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Gateway: %v", err)
	}
	createService(t, c, ns, "shop")
	if _, err := c.gateway.GatewayV1().HTTPRoutes(ns).Create(ctx, routeTo(ns, "shop", "web", "shop.example.com", ns, "shop", 443), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create HTTPRoute: %v", err)
	}
	budget := retryBudgetFor(ns, "budget", "shop")
	budget.Spec.TargetRefs[0].Group, budget.Spec.TargetRefs[0].Kind = "", "Service"
	created, err := c.gateway.ExperimentalV1alpha1().XBackendTrafficPolicies(ns).Create(ctx, budget, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create XBackendTrafficPolicy: %v", err)
	}
	const other = gwv1.GatewayController("example.com/other")
	created.Status.Ancestors = []gwv1.PolicyAncestorStatus{{ControllerName: other, AncestorRef: gwv1.ParentReference{Name: "theirs"},
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: metav1.Now()}}}}
	if _, err := c.gateway.ExperimentalV1alpha1().XBackendTrafficPolicies(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("another controller's status on the policy: %v", err)
	}

	eventually(t, statusWait, "XBackendTrafficPolicy "+ns+"/budget: the other controller's ancestor, then ours for Gateway web, Accepted", func() error {
		p, err := c.gateway.ExperimentalV1alpha1().XBackendTrafficPolicies(ns).Get(ctx, "budget", metav1.GetOptions{})
		if err != nil {
			return err
		}
		var got []string
		for _, a := range p.Status.Ancestors {
			got = append(got, string(a.ControllerName)+"/"+string(a.AncestorRef.Name))
		}
		if strings.Join(got, ",") != string(other)+"/theirs,"+string(controller)+"/web" {
			return fmt.Errorf("ancestors %v", got)
		}
		return expectConditions(p.Status.Ancestors[1].Conditions, map[string]cond{"Accepted": acceptedTrue}, p.Generation)
	})
	out := runStatusCommand(t, cp, "xbackendtrafficpolicy", ns+"/budget")
	for _, want := range []string{"XBackendTrafficPolicy " + ns + "/budget", "Gateway " + ns + "/web", "Accepted"} {
		if !strings.Contains(out, want) {
			t.Errorf("tlsplane status xbackendtrafficpolicy %s/budget lacks %q:\n%s", ns, want, out)
		}
	}
}
