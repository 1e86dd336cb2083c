//go:build tools

// Package tools pins Docker Compose v2's main package in this module, so
// `go build github.com/docker/compose/v2/cmd` resolves from go.sum.
package tools

import (
	_ "github.com/docker/compose/v2/cmd"
)
