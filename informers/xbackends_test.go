package informers

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlsplane/tlsplane/translator"
)

// xGroupVersion and xResources are the discovery answer of a cluster with
// the experimental X-kinds' CRDs.
var (
	xGroupVersion = gwxv1a1.GroupVersion.String()
	xResources    = []string{"xbackends", "xbackendtrafficpolicies", "xmeshes"}
)

// Either X-kind's CRD may be missing: it is named, and the other kinds
// are served regardless.
func TestDiscoverXBackendKinds(t *testing.T) {
	v1 := []string{"backendtlspolicies", "gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "listenersets", "udproutes", "referencegrants"}
	for _, c := range []struct {
		x           []string
		backends    bool
		policies    bool
		meshes      bool
		wantMissing []string
	}{
		{xResources, true, true, true, nil},
		{nil, false, false, false, []string{crdXBackends, crdXBackendTrafficPolicies, crdXMeshes}},
		{[]string{"xbackends"}, true, false, false, []string{crdXBackendTrafficPolicies, crdXMeshes}},
		{[]string{"xbackendtrafficpolicies", "xmeshes"}, false, true, true, []string{crdXBackends}},
	} {
		kube := kubefake.NewClientset()
		gvs := map[string][]string{"gateway.networking.k8s.io/v1": v1}
		if c.x != nil {
			gvs[xGroupVersion] = c.x
		}
		kube.Discovery().(*fakediscovery.FakeDiscovery).Resources = resources(gvs)
		got, err := discover(kube.Discovery())
		if err != nil {
			t.Fatalf("%v: %v", c.x, err)
		}
		if got.xBackends != c.backends || got.xBackendTrafficPolicies != c.policies || got.xMeshes != c.meshes || !slices.Equal(got.missing(), c.wantMissing) {
			t.Errorf("%v: served XBackends %v, XBackendTrafficPolicies %v, XMeshes %v, missing %v; want %v, %v, %v, %v",
				c.x, got.xBackends, got.xBackendTrafficPolicies, got.xMeshes, got.missing(), c.backends, c.policies, c.meshes, c.wantMissing)
		}
	}
}

func xBackend(ns, name string) *gwxv1a1.XBackend {
	secret := gwv1.Kind("Secret")
	return &gwxv1a1.XBackend{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{
			lastApplied: "{copy}", "tlsplane.io/crlRef": "ConfigMap/pay-crl",
		}},
		Spec: gwxv1a1.BackendSpec{
			Type:             gwxv1a1.BackendTypeExternalHostname,
			Port:             gwxv1a1.BackendPort{Port: 443},
			ExternalHostname: &gwxv1a1.ExternalHostnameBackend{Hostname: "api.pay.example"},
			TLS: &gwxv1a1.BackendTLS{
				Mode:                 gwxv1a1.BackendTLSModeClientAndServer,
				ClientCertificateRef: &gwv1.SecretObjectReference{Kind: &secret, Name: "pay-client"},
				Validation: gwv1.BackendTLSPolicyValidation{
					Hostname: "api.pay.example",
					CACertificateRefs: []gwv1.LocalObjectReference{
						{Kind: "ConfigMap", Name: "pay-ca"},
						{Group: "example.com", Kind: "ConfigMap", Name: "not-core"},
					},
				},
			},
		},
	}
}

// The index of references knows what an XBackend's TLS reads: its CA
// refs, its client certificate, and the objects its tlsplane.io/
// annotations name; nothing of another group.
func TestRefsOfXBackend(t *testing.T) {
	other := gwv1.Namespace("certs")
	x := xBackend("shop", "pay")
	shared := xBackend("shop", "shared")
	shared.Annotations = nil
	shared.Spec.TLS.Validation.CACertificateRefs = []gwv1.LocalObjectReference{{Kind: "Secret", Name: "ca-in-secret"}}
	shared.Spec.TLS.ClientCertificateRef.Namespace = &other
	r := refsOf(nil, nil, nil, []*gwxv1a1.XBackend{x, shared})
	nn := func(ns, name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }
	wantConfigMaps := map[types.NamespacedName]int{nn("shop", "pay-ca"): 1, nn("shop", "pay-crl"): 1}
	wantSecrets := map[types.NamespacedName]int{nn("shop", "pay-client"): 1, nn("shop", "ca-in-secret"): 1, nn("certs", "pay-client"): 1}
	if !reflect.DeepEqual(r.configMaps, wantConfigMaps) || !reflect.DeepEqual(r.secrets, wantSecrets) {
		t.Errorf("refs: ConfigMaps %v, Secrets %v; want %v, %v", r.configMaps, r.secrets, wantConfigMaps, wantSecrets)
	}
	// Dropping TLS releases what it read.
	flipped := 0
	plain := x.DeepCopy()
	plain.Spec.TLS, plain.Annotations = nil, nil
	r.hold(kindXBackend, plain, func(translator.Kind, types.NamespacedName) { flipped++ })
	if flipped != 3 || len(r.configMaps) != 0 || len(r.secrets) != 2 {
		t.Errorf("after TLS removed: %d flips, ConfigMaps %v, Secrets %v; want 3, none, the other XBackend's 2", flipped, r.configMaps, r.secrets)
	}
}

func TestSourceReadsXBackends(t *testing.T) {
	x := xBackend("shop", "pay")
	policy := &gwxv1a1.XBackendTrafficPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "budget", Annotations: map[string]string{lastApplied: "{copy}"}},
		Spec: gwxv1a1.BackendTrafficPolicySpec{TargetRefs: []gwxv1a1.LocalPolicyTargetReference{{
			Group: gwxv1a1.GroupName, Kind: "XBackend", Name: "pay",
		}}},
	}
	ca := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay-ca"}, Data: map[string]string{"ca.crt": "CA", "other": "x"}}
	client := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay-client"},
		Data: map[string][]byte{"tls.crt": []byte("CHAIN"), "tls.key": []byte("KEY")}}
	unrelated := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}}
	kube := kubefake.NewClientset(ca, client, unrelated)
	gwc := gwfake.NewSimpleClientset()
	ctx := context.Background()
	if _, err := gwc.ExperimentalV1alpha1().XBackends("shop").Create(ctx, x, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := gwc.ExperimentalV1alpha1().XBackendTrafficPolicies("shop").Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	src, changes := runSource(t, kube, gwc, map[string][]string{
		"gateway.networking.k8s.io/v1": {"backendtlspolicies"},
		xGroupVersion:                  xResources,
	})

	in := src.Inputs()
	if len(in.XBackends) != 1 || len(in.XBackendTrafficPolicies) != 1 {
		t.Fatalf("inputs: %d XBackends, %d XBackendTrafficPolicies; want 1 each", len(in.XBackends), len(in.XBackendTrafficPolicies))
	}
	if in.XBackends[0].Annotations[lastApplied] != "" || in.XBackendTrafficPolicies[0].Annotations[lastApplied] != "" {
		t.Error("an X-kind kept its last-applied copy: the transform did not run")
	}
	if len(in.ConfigMaps) != 1 || in.ConfigMaps[0].Name != "pay-ca" || len(in.Secrets) != 1 || in.Secrets[0].Name != "pay-client" {
		t.Fatalf("inputs: ConfigMaps %v, Secrets %v; want the XBackend's CA and client certificate only", names(in.ConfigMaps), names(in.Secrets))
	}
	if got, ok := src.XBackend(nameOfAny(x)); !ok || got.Spec.ExternalHostname.Hostname != "api.pay.example" {
		t.Errorf("XBackend lookup = %v, %v", got, ok)
	}
	if _, ok := src.XBackendTrafficPolicy(nameOfAny(policy)); !ok {
		t.Error("XBackendTrafficPolicy lookup found nothing")
	}

	waitChanges := func(want int32, what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for changes.Load() < want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := changes.Load(); got != want {
			t.Fatalf("after %s: %d change signals, want %d", what, got, want)
		}
	}
	src.Changes() // the first call is a resync
	// An unreferenced ConfigMap's change is ignored; the CA's is not.
	unrelated.Data = map[string]string{"a": "b"}
	if _, err := kube.CoreV1().ConfigMaps("shop").Update(ctx, unrelated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ca.Data["ca.crt"] = "NEWCA"
	if _, err := kube.CoreV1().ConfigMaps("shop").Update(ctx, ca, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitChanges(1, "the CA's update")
	if got := src.Changes().Objects; len(got) != 1 || got[0].Kind != translator.KindConfigMap || got[0].Key != nameOfAny(ca) {
		t.Errorf("changes = %+v, want the ConfigMap shop/pay-ca", got)
	}

	// An XBackend's edit is a change of its kind; one that drops its
	// client certificate drops the Secret from the inputs too.
	x.Spec.TLS.ClientCertificateRef = nil
	x.Spec.TLS.Mode = gwxv1a1.BackendTLSModeServerOnly
	if _, err := gwc.ExperimentalV1alpha1().XBackends("shop").Update(ctx, x, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitChanges(2, "the XBackend's update")
	got := src.Changes().Objects
	want := []translator.Change{{Kind: translator.KindSecret, Key: nameOfAny(client)}, {Kind: translator.KindXBackend, Key: nameOfAny(x)}}
	if len(got) != 2 || got[0].Kind != want[0].Kind || got[0].Key != want[0].Key || got[0].Object != nil || got[1].Kind != want[1].Kind || got[1].Key != want[1].Key {
		t.Errorf("changes = %+v, want its former client certificate deleted, then the XBackend", got)
	}
	if s := src.Inputs().Secrets; len(s) != 0 {
		t.Errorf("secrets = %v, want none once no XBackend names the client certificate", names(s))
	}

	policy.Spec.TargetRefs[0].Name = "other"
	if _, err := gwc.ExperimentalV1alpha1().XBackendTrafficPolicies("shop").Update(ctx, policy, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitChanges(3, "the XBackendTrafficPolicy's update")
	if got := src.Changes().Objects; len(got) != 1 || got[0].Kind != translator.KindXBackendTrafficPolicy || got[0].Key != nameOfAny(policy) {
		t.Errorf("changes = %+v, want the XBackendTrafficPolicy shop/budget", got)
	}

	// A status-only update (ours coming back) signals no translation.
	x.Status.Ancestors = []gwxv1a1.BackendAncestorStatus{{ControllerName: "tlsplane.io/controller",
		AncestorRef: gwv1.ParentReference{Name: "web"}}}
	if _, err := gwc.ExperimentalV1alpha1().XBackends("shop").UpdateStatus(ctx, x, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := changes.Load(); got != 3 {
		t.Errorf("after the XBackend's status update: %d change signals, want 3", got)
	}
}

// Without the X-kinds' CRDs, objects of theirs the client would list are
// not read: the kinds are empty and the rest is served.
func TestSourceWithoutXBackendCRDs(t *testing.T) {
	x := xBackend("shop", "pay")
	pol := &gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay"}}
	gwc := gwfake.NewSimpleClientset(pol)
	if _, err := gwc.ExperimentalV1alpha1().XBackends("shop").Create(context.Background(), x, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	src, _ := runSource(t, kubefake.NewClientset(), gwc, map[string][]string{"gateway.networking.k8s.io/v1": {"backendtlspolicies"}})
	in := src.Inputs()
	if len(in.Policies) != 1 || in.XBackends != nil || in.XBackendTrafficPolicies != nil {
		t.Errorf("inputs: %d policies, XBackends %v, XBackendTrafficPolicies %v; want 1, none, none", len(in.Policies), in.XBackends, in.XBackendTrafficPolicies)
	}
	if _, ok := src.XBackend(nameOfAny(x)); ok {
		t.Error("XBackend lookup found something without the XBackend CRD")
	}
	if _, ok := src.XBackendTrafficPolicy(nameOfAny(x)); ok {
		t.Error("XBackendTrafficPolicy lookup found something without its CRD")
	}
}

func names[T metav1.Object](objs []T) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	return out
}
