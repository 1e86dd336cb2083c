package kubechurn

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// envoyGenerations reads, from a real Envoy's config dump, the generation
// of every churned Service's load assignment it holds.
func envoyGenerations(e *harness.Envoy) (map[int]int, error) {
	// A dump of thousands of load assignments is more than the harness's
	// five-second admin client allows on a busy machine.
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get(e.AdminURL("/config_dump?include_eds"))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("config_dump: %s", resp.Status)
	}
	var dump struct {
		Configs []struct {
			Endpoints []struct {
				EndpointConfig struct {
					ClusterName string `json:"cluster_name"`
					Endpoints   []struct {
						LbEndpoints []struct {
							Endpoint struct {
								Address struct {
									SocketAddress struct {
										Address string `json:"address"`
									} `json:"socket_address"`
								} `json:"address"`
							} `json:"endpoint"`
						} `json:"lb_endpoints"`
					} `json:"endpoints"`
				} `json:"endpoint_config"`
			} `json:"dynamic_endpoint_configs"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(body, &dump); err != nil {
		return nil, err
	}
	out := map[int]int{}
	for _, c := range dump.Configs {
		for _, d := range c.Endpoints {
			i, ok := serviceOfCluster(d.EndpointConfig.ClusterName)
			if !ok {
				continue
			}
			for _, l := range d.EndpointConfig.Endpoints {
				for _, lb := range l.LbEndpoints {
					if g, ok := addressGen(lb.Endpoint.Address.SocketAddress.Address); ok {
						out[i] = g
					}
				}
			}
		}
	}
	return out, nil
}

// adminURLer is an Envoy whose admin answers on loopback.
type adminURLer interface{ AdminURL(path string) string }

// envoyClusters reads how many clusters a real Envoy has active and warming.
func envoyClusters(e adminURLer) (active, warming int64, err error) {
	body, err := harness.HTTPGet(e.AdminURL(`/stats?filter=^cluster_manager\.(active|warming)_clusters$`))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		switch name {
		case "cluster_manager.active_clusters":
			active = v
		case "cluster_manager.warming_clusters":
			warming = v
		}
	}
	return active, warming, nil
}
