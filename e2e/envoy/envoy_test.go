package envoy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clusterHeader names the cluster a request goes to: the test listener's
// route takes it from there (route action cluster_header).
const clusterHeader = "x-tlsplane-cluster"

// The Envoy node; its cluster is the fleet tlsplane serves.
const (
	envoyNodeID    = "e2e-envoy"
	envoyNodeFleet = "e2e"
)

// envoyProxy is the running Envoy and its loopback ports.
type envoyProxy struct {
	proc         *process
	adminPort    int
	listenerPort int
}

// bootstrap is Envoy's whole static configuration: ADS to tlsplane, one
// listener routing by header, admin on loopback.
// apiType is "GRPC" (state of the world) or "DELTA_GRPC" (incremental).
func bootstrap(apiType string, xdsPort, adminPort, listenerPort int) object {
	addr := func(port int) object {
		return object{"socket_address": object{"address": "127.0.0.1", "port_value": port}}
	}
	router := object{
		"name":         "envoy.filters.http.router",
		"typed_config": object{"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"},
	}
	accessLog := object{
		"name": "envoy.access_loggers.stdout",
		"typed_config": object{
			"@type": "type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog",
			"log_format": object{"text_format_source": object{"inline_string": "ACCESS [%START_TIME%] %REQ(" + clusterHeader + ")% %REQ(:PATH)% %RESPONSE_CODE% %RESPONSE_FLAGS% " +
				"proto=%UPSTREAM_PROTOCOL% upstream=%UPSTREAM_HOST% tls_failure=\"%UPSTREAM_TRANSPORT_FAILURE_REASON%\"\n"}},
		},
	}
	hcm := object{
		"@type":       "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
		"stat_prefix": "e2e",
		"access_log":  []object{accessLog},
		"route_config": object{
			"name": "e2e",
			"virtual_hosts": []object{{
				"name":    "all",
				"domains": []string{"*"},
				"routes": []object{{
					"match": object{"prefix": "/"},
					"route": object{"cluster_header": clusterHeader, "timeout": "5s"},
				}},
			}},
		},
		"http_filters": []object{router},
	}
	return object{
		"node":  object{"id": envoyNodeID, "cluster": envoyNodeFleet},
		"admin": object{"address": addr(adminPort)},
		"dynamic_resources": object{
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
		},
		"static_resources": object{
			"listeners": []object{{
				"name":    "e2e",
				"address": addr(listenerPort),
				"filter_chains": []object{{"filters": []object{{
					"name":         "envoy.filters.network.http_connection_manager",
					"typed_config": hcm,
				}}}},
			}},
			"clusters": []object{{
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
						"endpoint": object{"address": addr(xdsPort)},
					}}}},
				},
			}},
		},
	}
}

func startEnvoy(t *testing.T, e *env) *envoyProxy {
	t.Helper()
	p := &envoyProxy{adminPort: freePort(t), listenerPort: freePort(t)}
	b, err := json.MarshalIndent(bootstrap(e.apiType, e.xdsPort, p.adminPort, p.listenerPort), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.logDir, "envoy-bootstrap.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p.proc = start(t, e.logDir, "envoy", e.envoyBin,
		"-c", path, "--disable-hot-restart", "--concurrency", "1", "-l", "info",
		"--drain-time-s", "1")
	waitReady(t, p.proc, p.adminURL("/ready"), 60*time.Second)
	return p
}

func (p *envoyProxy) adminURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(p.adminPort) + path
}

// stats reads Envoy's counters and gauges (histograms are skipped).
func (p *envoyProxy) stats() (map[string]int64, error) {
	body, err := httpGet(p.adminURL("/stats"))
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			out[name] = n
		}
	}
	return out, sc.Err()
}

// clusterView is what Envoy holds for one cluster, from its admin.
type clusterView struct {
	active, warming bool
	hasTLS          bool
	sni             string
	caSecret        string // the SDS secret holding the CA bundle, if any
	hostPorts       []int  // endpoint ports /clusters lists
	raw             string // the cluster as config_dump shows it
}

func (c clusterView) String() string {
	return fmt.Sprintf("active=%v warming=%v tls=%v sni=%q endpoints=%v", c.active, c.warming, c.hasTLS, c.sni, c.hostPorts)
}

// cluster reads one dynamic cluster from config_dump and /clusters.
func (p *envoyProxy) cluster(name string) (clusterView, error) {
	var v clusterView
	for _, state := range []string{"dynamic_active_clusters", "dynamic_warming_clusters"} {
		body, err := httpGet(p.adminURL("/config_dump?resource=" + state))
		if err != nil {
			return v, err
		}
		var dump struct {
			Configs []struct {
				Cluster json.RawMessage `json:"cluster"`
			} `json:"configs"`
		}
		if err := json.Unmarshal(body, &dump); err != nil {
			return v, fmt.Errorf("config_dump %s: %w", state, err)
		}
		for _, c := range dump.Configs {
			var cl struct {
				Name            string `json:"name"`
				TransportSocket *struct {
					TypedConfig struct {
						SNI    string `json:"sni"`
						Common struct {
							Combined struct {
								SDS struct {
									Name string `json:"name"`
								} `json:"validation_context_sds_secret_config"`
							} `json:"combined_validation_context"`
						} `json:"common_tls_context"`
					} `json:"typed_config"`
				} `json:"transport_socket"`
			}
			if err := json.Unmarshal(c.Cluster, &cl); err != nil || cl.Name != name {
				continue
			}
			if state == "dynamic_active_clusters" {
				v.active = true
			} else {
				v.warming = true
			}
			v.raw = string(c.Cluster)
			if cl.TransportSocket != nil {
				v.hasTLS = true
				v.sni = cl.TransportSocket.TypedConfig.SNI
				v.caSecret = cl.TransportSocket.TypedConfig.Common.Combined.SDS.Name
			}
		}
	}
	body, err := httpGet(p.adminURL("/clusters?format=json"))
	if err != nil {
		return v, err
	}
	var cs struct {
		ClusterStatuses []struct {
			Name         string `json:"name"`
			HostStatuses []struct {
				Address struct {
					SocketAddress struct {
						PortValue int `json:"port_value"`
					} `json:"socket_address"`
				} `json:"address"`
			} `json:"host_statuses"`
		} `json:"cluster_statuses"`
	}
	if err := json.Unmarshal(body, &cs); err != nil {
		return v, fmt.Errorf("/clusters: %w", err)
	}
	for _, c := range cs.ClusterStatuses {
		if c.Name == name {
			for _, h := range c.HostStatuses {
				v.hostPorts = append(v.hostPorts, h.Address.SocketAddress.PortValue)
			}
		}
	}
	return v, nil
}

// resourceVersions maps every dynamic resource Envoy holds ("cds/NAME",
// "eds/NAME", "sds/NAME") to the version it was last sent with.
func (p *envoyProxy) resourceVersions() (map[string]string, error) {
	body, err := httpGet(p.adminURL("/config_dump?include_eds"))
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
