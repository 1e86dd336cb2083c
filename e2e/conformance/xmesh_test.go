package conformance

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlsplane/tlsplane/e2e/harness"
	"github.com/tlsplane/tlsplane/translator/mesh"
)

// meshName is the XMesh of tlsplane's controller a run creates when the
// suite infers the mesh features from it (xmeshInferred).
const meshName = "tlsplane"

// xmeshInferred says whether this run hands the suite an XMesh
// (ConformanceOptions.MeshName) to infer the mesh features from its
// status.supportedFeatures, which tlsplane writes, instead of the list
// meshRunFeatures gives by hand: on the experimental channel with the
// mesh profiles on, unless CONFORMANCE_MESH_XMESH=0. Only the
// experimental channel's CRDs hold XMesh (the suite refuses CRDs of two
// channels, so the standard channel's run cannot add it, and keeps the
// hand-given list).
func xmeshInferred(channel string) bool {
	return os.Getenv("CONFORMANCE_MESH_XMESH") != "0" && meshEnabled() && channel == "experimental"
}

// createXMesh creates XMesh meshName of tlsplane's controller and waits
// until tlsplane accepts it and lists mesh.SupportedFeatures in its
// status: the suite reads them once, at its start.
func createXMesh(ctx context.Context, t *testing.T, gw gwclient.Interface) {
	t.Helper()
	_, err := gw.ExperimentalV1alpha1().XMeshes().Create(ctx, &gwxv1a1.XMesh{
		ObjectMeta: metav1.ObjectMeta{Name: meshName},
		Spec:       gwxv1a1.MeshSpec{ControllerName: controllerName},
	}, metav1.CreateOptions{})
	must(t, err)
	var want []string
	for _, f := range mesh.SupportedFeatures {
		want = append(want, string(f))
	}
	slices.Sort(want)
	err = harness.Eventually(60*time.Second, 200*time.Millisecond, func() error {
		m, err := gw.ExperimentalV1alpha1().XMeshes().Get(ctx, meshName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		accepted := slices.ContainsFunc(m.Status.Conditions, func(c metav1.Condition) bool {
			return c.Type == string(gwxv1a1.MeshConditionAccepted) && c.Status == metav1.ConditionTrue && c.ObservedGeneration == m.Generation
		})
		var got []string
		for _, f := range m.Status.SupportedFeatures {
			got = append(got, string(f.Name))
		}
		if !accepted || !slices.Equal(got, want) {
			return fmt.Errorf("XMesh %s: conditions %+v, supportedFeatures %v; want Accepted=True and %v", meshName, m.Status.Conditions, got, want)
		}
		return nil
	})
	must(t, err)
}
