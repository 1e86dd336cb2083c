//go:build tools

// Package tools pins the helm CLI's main package in this module, so
// `go build helm.sh/helm/v3/cmd/helm` resolves from go.sum.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
