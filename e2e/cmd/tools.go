//go:build tools

// Package tools pins kube-apiserver's and kube-controller-manager's main
// packages in this module, so
// `go build k8s.io/kubernetes/cmd/...` resolves from go.sum.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
