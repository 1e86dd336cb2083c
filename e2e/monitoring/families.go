package monitoring

// KubernetesOnly are the metric families tlsplane registers only in
// Kubernetes mode (the informers, the status writer, and with leader
// election the replicas' shared handshake windows and backend certificate
// inventories), so a tlsplane serving --dir never exports them. TestMetricsExported requires each to be
// declared in tlsplane's source and absent in directory mode; e2e/kube's
// TestMonitoringMetricsInKubernetesMode requires each in the /metrics of
// a tlsplane watching a real API server.
var KubernetesOnly = []string{
	"tlsplane_backend_certificate_peer_read_errors_total",
	"tlsplane_backend_certificate_peer_write_errors_total",
	"tlsplane_backend_certificate_peer_writes_total",
	"tlsplane_backend_certificate_peers",
	"tlsplane_handshake_peer_read_errors_total",
	"tlsplane_handshake_peer_write_errors_total",
	"tlsplane_handshake_peer_writes_total",
	"tlsplane_handshake_peers",
	"tlsplane_kube_events_total",
	"tlsplane_kube_watch_errors_total",
	"tlsplane_status_leader",
	"tlsplane_status_writes_total",
}

// ProvisionerOnly are the families only the Gateway provisioner
// (--provision-gateways, Kubernetes mode) registers: TestMetricsExported
// requires each declared and absent in directory mode, and e2e/kube's
// TestGatewayProvisioner reads each live.
var ProvisionerOnly = []string{
	"tlsplane_gateway_provisioner_writes_total",
}
