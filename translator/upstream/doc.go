// Package upstream owns the rules from Service ports to cluster plans:
// which ports get a cluster, under which policy's verdict, the
// ExternalName and h2c rules, and each port's ready endpoints per zone. It
// judges; it never builds Envoy protos (it must not import the emitter).
package upstream
