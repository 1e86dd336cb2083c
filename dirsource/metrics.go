package dirsource

import "github.com/prometheus/client_golang/prometheus"

// metrics tell an operator that a file is being ignored, which the served
// configuration alone cannot show: the last good objects stay served.
type metrics struct {
	fileErrors   prometheus.Counter
	failingFiles prometheus.Gauge
	files        prometheus.Gauge
	reloads      prometheus.Counter
	reads        prometheus.Histogram
	walks        prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		fileErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_source_file_errors_total",
			Help: "Manifest files that could not be read or parsed; their last good objects stay served.",
		}),
		failingFiles: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlsplane_source_files_failing",
			Help: "Manifest files whose current content could not be read or parsed.",
		}),
		files: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlsplane_source_files",
			Help: "Manifest files the directory source currently reads.",
		}),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_source_reloads_total",
			Help: "Times the directory source's objects changed after its first read.",
		}),
		reads: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tlsplane_source_read_duration_seconds",
			Help:    "Time of one read of the directory after events or a resync: the paths events named, or a walk of it all.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}),
		// The periodic walk runs beside the event loop (--dir-resync), so
		// its time is not an edit's: it says how stale a dropped event can
		// leave the view, on top of the interval.
		walks: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tlsplane_source_walk_duration_seconds",
			Help:    "Time of one periodic walk of the whole directory (listing and stat of every file), on its own goroutine beside the event loop; its count is the walks made.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 8),
		}),
	}
	if reg != nil {
		reg.MustRegister(m.fileErrors, m.failingFiles, m.files, m.reloads, m.reads, m.walks)
	}
	return m
}
