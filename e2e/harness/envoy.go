package harness

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ClusterHeader names the cluster a request goes to: the test listener's
// route takes it from there (route action cluster_header).
const ClusterHeader = "x-tlsplane-cluster"

// EnvoyOptions say how one Envoy is started.
type EnvoyOptions struct {
	Bin    string
	LogDir string
	// Name names the log and the bootstrap file; "envoy" when empty.
	Name string
	// APIType is the ADS flavour: "GRPC" (state of the world, the default)
	// or "DELTA_GRPC" (incremental).
	APIType string
	// NodeID and Fleet are the Envoy node's id and cluster; tlsplane serves
	// the fleet's snapshot.
	NodeID, Fleet string
	// XDSAddress is tlsplane's xDS listener, host:port.
	XDSAddress string
	// StatPrefix is the test listener's; "e2e" when empty.
	StatPrefix string
	// XDSTLS, when set, is the client side of TLS on the ADS cluster.
	XDSTLS *XDSTLS
	// WaitReady waits for /ready (an Envoy that never gets its clusters is
	// never ready).
	WaitReady bool
	// GatewayListeners makes the listeners tlsplane's: LDS over ADS and no
	// static test listener, as an Envoy serving a Gateway is configured
	// (its fleet is then "<namespace>/<gateway>").
	GatewayListeners bool
	// StatsFlush, when set, adds the metrics service stat sink to tlsplane,
	// flushing this often, with stats limited to the counters tlsplane reads
	// (StatsSink); admin /stats then shows only those.
	StatsFlush time.Duration
	// AllStats keeps every stat with StatsFlush (admin /stats shows them
	// all, and all are sent), for a test that reads others too.
	AllStats bool
	// DNSResolver, when set (host:port, as StartDNS's Addr), is the one DNS
	// server Envoy asks, for every DNS cluster (LOGICAL_DNS, STRICT_DNS):
	// the bootstrap's c-ares resolver, without /etc/resolv.conf's servers
	// or search domains.
	DNSResolver string
}

// XDSTLS is the client side of (mutual) TLS on the ADS cluster, as
// docs/security.md shows it. Without CertFile, Envoy sends no certificate.
type XDSTLS struct {
	CertFile, KeyFile, CAFile string
	// ServerName is both the SNI sent and the DNS SAN required of tlsplane.
	ServerName string
}

// Envoy is a running Envoy and its loopback ports.
type Envoy struct {
	*Process
	AdminPort, ListenerPort int
}

// StartEnvoy writes the bootstrap and starts Envoy on free loopback ports.
func StartEnvoy(t testing.TB, o EnvoyOptions) *Envoy {
	t.Helper()
	if o.Name == "" {
		o.Name = "envoy"
	}
	e := &Envoy{AdminPort: FreePort(t), ListenerPort: FreePort(t)}
	boot, err := Bootstrap(o, e.AdminPort, e.ListenerPort)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(boot, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(o.LogDir, o.Name+"-bootstrap.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// --base-id keeps two Envoys' shared memory apart.
	e.Process = Start(t, o.LogDir, o.Name, o.Bin, "-c", path, "--disable-hot-restart",
		"--base-id", strconv.Itoa(e.ListenerPort), "--concurrency", "1", "-l", "info", "--drain-time-s", "1")
	if o.WaitReady {
		WaitReady(t, e.Process, e.AdminURL("/ready"), 60*time.Second)
	}
	return e
}

// Bootstrap is Envoy's whole static configuration: ADS to tlsplane, one
// listener routing by ClusterHeader with an access log on stdout (or, with
// GatewayListeners, listeners over ADS instead), admin on loopback.
func Bootstrap(o EnvoyOptions, adminPort, listenerPort int) (map[string]any, error) {
	type object = map[string]any
	xdsHost, xdsPort, err := hostPort("xDS address", o.XDSAddress)
	if err != nil {
		return nil, err
	}
	apiType := o.APIType
	if apiType == "" {
		apiType = "GRPC"
	}
	statPrefix := o.StatPrefix
	if statPrefix == "" {
		statPrefix = "e2e"
	}
	addr := func(host string, port int) object {
		return object{"socket_address": object{"address": host, "port_value": port}}
	}
	router := object{
		"name":         "envoy.filters.http.router",
		"typed_config": object{"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"},
	}
	accessLog := object{
		"name": "envoy.access_loggers.stdout",
		"typed_config": object{
			"@type": "type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog",
			"log_format": object{"text_format_source": object{"inline_string": "ACCESS [%START_TIME%] %REQ(" + ClusterHeader + ")% %REQ(:PATH)% %RESPONSE_CODE% %RESPONSE_FLAGS% " +
				"proto=%UPSTREAM_PROTOCOL% upstream=%UPSTREAM_HOST% tls_failure=\"%UPSTREAM_TRANSPORT_FAILURE_REASON%\"\n"}},
		},
	}
	hcm := object{
		"@type":       "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
		"stat_prefix": statPrefix,
		"access_log":  []object{accessLog},
		"route_config": object{
			"name": statPrefix,
			"virtual_hosts": []object{{
				"name":    "all",
				"domains": []string{"*"},
				"routes": []object{{
					"match": object{"prefix": "/"},
					"route": object{"cluster_header": ClusterHeader, "timeout": "5s"},
				}},
			}},
		},
		"http_filters": []object{router},
	}
	xdsCluster := object{
		"name":            "tlsplane",
		"type":            "STATIC",
		"connect_timeout": "1s",
		"typed_extension_protocol_options": object{
			"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": object{
				"@type":                "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
				"explicit_http_config": object{"http2_protocol_options": object{}},
			},
		},
		"load_assignment": object{
			"cluster_name": "tlsplane",
			"endpoints": []object{{"lb_endpoints": []object{{
				"endpoint": object{"address": addr(xdsHost, xdsPort)},
			}}}},
		},
	}
	if x := o.XDSTLS; x != nil {
		common := object{
			"alpn_protocols": []string{"h2"},
			"tls_params":     object{"tls_minimum_protocol_version": "TLSv1_2"},
			"validation_context": object{
				"trusted_ca": object{"filename": x.CAFile},
				"match_typed_subject_alt_names": []object{{
					"san_type": "DNS", "matcher": object{"exact": x.ServerName},
				}},
			},
		}
		if x.CertFile != "" {
			common["tls_certificates"] = []object{{
				"certificate_chain": object{"filename": x.CertFile},
				"private_key":       object{"filename": x.KeyFile},
			}}
		}
		xdsCluster["transport_socket"] = object{
			"name": "envoy.transport_sockets.tls",
			"typed_config": object{
				"@type":              "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
				"sni":                x.ServerName,
				"common_tls_context": common,
			},
		}
	}
	dynamic := object{
		"ads_config": object{
			"api_type":              apiType,
			"transport_api_version": "V3",
			"grpc_services": []object{{"envoy_grpc": object{
				"cluster_name": "tlsplane",
				// Reconnect fast after a tlsplane restart; tests wait for it.
				"retry_policy": object{"retry_back_off": object{"base_interval": "0.25s", "max_interval": "1s"}},
			}}},
			"set_node_on_first_message_only": true,
		},
		"cds_config": object{"ads": object{}, "resource_api_version": "V3"},
	}
	static := object{"clusters": []object{xdsCluster}}
	if o.GatewayListeners {
		dynamic["lds_config"] = object{"ads": object{}, "resource_api_version": "V3"}
	} else {
		static["listeners"] = []object{{
			"name":    statPrefix,
			"address": addr("127.0.0.1", listenerPort),
			"filter_chains": []object{{"filters": []object{{
				"name":         "envoy.filters.network.http_connection_manager",
				"typed_config": hcm,
			}}}},
		}}
	}
	boot := object{
		"node":              object{"id": o.NodeID, "cluster": o.Fleet},
		"admin":             object{"address": addr("127.0.0.1", adminPort)},
		"dynamic_resources": dynamic,
		"static_resources":  static,
	}
	if o.StatsFlush > 0 {
		for k, v := range StatsSink(o.StatsFlush) {
			boot[k] = v
		}
		if o.AllStats {
			delete(boot, "stats_config")
		}
	}
	if o.DNSResolver != "" {
		host, port, err := hostPort("DNS resolver", o.DNSResolver)
		if err != nil {
			return nil, err
		}
		boot["typed_dns_resolver_config"] = object{
			"name": "envoy.network.dns_resolver.cares",
			"typed_config": object{
				"@type":                     "type.googleapis.com/envoy.extensions.network.dns_resolver.cares.v3.CaresDnsResolverConfig",
				"resolvers":                 []object{addr(host, port)},
				"use_resolvers_as_fallback": false,
				"dns_resolver_options":      object{"no_default_search_domain": true},
			},
		}
	}
	return boot, nil
}

// hostPort splits an address host:port, what naming it in the error.
func hostPort(what, address string) (string, int, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, fmt.Errorf("%s %q: %w", what, address, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return "", 0, fmt.Errorf("%s %q: %w", what, address, err)
	}
	return host, port, nil
}

// StatsCounterRegex matches the per-cluster counters tlsplane reads from
// Envoy's metrics service, as examples/envoy.yaml limits them.
const StatsCounterRegex = `^cluster\..+\.(ssl\.(fail_verify_error|fail_verify_san|fail_verify_cert_hash|connection_error|handshake)|upstream_cx_connect_fail)$`

// StatsSink is the bootstrap's part that streams those counters to tlsplane
// (the static cluster "tlsplane", as ADS) every flush.
func StatsSink(flush time.Duration) map[string]any {
	type object = map[string]any
	return object{
		"stats_flush_interval": fmt.Sprintf("%gs", flush.Seconds()),
		"stats_config": object{"stats_matcher": object{"inclusion_list": object{"patterns": []object{
			{"safe_regex": object{"regex": StatsCounterRegex}},
		}}}},
		"stats_sinks": []object{{
			"name": "envoy.stat_sinks.metrics_service",
			"typed_config": object{
				"@type":                 "type.googleapis.com/envoy.config.metrics.v3.MetricsServiceConfig",
				"transport_api_version": "V3",
				// Tiny batches: every flush spans several messages, as a
				// large fleet's does with the example's batch_size.
				"batch_size":   2,
				"grpc_service": object{"envoy_grpc": object{"cluster_name": "tlsplane"}},
			},
		}},
	}
}

// AdminURL is the admin endpoint path.
func (e *Envoy) AdminURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(e.AdminPort) + path
}

// ListenerURL is path on the test listener.
func (e *Envoy) ListenerURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(e.ListenerPort) + path
}

// Stats reads Envoy's counters and gauges (histograms are skipped).
func (e *Envoy) Stats() (map[string]int64, error) {
	return StatsAt(e.AdminPort)
}

// StatsAt reads the counters and gauges of the Envoy whose admin is on
// adminPort.
func StatsAt(adminPort int) (map[string]int64, error) {
	body, err := HTTPGet("http://127.0.0.1:" + strconv.Itoa(adminPort) + "/stats")
	if err != nil {
		return nil, err
	}
	return ParseStats(body)
}

// SumStats adds every stat named prefix…suffix.
func SumStats(stats map[string]int64, prefix, suffix string) int64 {
	var n int64
	for k, v := range stats {
		if strings.HasPrefix(k, prefix) && strings.HasSuffix(k, suffix) {
			n += v
		}
	}
	return n
}

// ResourceVersions maps every dynamic resource Envoy holds ("cds/NAME",
// "eds/NAME", "sds/NAME") to the version it was last sent with.
func (e *Envoy) ResourceVersions() (map[string]string, error) {
	body, err := HTTPGet(e.AdminURL("/config_dump?include_eds"))
	if err != nil {
		return nil, err
	}
	var dump struct {
		Configs []struct {
			Clusters []struct {
				VersionInfo string `json:"version_info"`
				Cluster     struct {
					Name string `json:"name"`
				} `json:"cluster"`
			} `json:"dynamic_active_clusters"`
			Secrets []struct {
				Name        string `json:"name"`
				VersionInfo string `json:"version_info"`
			} `json:"dynamic_active_secrets"`
			Endpoints []struct {
				VersionInfo    string `json:"version_info"`
				EndpointConfig struct {
					ClusterName string `json:"cluster_name"`
				} `json:"endpoint_config"`
			} `json:"dynamic_endpoint_configs"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(body, &dump); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, c := range dump.Configs {
		for _, r := range c.Clusters {
			out["cds/"+r.Cluster.Name] = r.VersionInfo
		}
		for _, r := range c.Secrets {
			out["sds/"+r.Name] = r.VersionInfo
		}
		for _, r := range c.Endpoints {
			out["eds/"+r.EndpointConfig.ClusterName] = r.VersionInfo
		}
	}
	return out, nil
}
