package kube

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDeployManifestsApply applies deploy/ to the real API server (the
// Deployment, Service and PDB as a server-side dry run: no kubelet runs
// here), so the manifests cannot rot, and checks that the ServiceAccount
// gets exactly what tlsplane needs. The other tests run tlsplane with this
// ServiceAccount's token, which proves the grants are sufficient.
func TestDeployManifestsApply(t *testing.T) {
	applyDeploy(t, "namespace.yaml", false)
	applyDeploy(t, "rbac.yaml", false)
	applyDeploy(t, "deployment.yaml", true)
	applyDeploy(t, "pdb.yaml", true)

	c := adminClients(t)
	sa := "system:serviceaccount:tlsplane-system:tlsplane"
	for _, tc := range []struct {
		verb, group, resource, subresource, namespace string
		allowed                                       bool
	}{
		{"watch", "gateway.networking.k8s.io", "backendtlspolicies", "", "", true},
		{"update", "gateway.networking.k8s.io", "backendtlspolicies", "status", "shop", true},
		{"list", "", "secrets", "", "", true},
		{"watch", "discovery.k8s.io", "endpointslices", "", "", true},
		{"update", "coordination.k8s.io", "leases", "", "tlsplane-system", true},
		{"watch", "gateway.networking.k8s.io", "gatewayclasses", "", "", true},
		{"watch", "gateway.networking.k8s.io", "gateways", "", "", true},
		{"watch", "gateway.networking.k8s.io", "httproutes", "", "", true},
		{"watch", "gateway.networking.k8s.io", "grpcroutes", "", "", true},
		{"watch", "gateway.networking.k8s.io", "tlsroutes", "", "", true},
		{"watch", "gateway.networking.k8s.io", "tcproutes", "", "", true},
		{"watch", "gateway.networking.k8s.io", "referencegrants", "", "", true},
		{"watch", "", "namespaces", "", "", true},
		{"update", "gateway.networking.k8s.io", "gatewayclasses", "status", "", true},
		{"update", "gateway.networking.k8s.io", "gateways", "status", "edge", true},
		{"update", "gateway.networking.k8s.io", "httproutes", "status", "edge", true},
		{"update", "gateway.networking.k8s.io", "grpcroutes", "status", "edge", true},
		{"update", "gateway.networking.k8s.io", "tlsroutes", "status", "edge", true},
		{"update", "gateway.networking.k8s.io", "tcproutes", "status", "edge", true},
		// Least privilege: never the policies' spec, nothing it does not read,
		// Leases only in its own namespace.
		{"update", "gateway.networking.k8s.io", "backendtlspolicies", "", "shop", false},
		{"delete", "", "secrets", "", "shop", false},
		{"list", "", "pods", "", "", false},
		{"update", "coordination.k8s.io", "leases", "", "kube-system", false},
		{"update", "gateway.networking.k8s.io", "gateways", "", "edge", false},
		{"update", "gateway.networking.k8s.io", "httproutes", "", "edge", false},
		{"update", "gateway.networking.k8s.io", "grpcroutes", "", "edge", false},
		{"patch", "gateway.networking.k8s.io", "grpcroutes", "status", "edge", false},
		{"update", "gateway.networking.k8s.io", "tlsroutes", "", "edge", false},
		{"update", "gateway.networking.k8s.io", "tcproutes", "", "edge", false},
		{"patch", "gateway.networking.k8s.io", "tlsroutes", "status", "edge", false},
		{"patch", "gateway.networking.k8s.io", "tcproutes", "status", "edge", false},
		{"create", "gateway.networking.k8s.io", "referencegrants", "", "edge", false},
		{"update", "gateway.networking.k8s.io", "referencegrants", "status", "edge", false},
		{"update", "", "namespaces", "", "", false},
		{"list", "gateway.networking.k8s.io", "udproutes", "", "", false},
	} {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: sa,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: tc.verb, Group: tc.group, Resource: tc.resource, Subresource: tc.subresource, Namespace: tc.namespace,
			},
		}}
		got, err := c.kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), review, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed != tc.allowed {
			t.Errorf("%s %s %s/%s in %q: allowed = %v, want %v", sa, tc.verb, tc.resource, tc.subresource, tc.namespace, got.Status.Allowed, tc.allowed)
		}
	}
}
