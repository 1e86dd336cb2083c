// Package node stands in for the node side of a Kubernetes cluster on a
// machine with no kubelet and no container runtime: a Linux bridge whose
// hosts are network namespaces (Network), an agent that schedules Pods to
// its one Node and runs each Pod whose image it knows as a local process in
// a namespace of its own, serving the kubelet's logs, port-forward and
// exec to the API server (Agent), and a Gateway provisioner that gives each
// Gateway of a class a real Envoy in a namespace and a LoadBalancer
// Service announcing its address (Provisioner), and the cluster's DNS for
// those Pods (StartClusterDNS, with the agent options WithClusterDNS and
// WithServiceCIDR). A container runs as its securityContext's user and
// group. Init containers run first, in order, as the kubelet runs them
// (lifecycle.go): a regular one to completion, restarted with backoff
// while it fails; a native sidecar (restartPolicy Always) started and kept
// running before the next; the containers only then; the status carries
// initContainerStatuses and Initialized. Volumes are written with the
// kubelet's modes under a root every user may traverse, so a container
// running as another user (the mesh sidecar, UID 1337) reads and writes
// them. Not run: probes (a container is Ready once started), and the
// containers of a Pod whose init container failed with restartPolicy
// Never (it is reported Failed). Everything else a cluster does comes
// from the real kube-apiserver and kube-controller-manager.
//
// It needs root and iproute2. Every address it hands out is on the bridge
// the test created; nothing it starts has a route anywhere else.
package node
