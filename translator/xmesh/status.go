package xmesh

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/condition"
	"github.com/tlsplane/tlsplane/translator/mesh"
)

// Statuses are the statuses of the XMeshes of controller, by name (the
// last of a name wins, as for every kind); other controllers' XMeshes are
// left out: their status is not ours to write.
func Statuses(meshes []*gwxv1a1.XMesh, controller gwv1.GatewayController, now metav1.Time) map[string]gwxv1a1.MeshStatus {
	out := map[string]gwxv1a1.MeshStatus{}
	for _, m := range meshes {
		if m.Spec.ControllerName != controller {
			delete(out, m.Name)
			continue
		}
		out[m.Name] = Status(m, now)
	}
	return out
}

// Status is the status of an XMesh of ours: Accepted, with the mesh
// features tlsplane claims, or not accepted when it names parameters.
func Status(m *gwxv1a1.XMesh, now metav1.Time) gwxv1a1.MeshStatus {
	cond := metav1.Condition{Type: string(gwxv1a1.MeshConditionAccepted), Status: metav1.ConditionTrue,
		Reason: string(gwxv1a1.MeshReasonAccepted), Message: "XMesh is accepted"}
	if p := m.Spec.ParametersRef; p != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, string(gwxv1a1.MeshReasonInvalidParameters)
		cond.Message = fmt.Sprintf("XMesh %s: spec.parametersRef %s: tlsplane takes no mesh parameters", m.Name, parametersRef(p))
	}
	return gwxv1a1.MeshStatus{
		Conditions:        condition.Stamp(m.Status.Conditions, []metav1.Condition{cond}, m.Generation, now),
		SupportedFeatures: supportedFeatures(),
	}
}

// supportedFeatures are mesh.SupportedFeatures as the status lists them,
// sorted by name (the API's list is a set kept in order).
func supportedFeatures() []gwv1.SupportedFeature {
	names := slices.Clone(mesh.SupportedFeatures)
	slices.Sort(names)
	out := make([]gwv1.SupportedFeature, 0, len(names))
	for _, n := range slices.Compact(names) {
		out = append(out, gwv1.SupportedFeature{Name: n})
	}
	return out
}

// parametersRef is a reference as a message quotes it: group/kind name,
// with its namespace when it has one (core for the empty group).
func parametersRef(p *gwv1.ParametersReference) string {
	group := string(p.Group)
	if group == "" {
		group = "core"
	}
	ref := fmt.Sprintf("%s/%s %s", group, p.Kind, p.Name)
	if p.Namespace != nil {
		ref = fmt.Sprintf("%s/%s %s/%s", group, p.Kind, *p.Namespace, p.Name)
	}
	return fmt.Sprintf("%q", ref)
}
