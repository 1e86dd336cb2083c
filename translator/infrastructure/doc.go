// Package infrastructure judges what the Gateway provisioner may do for a
// Gateway: whether its namespace is one where Gateways are provisioned,
// and which of its spec.infrastructure label and annotation keys reach the
// ServiceAccount, Deployment, Pod, ConfigMap and Service made for it. The
// translator reports the judgement on the Gateway's status; the
// provisioner applies only what it allowed. It is pure: no I/O, no
// Kubernetes client.
package infrastructure
