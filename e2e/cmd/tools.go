//go:build tools

// Package tools pins kube-apiserver's main package in this module, so
// `go build k8s.io/kubernetes/cmd/kube-apiserver` resolves from go.sum.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
