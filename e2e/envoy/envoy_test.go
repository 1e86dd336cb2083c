package envoy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The Envoy node; its cluster is the fleet tlsplane serves.
const (
	envoyNodeID    = "e2e-envoy"
	envoyNodeFleet = "e2e"
)

// envoyProxy is the running Envoy; cluster reads what it holds.
type envoyProxy struct{ *harness.Envoy }

func startEnvoy(t *testing.T, e *env) *envoyProxy {
	t.Helper()
	return &envoyProxy{harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, APIType: e.apiType,
		NodeID: envoyNodeID, Fleet: envoyNodeFleet, XDSAddress: "127.0.0.1:" + strconv.Itoa(e.xdsPort),
		WaitReady: true,
	})}
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
		body, err := harness.HTTPGet(p.AdminURL("/config_dump?resource=" + state))
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
	body, err := harness.HTTPGet(p.AdminURL("/clusters?format=json"))
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
