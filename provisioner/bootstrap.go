package provisioner

import (
	"encoding/json"
	"net"
	"strconv"

	"github.com/tlsplane/tlsplane/sidecar"
)

// Where the Pods find their files.
const (
	bootstrapDir  = "/etc/tlsplane/envoy"
	bootstrapKey  = "bootstrap.json"
	xdsTLSDir     = "/etc/tlsplane/xds-tls"
	xdsCluster    = "tlsplane"
	adminCluster  = "envoy_admin"
	readyListener = "ready"
)

// envoyPorts are the ports an Envoy Pod uses besides its Gateway's.
type envoyPorts struct {
	// Admin listens on 127.0.0.1 only.
	Admin int32
	// Ready serves only GET /ready of the admin, on every address, for
	// the kubelet's readiness probe.
	Ready int32
}

// bootstrap is the Envoy bootstrap of fleet "<namespace>/<name>": ADS
// (delta) to tlsplane for listeners and clusters, counters to its metrics
// service, admin on loopback; the node id comes from --service-node.
func bootstrap(fleet string, cfg Config, ports envoyPorts) ([]byte, error) {
	type object = map[string]any
	host, portText, err := net.SplitHostPort(cfg.XDSAddress)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, err
	}
	socket := func(host string, port int) object {
		return object{"socket_address": object{"address": host, "port_value": port}}
	}
	endpoint := func(cluster string, addr object) object {
		return object{"cluster_name": cluster, "endpoints": []object{{"lb_endpoints": []object{{"endpoint": object{"address": addr}}}}}}
	}
	h2 := object{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": object{
		"@type":                "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
		"explicit_http_config": object{"http2_protocol_options": object{}},
	}}
	xds := object{
		"name":                             xdsCluster,
		"type":                             "STRICT_DNS",
		"connect_timeout":                  "5s",
		"typed_extension_protocol_options": h2,
		"load_assignment":                  endpoint(xdsCluster, socket(host, port)),
	}
	if cfg.XDSClientSecret != "" {
		xds["transport_socket"] = xdsTLS(host)
	}
	admin := object{
		"name":            adminCluster,
		"type":            "STATIC",
		"connect_timeout": "1s",
		"load_assignment": endpoint(adminCluster, socket("127.0.0.1", int(ports.Admin))),
	}
	ads := object{"ads": object{}, "resource_api_version": "V3"}
	boot := object{
		"node":  object{"cluster": fleet},
		"admin": object{"address": socket("127.0.0.1", int(ports.Admin))},
		"dynamic_resources": object{
			"ads_config": object{
				"api_type":                       "DELTA_GRPC",
				"transport_api_version":          "V3",
				"set_node_on_first_message_only": true,
				"grpc_services":                  []object{{"envoy_grpc": object{"cluster_name": xdsCluster}}},
			},
			"cds_config": ads,
			"lds_config": ads,
		},
		"static_resources": object{
			"clusters":  []object{xds, admin},
			"listeners": []object{readinessListener(socket("0.0.0.0", int(ports.Ready)))},
		},
		"stats_flush_interval": "5s",
		"stats_sinks": []object{{
			"name": "envoy.stat_sinks.metrics_service",
			"typed_config": object{
				"@type":                 "type.googleapis.com/envoy.config.metrics.v3.MetricsServiceConfig",
				"transport_api_version": "V3",
				"batch_size":            1000,
				"grpc_service":          object{"envoy_grpc": object{"cluster_name": xdsCluster}},
			},
		}},
		"stats_config": object{"stats_matcher": object{"inclusion_list": object{"patterns": []object{
			{"safe_regex": object{"regex": sidecar.StatsCounterRegex}},
		}}}},
	}
	return json.MarshalIndent(boot, "", "  ")
}

// xdsTLS is mutual TLS towards tlsplane with the mounted client Secret:
// its ca.crt must have issued tlsplane's certificate, which must name host.
func xdsTLS(host string) map[string]any {
	type object = map[string]any
	san := object{"san_type": "DNS", "matcher": object{"exact": host}}
	if net.ParseIP(host) != nil {
		san["san_type"] = "IP_ADDRESS"
	}
	tls := object{
		"@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
		"common_tls_context": object{
			"alpn_protocols": []string{"h2"},
			"tls_params":     object{"tls_minimum_protocol_version": "TLSv1_2"},
			"tls_certificates": []object{{
				"certificate_chain": object{"filename": xdsTLSDir + "/tls.crt"},
				"private_key":       object{"filename": xdsTLSDir + "/tls.key"},
			}},
			"validation_context": object{
				"trusted_ca":                    object{"filename": xdsTLSDir + "/ca.crt"},
				"match_typed_subject_alt_names": []object{san},
			},
		},
	}
	if net.ParseIP(host) == nil {
		tls["sni"] = host // SNI carries names only
	}
	return object{"name": "envoy.transport_sockets.tls", "typed_config": tls}
}

// readinessListener answers GET /ready from the admin (200 once Envoy has
// its listeners and clusters) and nothing else: the admin stays on
// loopback, and the kubelet probes the Pod's address.
func readinessListener(addr map[string]any) map[string]any {
	type object = map[string]any
	routes := []object{
		{"match": object{"path": "/ready", "headers": []object{{"name": ":method", "string_match": object{"exact": "GET"}}}},
			"route": object{"cluster": adminCluster}},
		{"match": object{"prefix": "/"}, "direct_response": object{"status": 404}},
	}
	hcm := object{
		"@type":       "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
		"stat_prefix": readyListener,
		"route_config": object{
			"name":          readyListener,
			"virtual_hosts": []object{{"name": readyListener, "domains": []string{"*"}, "routes": routes}},
		},
		"http_filters": []object{{
			"name":         "envoy.filters.http.router",
			"typed_config": object{"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"},
		}},
	}
	return object{
		"name":    readyListener,
		"address": addr,
		"filter_chains": []object{{"filters": []object{{
			"name": "envoy.filters.network.http_connection_manager", "typed_config": hcm,
		}}}},
	}
}
