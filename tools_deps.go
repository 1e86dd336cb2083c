//go:build tools

// Package tools pins the dependencies the packages under construction use,
// so go.mod lists them before their first import lands. Removed once every
// one is imported by real code.
package tools

import (
	_ "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	_ "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	_ "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "google.golang.org/grpc"
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/tools/leaderelection"
	_ "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	_ "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	_ "sigs.k8s.io/yaml"
)
