package envoy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// gatewayHoldsOnlyReachedClusters: the Gateway's Envoy holds no cluster
// that its own listeners and route configurations do not send traffic
// to (tlsplane's default --fleet-scope=reached), read from the Envoy's
// own config_dump: not the Services no route of its reaches, nor another
// fleet's, nor the keys their clusters would read.
func gatewayHoldsOnlyReachedClusters(t *testing.T, e *gwEnv, s *summary) {
	var clusters, referenced []string
	err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		var err error
		if clusters, referenced, err = dumpedClusters(e.gwEnvoy); err != nil {
			return err
		}
		var extra []string
		for _, c := range clusters {
			if !slices.Contains(referenced, c) {
				extra = append(extra, c)
			}
		}
		if len(clusters) == 0 {
			return fmt.Errorf("the Gateway's Envoy holds no cluster")
		}
		if len(extra) > 0 {
			return fmt.Errorf("the Gateway's Envoy holds clusters no listener or route of its reaches: %s", strings.Join(extra, ", "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.note("gateway-fleet-holds-only-reached-clusters", "%d clusters, each named by its listeners or routes", len(clusters))
}

// dumpedClusters reads an Envoy's config_dump: the dynamic clusters it
// holds, and the cluster names its dynamic listeners and route
// configurations send traffic to (each "cluster" field, and the name of
// each weighted cluster), typed configs included.
func dumpedClusters(envoy *harness.Envoy) (clusters, referenced []string, err error) {
	body, err := harness.HTTPGet(envoy.AdminURL("/config_dump"))
	if err != nil {
		return nil, nil, err
	}
	var dump struct {
		Configs []map[string]any `json:"configs"`
	}
	if err := json.Unmarshal(body, &dump); err != nil {
		return nil, nil, err
	}
	var walk func(v any, weighted bool)
	walk = func(v any, weighted bool) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "cluster" || weighted && k == "name") {
					referenced = append(referenced, s)
				}
				walk(x, k == "clusters")
			}
		case []any:
			for _, x := range v {
				walk(x, weighted)
			}
		}
	}
	for _, c := range dump.Configs {
		typ, _ := c["@type"].(string)
		switch {
		case strings.HasSuffix(typ, ".ClustersConfigDump"):
			active, _ := c["dynamic_active_clusters"].([]any)
			for _, a := range active {
				if cl, ok := a.(map[string]any)["cluster"].(map[string]any); ok {
					name, _ := cl["name"].(string)
					clusters = append(clusters, name)
				}
			}
		case strings.HasSuffix(typ, ".ListenersConfigDump"), strings.HasSuffix(typ, ".RoutesConfigDump"):
			walk(c, false)
		}
	}
	slices.Sort(clusters)
	slices.Sort(referenced)
	return clusters, slices.Compact(referenced), nil
}
