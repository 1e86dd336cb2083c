package xds

import (
	"strings"
	"time"

	prommodel "github.com/prometheus/client_model/go"
)

// ReadCounters are the per-cluster Envoy counters tlsplane reads from the
// metrics service, by their name after "cluster.<name>.". Every other
// statistic is skipped, so the bootstrap's stats matcher and this list
// are the cost of the feature.
var ReadCounters = []string{
	"ssl.fail_verify_error",
	"ssl.fail_verify_san",
	"ssl.fail_verify_cert_hash",
	"ssl.connection_error",
	"ssl.handshake",
	"upstream_cx_connect_fail",
}

// clusterTagLabels name the cluster tag when Envoy emits tags as labels
// (emit_tags_as_labels); Envoy's tag is envoy.cluster_name.
var clusterTagLabels = []string{"envoy.cluster_name", "envoy_cluster_name"}

// ClusterStats is one report of one Envoy: the cumulative value of each
// counter in ReadCounters, per cluster its fleet is served.
type ClusterStats struct {
	NodeID, Fleet string
	// Flush is when Envoy took the snapshot (the metrics' timestamp_ms):
	// the batches of one flush (batch_size) share it. Zero when absent.
	Flush time.Time
	// Counters maps a cluster to counter name to cumulative value.
	Counters map[string]map[string]uint64
}

// clusterCounters reads the counters tlsplane uses out of Envoy's metric
// families, as Envoy names them with or without tags as labels, and the
// latest timestamp among them. Unknown names, and non-counters, are skipped.
func clusterCounters(families []*prommodel.MetricFamily) (map[string]map[string]uint64, time.Time) {
	out := map[string]map[string]uint64{}
	var latest int64
	for _, f := range families {
		if f.GetType() != prommodel.MetricType_COUNTER {
			continue
		}
		for _, m := range f.GetMetric() {
			cluster, counter, ok := splitClusterStat(f.GetName(), m.GetLabel())
			if !ok {
				continue
			}
			latest = max(latest, m.GetTimestampMs())
			v := m.GetCounter().GetValue()
			if v < 0 {
				continue
			}
			if out[cluster] == nil {
				out[cluster] = map[string]uint64{}
			}
			out[cluster][counter] = uint64(v)
		}
	}
	if latest == 0 {
		return out, time.Time{}
	}
	return out, time.UnixMilli(latest)
}

// splitClusterStat finds the cluster and counter of a stat named
// cluster.<cluster>.<counter>, or cluster.<counter> with the cluster in a
// label. Cluster names hold dots and slashes, so the known counter suffix
// is matched, never a dot searched for.
func splitClusterStat(name string, labels []*prommodel.LabelPair) (cluster, counter string, ok bool) {
	rest, ok := strings.CutPrefix(name, "cluster.")
	if !ok {
		return "", "", false
	}
	for _, c := range ReadCounters {
		if rest == c {
			for _, l := range labels {
				for _, tag := range clusterTagLabels {
					if l.GetName() == tag && l.GetValue() != "" {
						return l.GetValue(), c, true
					}
				}
			}
			return "", "", false
		}
		if cl, found := strings.CutSuffix(rest, "."+c); found && cl != "" {
			return cl, c, true
		}
	}
	return "", "", false
}
