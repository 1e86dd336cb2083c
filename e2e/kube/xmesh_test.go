package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/translator/mesh"
)

// withXMeshCRD installs the XMesh CRD in the shared API server until the
// test ends, then deletes it (and with it every XMesh), so the other
// tests keep the server they expect (the package's tests are
// sequential).
func withXMeshCRD(t *testing.T, c clients) {
	t.Helper()
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(api.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for name := range apiserver.XMeshCRDs {
			if err := dyn.Resource(crdResource).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete CustomResourceDefinition %s: %v", name, err)
			}
		}
	})
	if err := apiserver.InstallXMeshCRDs(ctx, api.Config); err != nil {
		t.Fatalf("install the XMesh CRD: %v", err)
	}
	eventually(t, 60*time.Second, "xmeshes in discovery", func() error {
		list, err := c.kube.Discovery().ServerResourcesForGroupVersion(gwxv1a1.GroupVersion.String())
		if err != nil {
			return err
		}
		for _, r := range list.APIResources {
			if r.Name == "xmeshes" {
				return nil
			}
		}
		return fmt.Errorf("discovery does not list xmeshes")
	})
}

// xMeshOf is the XMesh name of controllerName, with params as its
// spec.parametersRef (nil for none).
func xMeshOf(name string, controllerName gwv1.GatewayController, params *gwv1.ParametersReference) *gwxv1a1.XMesh {
	return &gwxv1a1.XMesh{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gwxv1a1.MeshSpec{ControllerName: controllerName, ParametersRef: params}}
}

// TestXMeshStatusWrittenBack: with the XMesh CRD installed, tlsplane
// (deploy/'s ServiceAccount, so its RBAC too; --namespaces restricted,
// which a cluster-scoped kind ignores) writes, on the real API server,
// Accepted=True (Accepted, observedGeneration) and supportedFeatures =
// mesh.SupportedFeatures on an XMesh of its controller; Accepted=False
// (InvalidParameters, naming the XMesh, spec.parametersRef and its value)
// on one with parametersRef; nothing on another controller's. An edit
// adding parameters to ours is followed (its new generation refused),
// and removing them accepts it again.
func TestXMeshStatusWrittenBack(t *testing.T) {
	c := adminClients(t)
	ctx := context.Background()
	withXMeshCRD(t, c)
	meshes := c.gateway.ExperimentalV1alpha1().XMeshes()
	params := &gwv1.ParametersReference{Group: "example.com", Kind: "MeshConfig", Name: "knobs"}
	var theirs *gwxv1a1.XMesh // as created: the CRD's default status (Accepted Unknown, Pending)
	for _, m := range []*gwxv1a1.XMesh{
		xMeshOf("tlsplane-mesh", controller, nil),
		xMeshOf("tlsplane-tuned", controller, params),
		xMeshOf("other-mesh", "example.com/mesh-controller", nil),
	} {
		created, err := meshes.Create(ctx, m, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create XMesh %s: %v", m.Name, err)
		}
		if m.Name == "other-mesh" {
			theirs = created
		}
	}
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("xmesh"), "--namespaces", ns)...)

	var wantFeatures []string
	for _, f := range mesh.SupportedFeatures {
		wantFeatures = append(wantFeatures, string(f))
	}
	slices.Sort(wantFeatures)
	// expectAccepted waits until XMesh name's only condition is Accepted
	// with status and reason, of its current generation, with message
	// holding words, and its supportedFeatures are the mesh features.
	expectAccepted := func(name string, status metav1.ConditionStatus, reason string, words ...string) {
		t.Helper()
		eventually(t, statusWait, "XMesh "+name+" Accepted="+string(status)+" "+reason, func() error {
			m, err := meshes.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			st := m.Status
			if len(st.Conditions) != 1 {
				return fmt.Errorf("conditions %+v, want Accepted alone", st.Conditions)
			}
			cond := st.Conditions[0]
			if cond.Type != "Accepted" || cond.Status != status || cond.Reason != reason || cond.ObservedGeneration != m.Generation {
				return fmt.Errorf("%s=%s %s (observedGeneration %d of %d): %s", cond.Type, cond.Status, cond.Reason, cond.ObservedGeneration, m.Generation, cond.Message)
			}
			for _, w := range words {
				if !strings.Contains(cond.Message, w) {
					return fmt.Errorf("message %q lacks %q", cond.Message, w)
				}
			}
			var got []string
			for _, f := range st.SupportedFeatures {
				got = append(got, string(f.Name))
			}
			if !slices.Equal(got, wantFeatures) {
				return fmt.Errorf("supportedFeatures %v, want %v", got, wantFeatures)
			}
			return nil
		})
	}

	t.Log("ours: Accepted with the mesh features; with parametersRef: InvalidParameters")
	expectAccepted("tlsplane-mesh", metav1.ConditionTrue, "Accepted")
	expectAccepted("tlsplane-tuned", metav1.ConditionFalse, "InvalidParameters", "XMesh tlsplane-tuned", "spec.parametersRef", `"example.com/MeshConfig knobs"`)

	t.Log("another controller's: no status of ours, its object untouched")
	time.Sleep(2 * time.Second) // the writer wrote ours above; one more round for theirs, were it queued
	if m, err := meshes.Get(ctx, "other-mesh", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if m.ResourceVersion != theirs.ResourceVersion || len(m.Status.SupportedFeatures) != 0 ||
		len(m.Status.Conditions) != 1 || m.Status.Conditions[0].Reason != string(gwxv1a1.MeshReasonPending) {
		t.Errorf("XMesh other-mesh of another controller was written: resourceVersion %s (created %s), status %+v, want the CRD's default (Pending) untouched",
			m.ResourceVersion, theirs.ResourceVersion, m.Status)
	}

	t.Log("parameters added to ours: refused at its new generation; removed: accepted again")
	setParams := func(p *gwv1.ParametersReference) {
		t.Helper()
		m, err := meshes.Get(ctx, "tlsplane-mesh", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m.Spec.ParametersRef = p
		if _, err := meshes.Update(ctx, m, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update XMesh tlsplane-mesh: %v", err)
		}
	}
	setParams(&gwv1.ParametersReference{Kind: "ConfigMap", Name: "mesh-settings"})
	expectAccepted("tlsplane-mesh", metav1.ConditionFalse, "InvalidParameters", "XMesh tlsplane-mesh", `"core/ConfigMap mesh-settings"`)
	setParams(nil)
	expectAccepted("tlsplane-mesh", metav1.ConditionTrue, "Accepted")

	if n := cp.metricSum(t, "tlsplane_kube_watch_errors_total", `kind="XMesh"`); n != "0" {
		t.Errorf("XMesh watch errors = %s, want 0 (deploy/rbac.yaml lets it list and watch)", n)
	}
}
