package kube

import "testing"

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

	checkAccess(t, adminClients(t), "system:serviceaccount:tlsplane-system:tlsplane", []access{
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
		{"watch", "gateway.networking.k8s.io", "udproutes", "", "", true},
		{"watch", "gateway.networking.k8s.io", "referencegrants", "", "", true},
		{"watch", "", "namespaces", "", "", true},
		{"update", "gateway.networking.k8s.io", "gatewayclasses", "status", "", true},
		{"update", "gateway.networking.k8s.io", "gateways", "status", "edge", true},
		{"update", "gateway.networking.k8s.io", "httproutes", "status", "edge", true},
		{"update", "gateway.networking.k8s.io", "grpcroutes", "status", "edge", true},
		{"update", "gateway.networking.k8s.io", "tlsroutes", "status", "edge", true},
		{"update", "gateway.networking.k8s.io", "tcproutes", "status", "edge", true},
		{"update", "gateway.networking.k8s.io", "udproutes", "status", "edge", true},
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
		{"update", "gateway.networking.k8s.io", "udproutes", "", "edge", false},
		{"patch", "gateway.networking.k8s.io", "udproutes", "status", "edge", false},
		{"create", "gateway.networking.k8s.io", "referencegrants", "", "edge", false},
		{"update", "gateway.networking.k8s.io", "referencegrants", "status", "edge", false},
		{"update", "", "namespaces", "", "", false},
		{"list", "gateway.networking.k8s.io", "backendlbpolicies", "", "", false},
		// The replicas' handshake ConfigMaps, in its own namespace only.
		{"create", "", "configmaps", "", "tlsplane-system", true},
		{"delete", "", "configmaps", "", "tlsplane-system", true},
		{"create", "", "configmaps", "", "shop", false},
		// The informers list and watch; only the status writer gets.
		{"get", "", "secrets", "", "shop", false},
		{"get", "gateway.networking.k8s.io", "backendtlspolicies", "", "shop", true},
		{"patch", "gateway.networking.k8s.io", "backendtlspolicies", "status", "shop", false},
		// The experimental external backends: read, and their status
		// written; never their spec, never a patch, nothing else of the
		// group.
		{"watch", "gateway.networking.x-k8s.io", "xbackends", "", "", true},
		{"watch", "gateway.networking.x-k8s.io", "xbackendtrafficpolicies", "", "", true},
		{"get", "gateway.networking.x-k8s.io", "xbackends", "", "shop", true},
		{"get", "gateway.networking.x-k8s.io", "xbackendtrafficpolicies", "", "shop", true},
		{"update", "gateway.networking.x-k8s.io", "xbackends", "status", "shop", true},
		{"update", "gateway.networking.x-k8s.io", "xbackendtrafficpolicies", "status", "shop", true},
		{"update", "gateway.networking.x-k8s.io", "xbackends", "", "shop", false},
		{"update", "gateway.networking.x-k8s.io", "xbackendtrafficpolicies", "", "shop", false},
		{"patch", "gateway.networking.x-k8s.io", "xbackends", "status", "shop", false},
		{"patch", "gateway.networking.x-k8s.io", "xbackendtrafficpolicies", "status", "shop", false},
		// XMesh, cluster-scoped: read, and its status written (ours whole).
		{"list", "gateway.networking.x-k8s.io", "xmeshes", "", "", true},
		{"watch", "gateway.networking.x-k8s.io", "xmeshes", "", "", true},
		{"get", "gateway.networking.x-k8s.io", "xmeshes", "", "", true},
		{"update", "gateway.networking.x-k8s.io", "xmeshes", "status", "", true},
		{"update", "gateway.networking.x-k8s.io", "xmeshes", "", "", false},
		{"patch", "gateway.networking.x-k8s.io", "xmeshes", "status", "", false},
		{"create", "gateway.networking.x-k8s.io", "xmeshes", "", "", false},
		// Nothing else of the group.
		{"list", "gateway.networking.x-k8s.io", "xlistenersets", "", "", false},
	})
}
