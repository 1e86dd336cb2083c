package envoy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The XBackend an XBackendTrafficPolicy targets: a plaintext backend on
// xbBudgetHost that answers 503 after a delay, and an HTTPRoute retrying
// 503 twice.
const (
	xbBudgetHost    = "budget.xb.test"
	xbBudget        = "budget"
	xbBudgetMinimum = 1000 // minRetryRate.count: min_retry_concurrency
)

// budgetObjects are the XBackend budget on the failing backend's port, its
// route, and the XBackendTrafficPolicy giving it a retry budget of 100%,
// at least 1000 concurrent retries.
func (w *xbWorld) budgetObjects() []object {
	route := xbRoute("HTTPRoute", xbNS, xbBudget, xbGateway, "http", []string{xbRouteHost(xbBudget)}, xbRef(xbBudget, w.failingPort))
	route["spec"].(object)["rules"].([]object)[0]["retry"] = object{"codes": []int{503}, "attempts": 2}
	return []object{
		xbackend{name: xbBudget, hostname: xbBudgetHost, port: w.failingPort}.object(xbNS),
		route,
		{
			"apiVersion": "gateway.networking.x-k8s.io/v1alpha1", "kind": "XBackendTrafficPolicy",
			"metadata": object{"namespace": xbNS, "name": xbBudget, "generation": 1},
			"spec": object{
				"targetRefs":      []object{{"group": xbGroup, "kind": "XBackend", "name": xbBudget}},
				"retryConstraint": object{"budget": object{"percent": 100}, "minRetryRate": object{"count": xbBudgetMinimum}},
			},
		},
	}
}

// xbTrafficBudget: an XBackendTrafficPolicy's retry budget is on the
// XBackend's cluster (Envoy's /config_dump shows its circuit breaker's
// retry_budget), and it governs the retries: 20 concurrent failing
// requests, each retried, overflow nothing, where Envoy's default retry
// circuit breaker (3 retries in flight), which a budget replaces, would
// refuse most of them.
func xbTrafficBudget(t *testing.T, w *xbWorld) {
	cluster := xbCluster(xbBudget, w.failingPort)
	w.await(t, xbBudget, w.get(xbBudget), status(503))
	var budget json.RawMessage
	if err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		var err error
		budget, err = retryBudgetOn(w.gwEnvoy, cluster)
		return err
	}); err != nil {
		t.Fatalf("%s: %v", cluster, err)
	}
	var shown bytes.Buffer
	_ = json.Compact(&shown, budget)
	t.Logf("%s: Envoy's /config_dump shows the retry budget %s", cluster, shown.String())
	before, err := w.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = w.get(xbBudget)()
		}()
	}
	wg.Wait()
	after, err := w.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	delta := func(stat string) int64 {
		prefix := "cluster." + cluster + "."
		return harness.SumStats(after, prefix, stat) - harness.SumStats(before, prefix, stat)
	}
	retried, refused := delta(".upstream_rq_retry"), delta(".upstream_rq_retry_overflow")
	t.Logf("%s: 20 concurrent failing requests: %d retries, %d refused", cluster, retried, refused)
	if refused != 0 || retried < 20 {
		t.Errorf("%s: %d retries, %d refused by the circuit breaker; want at least 20 and none refused under a budget of 100%% (at least %d)", cluster, retried, refused, xbBudgetMinimum)
	}
}

// retryBudgetOn is the retry budget of the circuit breaker of cluster as
// Envoy's /config_dump shows it (/clusters leaves budgets out), or an
// error naming what it shows.
func retryBudgetOn(e *harness.Envoy, cluster string) (json.RawMessage, error) {
	body, err := harness.HTTPGet(e.AdminURL("/config_dump?resource=dynamic_active_clusters"))
	if err != nil {
		return nil, err
	}
	var dump struct {
		Configs []struct {
			Cluster struct {
				Name            string `json:"name"`
				CircuitBreakers struct {
					Thresholds []struct {
						RetryBudget json.RawMessage `json:"retry_budget"`
					} `json:"thresholds"`
				} `json:"circuit_breakers"`
			} `json:"cluster"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(body, &dump); err != nil {
		return nil, err
	}
	for _, c := range dump.Configs {
		if c.Cluster.Name != cluster {
			continue
		}
		for _, th := range c.Cluster.CircuitBreakers.Thresholds {
			var b struct {
				MinRetryConcurrency uint32 `json:"min_retry_concurrency"`
			}
			if len(th.RetryBudget) > 0 && json.Unmarshal(th.RetryBudget, &b) == nil && b.MinRetryConcurrency == xbBudgetMinimum {
				return th.RetryBudget, nil
			}
		}
		return nil, fmt.Errorf("Envoy has cluster %s with circuit breakers %+v, no retry budget of min_retry_concurrency %d", cluster, c.Cluster.CircuitBreakers, xbBudgetMinimum)
	}
	return nil, fmt.Errorf("Envoy has no cluster %s", cluster)
}
