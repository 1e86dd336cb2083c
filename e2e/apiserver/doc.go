// Package apiserver runs a real Kubernetes API server for end-to-end tests:
// an embedded etcd and kube-apiserver (both built by
// hack/build-kube-apiserver.sh into e2e/.cache/bin) on loopback, with random
// free ports, self-generated certificates, an admin token, RBAC enabled and
// the Gateway API standard CRDs installed. It owns the processes it starts
// and stops them; it never touches anything but its own temporary directory.
package apiserver
