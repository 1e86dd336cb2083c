package perf

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

var statsReadCost = flag.Bool("perf.statsread", false, "run TestStatsReadCost (needs the tlsplane and Envoy binaries)")

// TestStatsReadCost times reads of an idle Envoy's stats, one query form
// at a time, at each -perf.clusters size: what one poll of TestPropagation
// costs Envoy's main thread, the thread that applies xDS.
func TestStatsReadCost(t *testing.T) {
	if !*statsReadCost {
		t.Skip("a measurement: run with -perf.statsread")
	}
	tlsplaneBin, envoyBin := measuredBinaries(t)
	watched := url.QueryEscape(`^(cluster_manager\.cluster_modified|cluster_manager\.warming_clusters)$`)
	secret := url.QueryEscape(`^(sds\.` + strings.ReplaceAll(caSecretName(3), ".", `\.`) + `\.update_success)$`)
	queries := []string{
		"/stats?filter=" + watched,
		"/stats?filter=" + secret,
		"/stats?filter=" + watched + "&usedonly",
		"/stats?filter=" + watched + "&format=json",
		"/stats?filter=" + watched + "&type=Counters",
		"/stats?type=Gauges",
		"/stats?type=Histograms",
		"/stats?filter=matches-nothing",
		"/stats",
		"/stats/prometheus?filter=" + watched,
		"/stats/prometheus?filter=" + secret,
		"/stats/prometheus?filter=matches-nothing",
		"/stats/prometheus",
	}
	for _, s := range strings.Split(*clusterList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			t.Fatalf("-perf.clusters: %q", s)
		}
		t.Run(fmt.Sprintf("clusters=%d", n), func(t *testing.T) {
			dir := t.TempDir()
			manifests := filepath.Join(dir, "manifests")
			if err := os.Mkdir(manifests, 0o755); err != nil {
				t.Fatal(err)
			}
			ca := string(harness.NewAuthority(t, "perf-ca-one").PEM)
			for i := range n {
				writeService(t, manifests, i, ca, 0, 0)
			}
			served := serveDir(t, dir, manifests, tlsplaneBin, envoyBin, *apiType, n)
			time.Sleep(2 * time.Second) // let the last updates' work settle
			for _, q := range queries {
				const reads = 7
				var took []float64
				var size int
				for range reads {
					start := time.Now()
					resp, err := httpClient.Get(served.admin.base + q)
					if err != nil {
						t.Fatal(err)
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != 200 {
						t.Fatalf("%s: %v %s", q, err, resp.Status)
					}
					took = append(took, float64(time.Since(start).Microseconds())/1000)
					size = len(b)
				}
				slices.Sort(took)
				t.Logf("clusters=%d median=%6.1fms min=%6.1fms bytes=%7d %s", n, took[reads/2], took[0], size, q)
			}
			t.Logf("load=%s", loadAverage())
		})
	}
}
